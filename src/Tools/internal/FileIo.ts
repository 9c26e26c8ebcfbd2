/**
 * File helpers shared by the built-in tools, all race-free through {@link SafeFs} (decision
 * 0010): stat, bounded reads, streamed reads and atomic writes (a temp file created inside the
 * verified directory, then renamed over the name in that directory). Every helper takes the
 * workspace's real root and a resolved path inside it; nothing is opened by its full name.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as NodeFs from "node:fs"
import * as ToolError from "../ToolError.js"
import type * as Workspace from "../Workspace.js"
import * as SafeFs from "./SafeFs.js"

/**
 * Bytes inspected by {@link looksBinary}.
 *
 * @since 0.1.0
 * @category constants
 */
export const SNIFF_BYTES = 8192

/**
 * A buffer looks binary when its first {@link SNIFF_BYTES} bytes contain a NUL byte (the
 * heuristic of git and grep).
 *
 * @since 0.1.0
 * @category predicates
 */
export const looksBinary = (bytes: Uint8Array): boolean => {
  const n = Math.min(bytes.length, SNIFF_BYTES)
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true
  return false
}

/**
 * What the tools need to know about an opened file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  readonly type: "File" | "Directory" | "Other"
  readonly size: number
  /** permission bits and file type */
  readonly mode: number
  readonly mtimeMs: number
}

/**
 * The {@link Info} of a `fs.Stats`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const infoOf = (s: NodeFs.Stats): Info => ({
  type: s.isFile() ? "File" : s.isDirectory() ? "Directory" : "Other",
  size: s.size,
  mode: s.mode,
  mtimeMs: s.mtimeMs
})

/**
 * Maps a thrown Node file-system error (or {@link SafeFs.EscapeError}) on `display` to a
 * readable {@link ToolError.BuiltinToolError}.
 *
 * @since 0.1.0
 * @category errors
 */
export const toolError = (e: unknown, display: string): ToolError.BuiltinToolError => {
  if (e instanceof SafeFs.EscapeError) {
    return ToolError.make("OUTSIDE_WORKSPACE", `access denied: ${display}: ${e.message}`)
  }
  switch (SafeFs.errnoOf(e)) {
    case "ENOENT":
      return ToolError.make("NOT_FOUND", `no such file or directory: ${display}`)
    case "EACCES":
    case "EPERM":
      return ToolError.make("PERMISSION_DENIED", `permission denied: ${display}`)
    case "ELOOP":
      return ToolError.make(
        "OUTSIDE_WORKSPACE",
        `access denied: ${display} became a symbolic link during access; links are not followed there`
      )
    case "ENOTDIR":
      return ToolError.make("NOT_FOUND", `no such file or directory: ${display} (a parent is not a directory)`)
    case "EISDIR":
      return ToolError.make("NOT_A_FILE", `${display} is a directory`)
    default: {
      const code = SafeFs.errnoOf(e)
      return ToolError.make(
        "IO_ERROR",
        `cannot access ${display}: ${e instanceof Error ? e.message : String(e)}${code === undefined ? "" : ` (${code})`}`
      )
    }
  }
}

const sync = <A>(display: string, f: () => A): Effect.Effect<A, ToolError.BuiltinToolError> =>
  Effect.try({ try: f, catch: (e) => toolError(e, display) })

/**
 * Opens a resolved path (file or directory) race-free and read-only; the descriptor is closed
 * when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (root: string, target: Workspace.ResolvedPath) =>
  Effect.acquireRelease(
    sync(target.relative, () => {
      const segments = SafeFs.segmentsOf(root, target.absolute)
      if (segments.length === 0) return SafeFs.openRoot(root).fd
      const name = segments.pop()!
      return SafeFs.withDir(root, segments, false, (dir) => SafeFs.openFileAt(dir, name, root, NodeFs.constants.O_RDONLY))
    }),
    (fd) => Effect.sync(() => NodeFs.closeSync(fd))
  )

/**
 * The {@link Info} of an open descriptor.
 *
 * @since 0.1.0
 * @category utils
 */
export const fstat = (fd: number, display: string) => sync(display, () => infoOf(NodeFs.fstatSync(fd)))

/**
 * Stats a resolved path (race-free: through its verified descriptor).
 *
 * @since 0.1.0
 * @category utils
 */
export const stat = (root: string, target: Workspace.ResolvedPath) =>
  Effect.scoped(Effect.flatMap(open(root, target), (fd) => fstat(fd, target.relative)))

/**
 * Stats a resolved path; `undefined` when it does not exist.
 *
 * @since 0.1.0
 * @category utils
 */
export const statOption = (root: string, target: Workspace.ResolvedPath) =>
  stat(root, target).pipe(
    Effect.map((info): Info | undefined => info),
    Effect.catchIf((e) => e.code === "NOT_FOUND", () => Effect.succeed(undefined))
  )

/**
 * Reads at most `maxBytes` bytes of an open file; `truncated` when the file is longer.
 *
 * @since 0.1.0
 * @category utils
 */
export const readBoundedFd = (fd: number, display: string, maxBytes: number) =>
  sync(display, () => SafeFs.readBoundedFd(fd, maxBytes))

/**
 * Reads the next chunk (at most `size` bytes) of an open file; an empty result at the end. The
 * read goes through the thread pool (the event loop runs meanwhile, so signals are seen) and is
 * not interrupted midway (the descriptor is not closed under it): a caller is interruptible
 * between chunks.
 *
 * @since 0.1.0
 * @category utils
 */
export const readChunk = (fd: number, display: string, size: number) =>
  Effect.uninterruptible(Effect.callback<Uint8Array, ToolError.BuiltinToolError>((resume) => {
    const buffer = Buffer.allocUnsafe(size)
    NodeFs.read(fd, buffer, 0, size, null, (error, n) => {
      resume(error === null ? Effect.succeed(buffer.subarray(0, n)) : Effect.fail(toolError(error, display)))
    })
  }))

/**
 * Writes `data` to a resolved path atomically: a temp file created (`O_EXCL | O_NOFOLLOW`) in the
 * verified parent directory, then renamed over the name in that same directory. Missing parent
 * directories are created one verified component at a time; `mode`, when given, is applied to the
 * temp file. The temp file is removed when the write fails. Fails with `NOT_A_FILE` when the name
 * is a directory.
 *
 * @since 0.1.0
 * @category utils
 */
export const atomicWrite = (root: string, target: Workspace.ResolvedPath, data: Uint8Array, mode: number | undefined) =>
  Effect.gen(function*() {
    const suffix = (yield* Random.nextIntBetween(0, 2 ** 31 - 1)).toString(36)
    const segments = SafeFs.segmentsOf(root, target.absolute)
    const name = segments.pop()
    if (name === undefined) {
      return yield* Effect.fail(ToolError.make("NOT_A_FILE", `${target.relative} is a directory`))
    }
    yield* sync(target.relative, () =>
      SafeFs.withDir(root, segments, true, (dir) => {
        const existing = lstatOrUndefined(SafeFs.at(dir, name))
        if (existing?.isDirectory() === true) throw Object.assign(new Error("is a directory"), { code: "EISDIR" })
        const temp = `.${name.slice(0, 200)}.${suffix}.tmp`
        const C = NodeFs.constants
        const fd = SafeFs.openFileAt(dir, temp, root, C.O_WRONLY | C.O_CREAT | C.O_EXCL, mode ?? 0o666)
        try {
          try {
            NodeFs.writeFileSync(fd, data)
            if (mode !== undefined) NodeFs.fchmodSync(fd, mode)
          } finally {
            NodeFs.closeSync(fd)
          }
          NodeFs.renameSync(SafeFs.at(dir, temp), SafeFs.at(dir, name))
        } catch (e) {
          try {
            NodeFs.unlinkSync(SafeFs.at(dir, temp))
          } catch {
            // the temp file is gone already
          }
          throw e
        }
      }))
  })

const lstatOrUndefined = (path: string): NodeFs.Stats | undefined => {
  try {
    return NodeFs.lstatSync(path)
  } catch (e) {
    if (SafeFs.errnoOf(e) === "ENOENT") return undefined
    throw e
  }
}
