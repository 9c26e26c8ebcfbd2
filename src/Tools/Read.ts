/**
 * The `read` tool: a file's lines, numbered `cat -n` style (`<number, right-aligned to 6>\t<line>`).
 *
 * Decisions (DEC-10):
 * - `offset` is the 1-based line number to start at (default 1), `limit` the number of lines
 *   (default and maximum {@link MAX_LINES}); output is also capped at {@link MAX_OUTPUT_BYTES}
 *   bytes. When more lines follow, a notice at the end names the `offset` to continue with.
 * - The file is streamed, so a window of a huge file costs only what it shows; every 64 KiB read
 *   is a point where the call can be cancelled.
 * - Lines longer than {@link MAX_LINE_CHARS} characters are cut with a visible marker; a trailing
 *   `\r` (CRLF files) is not shown. A line is held only up to what it can show; a line that goes
 *   on for more than {@link LONG_LINE_WINDOW} bytes after that (a 100 MB one-line file, the zeros
 *   of a sparse file) ends the read there with a notice (issue 26), or fails `FILE_TOO_LARGE` when
 *   it stands before `offset`.
 * - A file whose first 8 KiB contain a NUL byte is refused as binary (`BINARY_FILE`); a directory
 *   is refused (`NOT_A_FILE`, pointing to `ls`); an `offset` past the end is `INVALID_ARGS`.
 * - An empty file reads as `(empty file)`.
 * - A file hidden by a deny rule (`ReadFilter`, on the real path: a link to it is no way round)
 *   is `PERMISSION_DENIED`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileIo from "./internal/FileIo.js"
import type { Outcome } from "./internal/Outcome.js"
import * as ReadFilter from "./ReadFilter.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../Loop/Tool.js"
import type * as Path from "effect/Path"

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
  file_path: Schema.String.annotate({
    description: "Path of the file, relative to the workspace root or absolute inside it"
  }),
  offset: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: "1-based line number to start reading at (default 1)"
    })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: `Maximum number of lines to return (default and maximum ${MAX_LINES})`
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

const formatLine = (n: number, text: string, longer: number | undefined): string => {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text
  const shown = longer !== undefined
    ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated: ${longer} bytes]`
    : line.length > MAX_LINE_CHARS
    ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated: ${line.length} characters]`
    : line
  return `${String(n).padStart(6)}\t${shown}`
}

/** Bytes of a line kept for display: enough for {@link MAX_LINE_CHARS} characters of any width. */
const LINE_KEEP_BYTES = MAX_LINE_CHARS * 4

/**
 * Bytes read past what a line shows while looking for its end (1 MiB); a line that goes on ends
 * the read there.
 *
 * @since 0.1.0
 * @category constants
 */
export const LONG_LINE_WINDOW = 1024 * 1024

const CHUNK_BYTES = 65536

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

  // lines are split on bytes: a line keeps at most LINE_KEEP_BYTES for display and is followed
  // for at most LONG_LINE_WINDOW more bytes, so a huge line (or a sparse file's run of zeros)
  // costs what is shown plus the window; every chunk is an interruptible read
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
      let kept: Array<Uint8Array> = []
      let keptBytes = 0
      let lineBytes = 0
      let first = true
      let byteCapped = false
      let more = false
      let sawAny = false
      let longLine: number | undefined
      let longBytes = 0
      // returns true when the window is full
      const take = (): boolean => {
        lineNo++
        const bytes = lineBytes
        const pieces = kept
        kept = []
        keptBytes = 0
        lineBytes = 0
        if (lineNo < offset) return false
        if (out.length >= limit) {
          more = true
          return true
        }
        const text = decoder.decode(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces))
        const formatted = formatLine(lineNo, text, bytes > LINE_KEEP_BYTES ? bytes : undefined)
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
      const hold = (chunk: Uint8Array, from: number, to: number) => {
        lineBytes += to - from
        const room = LINE_KEEP_BYTES - keptBytes
        if (room > 0 && to > from && lineNo + 1 >= offset) {
          const piece = chunk.slice(from, Math.min(to, from + room))
          kept.push(piece)
          keptBytes += piece.byteLength
        }
      }
      let full = false
      while (!full) {
        const chunk = yield* FileIo.readChunk(fd, display, CHUNK_BYTES)
        if (chunk.length === 0) break
        if (first) {
          first = false
          if (FileIo.looksBinary(chunk)) return { binary: true as const, size: info.size }
        }
        sawAny = true
        let pos = 0
        while (pos < chunk.length) {
          const nl = chunk.indexOf(10, pos)
          if (nl === -1) {
            hold(chunk, pos, chunk.length)
            break
          }
          hold(chunk, pos, nl)
          pos = nl + 1
          if (take()) {
            full = true
            break
          }
        }
        if (!full && lineBytes > LINE_KEEP_BYTES + LONG_LINE_WINDOW) {
          // the line goes on: show what it has (when in the window) and stop reading here; when
          // the window is already full, the usual "more lines follow" notice points at it
          const line = lineNo + 1
          longBytes = lineBytes
          if (line < offset) {
            lineNo++
            longLine = line
          } else if (!take()) {
            longLine = line
          }
          full = true
        }
      }
      if (!full && (lineBytes > 0 || kept.length > 0)) full = take()
      return { binary: false as const, out, lineNo, more, byteCapped, empty: !sawAny, longLine, longBytes }
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
  if (result.out.length === 0 && result.longLine !== undefined) {
    return yield* Effect.fail(
      ToolError.make(
        "FILE_TOO_LARGE",
        `line ${result.longLine} of ${display} is longer than ${result.longBytes} bytes, so read cannot reach line ${offset}; use bash (e.g. head -c, cut -c, split) to look further`
      )
    )
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
  if (result.longLine !== undefined) {
    text += `\n\n[Line ${result.longLine} is longer than ${result.longBytes} bytes: it was cut and the rest of the file was not read. Use bash (e.g. head -c, cut -c) to look further.]`
  } else if (result.more) {
    text += result.byteCapped
      ? `\n\n[Output capped at ${MAX_OUTPUT_BYTES} bytes: showing lines ${offset}-${endLine}. More lines follow; call read with offset=${
        endLine + 1
      } to continue.]`
      : `\n\n[Showing lines ${offset}-${endLine}. More lines follow; call read with offset=${endLine + 1} to continue.]`
  }
  return {
    content: [{ type: "text", text }],
    meta: { path: display, startLine: offset, endLine, truncated: result.more || result.longLine !== undefined }
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
  effects: "read-only",
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
