/**
 * The `grep` tool: a regular-expression search over file contents, one `path:line:text` line per
 * matching line.
 *
 * `path` may be a directory (walked respecting `.gitignore`, skipping `.git/` and
 * `node_modules/`, see {@link Walk}) or a single file (searched even if ignored). `glob` filters
 * the files: a glob without `/` matches the file name at any depth (`*.ts`), one with `/` matches
 * the path relative to `path`.
 *
 * Decisions (DEC-10): JavaScript regular-expression syntax, matched per line (`\r` of CRLF files
 * stripped); binary files (a NUL byte in the first 8 KiB) and files above
 * {@link MAX_FILE_BYTES} are skipped silently; the shown text of a line is cut at
 * {@link MAX_LINE_CHARS} characters; `max_results` defaults to {@link DEFAULT_RESULTS} and is
 * clamped to {@link MAX_RESULTS}; when more lines match, a notice says so and the search stops
 * early; no match is a successful `No matches …` result; an invalid regex is `INVALID_PATTERN`;
 * files hidden by a deny rule (`ReadFilter`) are never searched, with or without `path` (a hidden
 * `path` is `PERMISSION_DENIED`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileIo from "./internal/FileIo.js"
import type { Outcome } from "./internal/Outcome.js"
import * as Search from "./internal/Search.js"
import * as ReadFilter from "./ReadFilter.js"
import * as Walk from "./internal/Walk.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../Loop/Tool.js"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"

/**
 * Default number of matching lines returned.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RESULTS = 100

/**
 * Upper bound of `max_results`.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESULTS = 1000

/**
 * Larger files are skipped (8 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_FILE_BYTES = 8 * 1024 * 1024

/**
 * Shown text of a matching line is cut at this many characters.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINE_CHARS = 500

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "grep"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  "Search file contents with a regular expression (JavaScript syntax). Respects .gitignore and skips binary files. " +
  "Returns matching lines as path:line:text."

/**
 * The parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = Schema.Struct({
  pattern: Schema.String.annotate({ description: "Regular expression to search for (JavaScript syntax)" }),
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "File or directory to search, relative to the workspace root or absolute inside it (default: the root)"
    })
  ),
  glob: Schema.optionalKey(
    Schema.String.annotate({
      description: "Only search files matching this glob, e.g. \"*.ts\" (file name) or \"src/**/*.{ts,tsx}\" (path)"
    })
  ),
  case_insensitive: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Match case-insensitively (default false)" })
  ),
  max_results: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: `Maximum number of matching lines to return (default ${DEFAULT_RESULTS}, at most ${MAX_RESULTS})`
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
 * Runs `grep`.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = Effect.fn("Grep.run")(function*(params: Params) {
  const workspace = yield* Workspace.Workspace
  const regex = yield* Effect.try({
    try: () => new RegExp(params.pattern, params.case_insensitive === true ? "i" : ""),
    catch: (e) =>
      ToolError.make("INVALID_PATTERN", `invalid regular expression: ${e instanceof Error ? e.message : String(e)}`)
  })
  const max = Math.min(params.max_results ?? DEFAULT_RESULTS, MAX_RESULTS)
  const base = yield* workspace.resolve(params.path === undefined || params.path === "" ? "." : params.path)
  const exclude = yield* ReadFilter.hidden
  if (exclude(base.relative)) return yield* Effect.fail(ToolError.make("PERMISSION_DENIED", ReadFilter.hiddenMessage(base.relative)))
  const info = yield* FileIo.stat(workspace.root, base)
  if (info.type === "Other" || (info.type === "File" && base.relative === ".")) {
    return yield* Effect.fail(ToolError.make("NOT_A_FILE", `${base.relative} is not a regular file or directory`))
  }
  const found = yield* Search.grep({
    root: workspace.root,
    start: base.relative,
    startIsFile: info.type === "File",
    regex,
    glob: params.glob,
    max,
    maxFileBytes: MAX_FILE_BYTES,
    maxLineChars: MAX_LINE_CHARS,
    exclude
  })
  const results = found.lines
  const more = found.more
  const incomplete = found.incomplete
  if (results.length === 0) {
    return {
      content: [{ type: "text", text: `No matches for /${params.pattern}/ in ${base.relative}` }],
      meta: { matches: 0 }
    } satisfies Outcome
  }
  let text = results.join("\n")
  if (more) {
    text += `\n\n[Showing the first ${results.length} matching lines; more matches exist. Narrow the pattern, path or glob, or raise max_results.]`
  }
  if (incomplete) text += `\n\n[The search stopped after ${Walk.MAX_FILES} files; results may be incomplete.]`
  return { content: [{ type: "text", text }], meta: { matches: results.length, truncated: more } } satisfies Outcome
})

/**
 * The `grep` tool (read-only, concurrency-safe).
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
    title: `grep /${args.pattern}/`,
    ...(args.path !== undefined || args.glob !== undefined
      ? { subtitle: [args.path, args.glob].filter((x) => x !== undefined).join(" ") }
      : {})
  }),
  execute: (args) => run(args)
})
