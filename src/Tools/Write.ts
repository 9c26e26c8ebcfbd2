/**
 * The `write` tool: creates or overwrites a file with the given content.
 *
 * Decisions (DEC-10): parent directories are created; the write is atomic (a temp file in the
 * same directory renamed over the target), so readers never see a half-written file; an existing
 * file keeps its permission bits; writing to a directory is `NOT_A_FILE`. The result states
 * whether the file was created or overwritten, with its size in bytes and lines.
 *
 * Overwriting (issue 26: no bytes changed that the model did not ask for): the content is written
 * as given, except that a UTF-8 byte order mark the existing file starts with is kept when the
 * content does not start with U+FEFF, and when the existing file ends every line with `\r\n` and
 * the content has no `\r`, its `\n` are written as `\r\n` (the model reads lines without `\r` or
 * BOM, so it cannot have asked to drop them). Content with a `\r` is written byte for byte. The
 * result says what was kept. Only the first {@link STYLE_BYTES} bytes of the existing file are read.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileIo from "./internal/FileIo.js"
import type { Outcome } from "./internal/Outcome.js"
import * as TextFile from "./internal/TextFile.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../Loop/Tool.js"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "write"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  "Create a file or overwrite it entirely with the given content (parent directories are created). " +
  "Prefer edit for changing part of an existing file."

/**
 * The parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = Schema.Struct({
  file_path: Schema.String.annotate({
    description: "Path of the file, relative to the workspace root or absolute inside it"
  }),
  content: Schema.String.annotate({ description: "The complete new content of the file" })
})

/**
 * Decoded parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Params = typeof parameters.Type

/**
 * Bytes of an existing file read to learn its byte order mark and line endings (64 KiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const STYLE_BYTES = 64 * 1024

const countLines = (text: string): number =>
  text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0)

const noStyle = { bom: false, crlf: false } as const

// the BOM and line-ending style of the existing file (its first STYLE_BYTES bytes); none when it
// is gone meanwhile or cannot be read (a write-only file is still overwritten as before)
const style = (root: string, target: Workspace.ResolvedPath) =>
  Effect.scoped(Effect.gen(function*() {
    const fd = yield* FileIo.open(root, target)
    const { bytes } = yield* FileIo.readBoundedFd(fd, target.relative, STYLE_BYTES)
    // line endings are ASCII bytes: latin1 reads them whatever the encoding or a cut character
    return { bom: TextFile.hasBom(bytes), crlf: TextFile.endingsOf(Buffer.from(bytes).toString("latin1")) === "crlf" }
  })).pipe(Effect.catchIf((e) => e.code === "NOT_FOUND" || e.code === "PERMISSION_DENIED", () => Effect.succeed(noStyle)))

/**
 * Runs `write`.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = Effect.fn("Write.run")(function*(params: Params) {
  const workspace = yield* Workspace.Workspace
  const target = yield* workspace.resolve(params.file_path)
  const display = target.relative
  const existing = yield* FileIo.statOption(workspace.root, target)
  if (existing !== undefined && existing.type !== "File") {
    return yield* Effect.fail(
      ToolError.make("NOT_A_FILE", `${display} exists and is not a regular file (${existing.type})`)
    )
  }
  const kept = existing === undefined ? noStyle : yield* style(workspace.root, target)
  const bom = kept.bom && !params.content.startsWith("\uFEFF")
  const crlf = kept.crlf && params.content.includes("\n") && !params.content.includes("\r")
  const bytes = TextFile.encode({ bom, text: crlf ? TextFile.withEnding(params.content, "\r\n") : params.content })
  const mode = existing !== undefined ? existing.mode & 0o7777 : undefined
  yield* FileIo.atomicWrite(workspace.root, target, bytes, mode)
  const keptNote = bom || crlf
    ? `; kept the file's ${[bom ? "UTF-8 byte order mark" : "", crlf ? "CRLF line endings" : ""].filter((n) => n !== "").join(" and ")}`
    : ""
  const created = existing === undefined
  const lines = countLines(params.content)
  return {
    content: [{
      type: "text",
      text: `${created ? "Created" : "Overwrote"} ${display} (${bytes.length} bytes, ${lines} line${lines === 1 ? "" : "s"}${keptNote})`
    }],
    meta: { path: display, created, bytes: bytes.length }
  } satisfies Outcome
})

/**
 * The `write` tool (mutating: needs approval, see `Approval`).
 *
 * @since 0.1.0
 * @category tools
 */
export const tool: Tool.Tool<Workspace.Workspace | FileSystem.FileSystem | Path.Path> = Tool.make({
  name,
  effects: "side-effecting",
  description,
  parameters,
  presentCall: (args) => ({
    card: "diff",
    title: `write ${args.file_path}`,
    path: args.file_path,
    diff: args.content.split("\n").map((l) => `+${l}`).join("\n")
  }),
  execute: (args) => run(args)
})
