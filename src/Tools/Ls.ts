/**
 * The `ls` tool: the entries of one directory, sorted by name (code-unit order), one per line,
 * directories with a trailing `/`.
 *
 * Decisions (DEC-10): every entry is listed (hidden files too; `.gitignore` does not apply to a
 * direct listing); a symbolic link is shown as `name -> target` (with the link text as stored);
 * other special files are listed plainly; at most {@link MAX_ENTRIES} entries with a notice;
 * an empty directory reads as `(empty directory)`; a file path is `NOT_A_DIRECTORY`; entries hidden
 * by a deny rule (`ReadFilter`, on the real path: a listing through a link is filtered too) are
 * left out.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as FileIo from "./internal/FileIo.js"
import type { Outcome } from "./internal/Outcome.js"
import * as SafeFs from "./internal/SafeFs.js"
import * as ReadFilter from "./ReadFilter.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../Loop/Tool.js"

/**
 * Most entries listed.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ENTRIES = 1000

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "ls"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  "List the entries of a directory (default: the workspace root), sorted by name; directories end with /."

/**
 * The parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = Schema.Struct({
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "Directory to list, relative to the workspace root or absolute inside it (default: the root)"
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
 * Runs `ls`.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = Effect.fn("Ls.run")(function*(params: Params) {
  const workspace = yield* Workspace.Workspace
  const target = yield* workspace.resolve(params.path === undefined || params.path === "" ? "." : params.path)
  const display = target.relative
  const hidden = yield* ReadFilter.hidden
  if (hidden(display)) return yield* Effect.fail(ToolError.make("PERMISSION_DENIED", ReadFilter.hiddenMessage(display)))
  const listed = yield* Effect.scoped(Effect.gen(function*() {
    const fd = yield* FileIo.open(workspace.root, target)
    const info = yield* FileIo.fstat(fd, display)
    if (info.type !== "Directory") {
      return yield* Effect.fail(ToolError.make("NOT_A_DIRECTORY", `${display} is not a directory`))
    }
    return yield* Effect.try({
      try: () => {
        const dir = SafeFs.dirOf(fd, target.absolute)
        const names = NodeFs.readdirSync(dir.base).filter((entry) => !hidden(display === "." ? entry : `${display}/${entry}`))
        names.sort()
        const lines = names.slice(0, MAX_ENTRIES).map((entry) => {
          let entryInfo: NodeFs.Stats
          try {
            entryInfo = NodeFs.lstatSync(SafeFs.at(dir, entry))
          } catch {
            return entry // vanished meanwhile
          }
          if (entryInfo.isDirectory()) return `${entry}/`
          if (entryInfo.isSymbolicLink()) return `${entry} -> ${NodeFs.readlinkSync(SafeFs.at(dir, entry))}`
          return entry
        })
        return { names, lines }
      },
      catch: (e) => FileIo.toolError(e, display)
    })
  }))
  const { lines, names } = listed
  if (lines.length === 0) return { content: [{ type: "text", text: "(empty directory)" }] } satisfies Outcome
  let text = lines.join("\n")
  if (names.length > lines.length) {
    text += `\n\n[Showing ${lines.length} of ${names.length} entries.]`
  }
  return { content: [{ type: "text", text }] } satisfies Outcome
})

/**
 * The `ls` tool (read-only, concurrency-safe).
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
  presentCall: (args) => ({ card: "generic", title: `ls ${args.path ?? "."}` }),
  execute: (args) => run(args)
})
