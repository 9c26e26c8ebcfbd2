/**
 * The `glob` tool: files whose path matches a glob pattern, newest first.
 *
 * The pattern is matched against paths relative to `path` (default: the workspace root) and
 * supports `**`, `*`, `?`, `[...]` and `{a,b}` (see {@link GlobPattern}). The walk respects
 * `.gitignore` files and always skips `.git/` and `node_modules/` (see {@link Walk}).
 *
 * Decisions (DEC-10): standard glob semantics (`*.ts` matches only at the top of `path`; use
 * `**\/*.ts` for any depth); results are root-relative paths sorted by modification time, newest
 * first (ties by path), at most {@link MAX_RESULTS} with a notice; an absolute pattern under the
 * root is made relative; a pattern containing a `..` segment is `INVALID_PATTERN`; no match is a
 * successful `No files matched …` result; paths hidden by a deny rule (`ReadFilter`) are never listed.
 *
 * @since 0.1.0
 */
import * as Path from "effect/Path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileIo from "./internal/FileIo.js"
import * as GlobPattern from "./internal/GlobPattern.js"
import type { Outcome } from "./internal/Outcome.js"
import * as Search from "./internal/Search.js"
import * as ReadFilter from "./ReadFilter.js"
import * as Walk from "./internal/Walk.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../Loop/Tool.js"
import type * as FileSystem from "effect/FileSystem"

/**
 * Most paths returned.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESULTS = 100

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "glob"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  "Find files by glob pattern (supports **, *, ?, [abc], {a,b}), e.g. \"**/*.ts\" or \"src/**/{a,b}.json\". " +
  "Respects .gitignore. Returns workspace-relative paths, most recently modified first."

/**
 * The parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = Schema.Struct({
  pattern: Schema.String.annotate({
    description: "Glob pattern, matched against paths relative to `path`; use **/ to match at any depth"
  }),
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "Directory to search in, relative to the workspace root or absolute inside it (default: the root)"
    })
  )
})

/**
 * Decoded parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Params = typeof parameters.Type

/**
 * Runs `glob`.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = Effect.fn("Glob.run")(function*(params: Params) {
  const path = yield* Path.Path
  const workspace = yield* Workspace.Workspace
  const base = yield* workspace.resolve(params.path === undefined || params.path === "" ? "." : params.path)
  const exclude = yield* ReadFilter.hidden
  if (exclude(base.relative)) return yield* Effect.fail(ToolError.make("PERMISSION_DENIED", ReadFilter.hiddenMessage(base.relative)))
  const baseInfo = yield* FileIo.stat(workspace.root, base)
  if (baseInfo.type !== "Directory") {
    return yield* Effect.fail(ToolError.make("NOT_A_DIRECTORY", `${base.relative} is not a directory`))
  }
  let pattern = params.pattern
  if (path.isAbsolute(pattern)) {
    const rel = path.relative(base.absolute, pattern)
    if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      return yield* Effect.fail(
        ToolError.make("INVALID_PATTERN", `pattern ${JSON.stringify(params.pattern)} must be relative to the search path`)
      )
    }
    pattern = rel.split(path.sep).join("/")
  }
  pattern = pattern.replace(/^\.\//, "")
  if (pattern === "" || pattern.split("/").includes("..")) {
    return yield* Effect.fail(
      ToolError.make("INVALID_PATTERN", `pattern ${JSON.stringify(params.pattern)} must be non-empty and must not contain ".."`)
    )
  }
  const prefix = GlobPattern.literalPrefix(pattern)
  let start = base
  if (prefix !== "") {
    const deeper = yield* workspace.resolve(path.join(base.absolute, prefix))
    const info = yield* FileIo.statOption(workspace.root, deeper)
    if (info === undefined || info.type !== "Directory") {
      return { content: [{ type: "text", text: `No files matched ${params.pattern}` }] } satisfies Outcome
    }
    start = deeper
  }
  const walked = yield* Search.glob({ root: workspace.root, base: base.relative, start: start.relative, pattern, exclude })
  const sorted = [...walked.files].sort((a, b) =>
    b.mtime - a.mtime || (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0)
  )
  if (sorted.length === 0) {
    return { content: [{ type: "text", text: `No files matched ${params.pattern}` }] } satisfies Outcome
  }
  const shown = sorted.slice(0, MAX_RESULTS)
  let text = shown.map((f) => f.relative).join("\n")
  if (sorted.length > shown.length) {
    text += `\n\n[Showing ${shown.length} of ${sorted.length} matching files (newest first); narrow the pattern or path to see the rest.]`
  }
  if (walked.incomplete) text += `\n\n[The search stopped after ${Walk.MAX_FILES} files; results may be incomplete.]`
  return {
    content: [{ type: "text", text }],
    meta: { matches: sorted.length, shown: shown.length }
  } satisfies Outcome
})

/**
 * The `glob` tool (read-only, concurrency-safe).
 *
 * @since 0.1.0
 * @category tools
 */
export const tool: Tool.Tool<Workspace.Workspace | FileSystem.FileSystem | Path.Path> = Tool.make({
  name,
  effects: "read-only",
  description,
  parameters,
  isConcurrencySafe: () => true,
  presentCall: (args) => ({
    card: "generic",
    title: `glob ${args.pattern}`,
    ...(args.path !== undefined ? { subtitle: `in ${args.path}` } : {})
  }),
  execute: (args) => run(args)
})
