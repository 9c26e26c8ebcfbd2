/**
 * Recursive directory walk for `glob` and `grep`, honouring `.gitignore` files.
 *
 * Decisions (DEC-10):
 * - `.git/` and `node_modules/` are always skipped.
 * - `.gitignore` files of the workspace root and of every directory between the root and the walk
 *   start apply, then those found while descending (deeper wins, see {@link Gitignore}).
 * - Symbolic links are not followed and not listed (like ripgrep's default): following them could
 *   leave the workspace or loop.
 * - Entries are visited in code-unit order of their names, so the output order is deterministic.
 * - The walk stops after {@link MAX_FILES} files and reports `incomplete`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ToolError from "../ToolError.js"
import type * as Workspace from "../Workspace.js"
import * as Gitignore from "./Gitignore.js"

/**
 * Most files one walk collects.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_FILES = 200_000

/**
 * Directory names that are never descended into.
 *
 * @since 0.1.0
 * @category constants
 */
export const ALWAYS_SKIPPED: ReadonlySet<string> = new Set([".git", "node_modules"])

/**
 * A file found by the walk.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileEntry {
  readonly absolute: string
  /** root-relative, `/`-separated */
  readonly relative: string
  /** modification time in ms since the epoch (0 when unknown) */
  readonly mtime: number
  readonly size: number
}

/**
 * The result of a walk.
 *
 * @since 0.1.0
 * @category models
 */
export interface WalkResult {
  readonly files: ReadonlyArray<FileEntry>
  readonly incomplete: boolean
}

/**
 * Options of {@link walk}.
 *
 * @since 0.1.0
 * @category models
 */
export interface WalkOptions {
  readonly workspace: Workspace.Service
  /** the directory to start at (a resolved workspace path) */
  readonly start: Workspace.ResolvedPath
  /** keep only files whose root-relative path passes this test (`undefined` keeps all) */
  readonly filter?: (relative: string) => boolean
}

const joinRel = (dir: string, name: string): string => (dir === "." || dir === "" ? name : `${dir}/${name}`)

/**
 * Loads a `.gitignore` in `absoluteDir` (root-relative `relDir`), if it exists and is readable.
 * Unreadable ignore files are logged and skipped.
 *
 * @since 0.1.0
 * @category utils
 */
export const loadIgnore = (absoluteDir: string, relDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(absoluteDir, ".gitignore")
    const text = yield* fs.readFileString(file).pipe(
      Effect.map(Option.some),
      Effect.catchAll((e) =>
        e._tag === "SystemError" && e.reason === "NotFound"
          ? Effect.succeedNone
          : Effect.as(Effect.logWarning(`ignoring unreadable ${file}`, e), Option.none<string>())
      )
    )
    return Option.map(text, (t) => Gitignore.parse(relDir === "." ? "" : relDir, t))
  })

/**
 * The rule sets that apply at the start of a walk: the root's and each directory's between the
 * root and `relativeStart` (exclusive).
 *
 * @since 0.1.0
 * @category utils
 */
export const ancestorRules = (workspace: Workspace.Service, relativeStart: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const sets: Array<Gitignore.RuleSet> = []
    const segments = relativeStart === "." ? [] : relativeStart.split("/")
    for (let i = 0; i < segments.length; i++) {
      const rel = segments.slice(0, i).join("/")
      const set = yield* loadIgnore(path.join(workspace.root, ...segments.slice(0, i)), rel === "" ? "." : rel)
      if (Option.isSome(set)) sets.push(set.value)
    }
    return sets
  })

interface Classified {
  readonly name: string
  readonly kind: "file" | "dir" | "skip"
  readonly mtime: number
  readonly size: number
}

/**
 * Classifies a directory entry without following symbolic links: `skip` for links, special
 * files and entries that vanished.
 *
 * @since 0.1.0
 * @category utils
 */
export const classify = (absoluteDir: string, name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = path.join(absoluteDir, name)
    const real = yield* Effect.option(fs.realPath(absolute))
    if (Option.isNone(real) || real.value !== absolute) {
      return { name, kind: "skip", mtime: 0, size: 0 } satisfies Classified
    }
    const info = yield* Effect.option(fs.stat(absolute))
    if (Option.isNone(info)) return { name, kind: "skip", mtime: 0, size: 0 } satisfies Classified
    const kind = info.value.type === "Directory" ? "dir" : info.value.type === "File" ? "file" : "skip"
    return {
      name,
      kind,
      mtime: Option.match(info.value.mtime, { onNone: () => 0, onSome: (d) => d.getTime() }),
      size: Number(info.value.size)
    } satisfies Classified
  })

/**
 * Walks the tree under `options.start`.
 *
 * @since 0.1.0
 * @category utils
 */
export const walk = (options: WalkOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files: Array<FileEntry> = []
    let incomplete = false
    const initial = yield* ancestorRules(options.workspace, options.start.relative)

    const visit = (
      absoluteDir: string,
      relDir: string,
      inherited: ReadonlyArray<Gitignore.RuleSet>
    ): Effect.Effect<void, ToolError.BuiltinToolError, FileSystem.FileSystem | Path.Path> =>
      Effect.gen(function*() {
        if (incomplete) return
        const names = yield* fs.readDirectory(absoluteDir).pipe(
          Effect.catchAll((e) =>
            relDir === options.start.relative
              ? Effect.fail(ToolError.fromPlatform(e, relDir))
              : Effect.as(Effect.logDebug(`walk: cannot list ${relDir}`, e), [] as Array<string>)
          )
        )
        names.sort()
        const own = names.includes(".gitignore") ? yield* loadIgnore(absoluteDir, relDir) : Option.none()
        const rules = Option.isSome(own) ? [...inherited, own.value] : inherited
        const entries = yield* Effect.forEach(
          names.filter((n) => !ALWAYS_SKIPPED.has(n)),
          (name) => classify(absoluteDir, name),
          { concurrency: 16 }
        )
        for (const entry of entries) {
          if (incomplete) return
          const rel = joinRel(relDir, entry.name)
          if (entry.kind === "skip") continue
          if (Gitignore.isIgnored(rules, rel, entry.kind === "dir")) continue
          if (entry.kind === "dir") {
            yield* visit(path.join(absoluteDir, entry.name), rel, rules)
          } else if (options.filter === undefined || options.filter(rel)) {
            if (files.length >= MAX_FILES) {
              incomplete = true
              return
            }
            files.push({ absolute: path.join(absoluteDir, entry.name), relative: rel, mtime: entry.mtime, size: entry.size })
          }
        }
      })

    yield* visit(options.start.absolute, options.start.relative, initial)
    return { files, incomplete } satisfies WalkResult
  })
