/**
 * The `read` tool: a file's lines, numbered `cat -n` style (`<number, right-aligned to 6>\t<line>`).
 *
 * Decisions (DEC-10):
 * - `offset` is the 1-based line number to start at (default 1), `limit` the number of lines
 *   (default and maximum {@link MAX_LINES}); output is also capped at {@link MAX_OUTPUT_BYTES}
 *   bytes. When more lines follow, a notice at the end names the `offset` to continue with.
 * - The file is streamed, so a window of a huge file costs only what it shows.
 * - Lines longer than {@link MAX_LINE_CHARS} characters are cut with a visible marker; a trailing
 *   `\r` (CRLF files) is not shown.
 * - A file whose first 8 KiB contain a NUL byte is refused as binary (`BINARY_FILE`); a directory
 *   is refused (`NOT_A_FILE`, pointing to `ls`); an `offset` past the end is `INVALID_ARGS`.
 * - An empty file reads as `(empty file)`.
 * - A file hidden by a deny rule (`ReadFilter`, on the real path: a link to it is no way round)
 *   is `PERMISSION_DENIED`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileIo from "./internal/FileIo.js"
import type { Outcome } from "./internal/Outcome.js"
import * as ReadFilter from "./ReadFilter.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../../Loop/Tool.js"
import type * as Path from "@effect/platform/Path"

/**
 * Default and maximum number of lines returned by one call.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINES = 2000

/**
 * Maximum bytes of numbered output returned by one call (256 KiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_OUTPUT_BYTES = 256 * 1024

/**
 * Longer lines are cut.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINE_CHARS = 2000

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "read"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  `Read a text file from the workspace. Returns numbered lines (cat -n style). Reads up to ${MAX_LINES} lines ` +
  "from the start by default; use offset and limit to page through long files. Binary files are refused."

/**
 * The parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = Schema.Struct({
  file_path: Schema.String.annotations({
    description: "Path of the file, relative to the workspace root or absolute inside it"
  }),
  offset: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
      description: "1-based line number to start reading at (default 1)"
    }),
    { exact: true }
  ),
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
      description: `Maximum number of lines to return (default and maximum ${MAX_LINES})`
    }),
    { exact: true }
  )
})

/**
 * Decoded parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Params = typeof parameters.Type

const formatLine = (n: number, text: string): string => {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text
  const shown = line.length > MAX_LINE_CHARS
    ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated: ${line.length} characters]`
    : line
  return `${String(n).padStart(6)}\t${shown}`
}

/**
 * Runs `read`.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = Effect.fn("Read.run")(function*(params: Params) {
  const workspace = yield* Workspace.Workspace
  const target = yield* workspace.resolve(params.file_path)
  const display = target.relative
  if ((yield* ReadFilter.hidden)(display)) {
    return yield* Effect.fail(ToolError.make("PERMISSION_DENIED", ReadFilter.hiddenMessage(display)))
  }
  const offset = params.offset ?? 1
  const limit = Math.min(params.limit ?? MAX_LINES, MAX_LINES)

  const scan = Effect.scoped(
    Effect.gen(function*() {
      const fd = yield* FileIo.open(workspace.root, target)
      const info = yield* FileIo.fstat(fd, display)
      if (info.type === "Directory") {
        return yield* Effect.fail(
          ToolError.make("NOT_A_FILE", `${display} is a directory, not a file; use ls to list it`)
        )
      }
      if (info.type !== "File") {
        return yield* Effect.fail(ToolError.make("NOT_A_FILE", `${display} is not a regular file`))
      }
      const decoder = new TextDecoder("utf-8")
      const out: Array<string> = []
      let outBytes = 0
      let lineNo = 0
      let pending = ""
      let first = true
      let byteCapped = false
      let more = false
      let sawAny = false
      let eof = false
      // returns true when the window is full
      const take = (text: string): boolean => {
        lineNo++
        if (lineNo < offset) return false
        if (out.length >= limit) {
          more = true
          return true
        }
        const formatted = formatLine(lineNo, text)
        const size = Buffer.byteLength(formatted, "utf8") + 1
        if (outBytes + size > MAX_OUTPUT_BYTES && out.length > 0) {
          byteCapped = true
          more = true
          return true
        }
        out.push(formatted)
        outBytes += size
        return false
      }
      let full = false
      while (!full && !eof) {
        const chunk = yield* FileIo.readChunk(fd, display, 65536)
        if (chunk.length === 0) {
          eof = true
          break
        }
        if (first) {
          first = false
          if (FileIo.looksBinary(chunk)) return { binary: true as const, size: info.size }
        }
        sawAny = true
        pending += decoder.decode(chunk, { stream: true })
        let nl = pending.indexOf("\n")
        let start = 0
        while (nl !== -1) {
          if (take(pending.slice(start, nl))) {
            full = true
            break
          }
          start = nl + 1
          nl = pending.indexOf("\n", start)
        }
        pending = pending.slice(start)
      }
      if (!full) {
        pending += decoder.decode()
        if (pending.length > 0) full = take(pending)
      }
      return { binary: false as const, out, lineNo, more, byteCapped, empty: !sawAny }
    })
  )

  const result = yield* scan
  if (result.binary) {
    return yield* Effect.fail(
      ToolError.make("BINARY_FILE", `${display} looks like a binary file (${result.size} bytes); read only shows text files`)
    )
  }
  if (result.empty) {
    return {
      content: [{ type: "text", text: "(empty file)" }],
      meta: { path: display, startLine: 0, endLine: 0, truncated: false }
    } satisfies Outcome
  }
  if (result.out.length === 0) {
    return yield* Effect.fail(
      ToolError.make(
        "INVALID_ARGS",
        `offset ${offset} is past the end of ${display}, which has ${result.lineNo} line${result.lineNo === 1 ? "" : "s"}`
      )
    )
  }
  const endLine = offset + result.out.length - 1
  let text = result.out.join("\n")
  if (result.more) {
    text += result.byteCapped
      ? `\n\n[Output capped at ${MAX_OUTPUT_BYTES} bytes: showing lines ${offset}-${endLine}. More lines follow; call read with offset=${
        endLine + 1
      } to continue.]`
      : `\n\n[Showing lines ${offset}-${endLine}. More lines follow; call read with offset=${endLine + 1} to continue.]`
  }
  return {
    content: [{ type: "text", text }],
    meta: { path: display, startLine: offset, endLine, truncated: result.more }
  } satisfies Outcome
})

/**
 * The `read` tool (read-only, concurrency-safe).
 *
 * @since 0.1.0
 * @category tools
 */
export const tool: Tool.Tool<Workspace.Workspace | FileSystem.FileSystem | Path.Path> = Tool.make({
  name,
  description,
  parameters,
  isConcurrencySafe: () => true,
  presentCall: (args) => ({
    card: "generic",
    title: `read ${args.file_path}`,
    ...(args.offset !== undefined || args.limit !== undefined
      ? { subtitle: `lines ${args.offset ?? 1}+${args.limit !== undefined ? ` (${args.limit})` : ""}` }
      : {})
  }),
  execute: (args) => run(args)
})
