/**
 * The search drivers behind `glob` and `grep`: a race-free walk ({@link Walk}) on the main thread,
 * in batches separated by yields, with every pattern match done by the interruptible matcher
 * worker ({@link SearchWorker}) under the call's time budget.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as FileIo from "./FileIo.js"
import * as GlobPattern from "./GlobPattern.js"
import * as SafeFs from "./SafeFs.js"
import * as SearchWorker from "./SearchWorker.js"
import * as Walk from "./Walk.js"

/**
 * Files handed to the matcher at once.
 *
 * @since 0.1.0
 * @category constants
 */
export const BATCH_FILES = 256

/**
 * Bytes of file text handed to the matcher at once (a batch closes when it is exceeded).
 *
 * @since 0.1.0
 * @category constants
 */
export const BATCH_BYTES = 4 * 1024 * 1024

const relativeTo = (base: string, rel: string): string => (base === "." ? rel : rel.slice(base.length + 1))

const walking = (options: Walk.WalkOptions, display: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Walk.walk(options)),
    (generator) => Effect.sync(() => generator.return({ incomplete: false }))
  ).pipe(Effect.map((generator) => ({ generator, display })))

/** pulls the next file; `{ done, incomplete }` at the end */
const next = (walker: { readonly generator: ReturnType<typeof Walk.walk>; readonly display: string }) =>
  Effect.try({ try: () => walker.generator.next(), catch: (e) => FileIo.toolError(e, walker.display) })

/**
 * Files under `start` whose path relative to `base` matches the glob `pattern`, with their
 * modification times (unsorted), and whether the walk hit its limit.
 *
 * @since 0.1.0
 * @category execution
 */
export const glob = (options: {
  readonly root: string
  readonly base: string
  readonly start: string
  readonly pattern: string
  /** root-relative paths never shown (see `ReadFilter`) */
  readonly exclude?: ((relative: string) => boolean) | undefined
}) => {
  const regex = GlobPattern.compile(options.pattern)
  return SearchWorker.withMatcher("glob", (matcher) =>
    Effect.scoped(Effect.gen(function*() {
      const walker = yield* walking({ root: options.root, start: options.start, exclude: options.exclude }, options.start)
      const files: Array<{ readonly relative: string; readonly mtime: number }> = []
      let incomplete = false
      let batch: Array<{ readonly relative: string; readonly mtime: number }> = []
      const flush = Effect.gen(function*() {
        if (batch.length === 0) return
        const items = batch.map((f) => relativeTo(options.base, f.relative))
        const indices = yield* SearchWorker.filter(matcher, regex.source, regex.flags, items)
        for (const i of indices) files.push(batch[i]!)
        batch = []
      })
      for (;;) {
        const step = yield* next(walker)
        if (step.done === true) {
          incomplete = step.value.incomplete
          break
        }
        batch.push({ relative: step.value.relative, mtime: step.value.mtime })
        if (batch.length >= 1024) {
          yield* flush
          yield* Effect.yieldNow
        }
      }
      yield* flush
      return { files, incomplete }
    })))
}

/**
 * Options of {@link grep}.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepOptions {
  readonly root: string
  /** root-relative file or directory */
  readonly start: string
  readonly startIsFile: boolean
  readonly regex: RegExp
  readonly glob: string | undefined
  readonly max: number
  readonly maxFileBytes: number
  readonly maxLineChars: number
  /** root-relative paths never shown (see `ReadFilter`) */
  readonly exclude?: ((relative: string) => boolean) | undefined
}

const readText = (dir: SafeFs.Dir, name: string, root: string, maxFileBytes: number): string | undefined => {
  let fd: number
  try {
    fd = SafeFs.openFileAt(dir, name, root, NodeFs.constants.O_RDONLY)
  } catch {
    return undefined // unreadable or replaced meanwhile: skipped
  }
  try {
    const info = NodeFs.fstatSync(fd)
    if (!info.isFile() || info.size > maxFileBytes) return undefined
    const { bytes, truncated } = SafeFs.readBoundedFd(fd, maxFileBytes)
    if (truncated) return undefined
    const n = Math.min(bytes.length, 8192)
    for (let i = 0; i < n; i++) if (bytes[i] === 0) return undefined
    return new TextDecoder("utf-8").decode(bytes)
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** reads a root-relative file race-free (opening its directory afresh); `undefined` to skip it */
const readRelative = (root: string, relative: string, maxFileBytes: number): string | undefined => {
  const segments = relative.split("/")
  const name = segments.pop()!
  try {
    return SafeFs.withDir(root, segments, false, (dir) => readText(dir, name, root, maxFileBytes))
  } catch {
    return undefined // its directory vanished or was replaced by a link meanwhile: skipped
  }
}

/**
 * The matching lines (`path:line:text`, at most `max`), whether more matched, whether the walk
 * hit its limit.
 *
 * @since 0.1.0
 * @category execution
 */
export const grep = (options: GrepOptions) =>
  SearchWorker.withMatcher("grep", (matcher) =>
    Effect.scoped(Effect.gen(function*() {
      const lines: Array<string> = []
      let more = false
      let batch: Array<{ readonly relative: string; readonly text: string }> = []
      let batchBytes = 0
      const flush = Effect.gen(function*() {
        if (batch.length === 0 || more) return
        const found = yield* SearchWorker.grepLines(matcher, {
          source: options.regex.source,
          flags: options.regex.flags,
          files: batch,
          max: options.max - lines.length,
          maxLineChars: options.maxLineChars
        })
        lines.push(...found.lines)
        more = found.more
        batch = []
        batchBytes = 0
      })
      if (options.startIsFile) {
        if (options.exclude !== undefined && options.exclude(options.start)) return { lines, more, incomplete: false }
        const segments = options.start.split("/")
        const name = segments.pop()!
        const text = yield* Effect.try({
          try: () => SafeFs.withDir(options.root, segments, false, (dir) => readText(dir, name, options.root, options.maxFileBytes)),
          catch: (e) => FileIo.toolError(e, options.start)
        })
        if (text !== undefined) batch.push({ relative: options.start, text })
        yield* flush
        return { lines, more, incomplete: false }
      }
      const globRegex = options.glob !== undefined && options.glob !== ""
        ? GlobPattern.compile(options.glob.replace(/^\.\//, ""))
        : undefined
      const byName = options.glob !== undefined && !options.glob.includes("/")
      const walker = yield* walking({ root: options.root, start: options.start, exclude: options.exclude }, options.start)
      let incomplete = false
      let done = false
      while (!more && !done) {
        const paths: Array<string> = []
        while (paths.length < 1024) {
          const step = yield* next(walker)
          if (step.done === true) {
            incomplete = step.value.incomplete
            done = true
            break
          }
          paths.push(step.value.relative)
        }
        let kept: ReadonlyArray<string> = paths
        if (globRegex !== undefined) {
          // the glob is a model-supplied pattern too: matched in the worker
          const items = paths.map((rel) => byName ? rel.slice(rel.lastIndexOf("/") + 1) : relativeTo(options.start, rel))
          const indices = yield* SearchWorker.filter(matcher, globRegex.source, globRegex.flags, items)
          kept = indices.map((i) => paths[i]!)
        }
        for (const rel of kept) {
          if (more) break
          const text = readRelative(options.root, rel, options.maxFileBytes)
          if (text === undefined) continue
          batch.push({ relative: rel, text })
          batchBytes += text.length
          if (batch.length >= BATCH_FILES || batchBytes >= BATCH_BYTES) {
            yield* flush
            yield* Effect.yieldNow
          }
        }
        yield* Effect.yieldNow
      }
      yield* flush
      return { lines, more, incomplete }
    })))
