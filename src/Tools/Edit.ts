/**
 * The `edit` tool: exact string replacement in a file.
 *
 * Rules: `old_string` must occur exactly once unless `replace_all` is set; zero occurrences is
 * `NO_MATCH` (naming the file), several is `AMBIGUOUS_MATCH` (saying how many and asking for more
 * context or `replace_all`); `old_string === new_string` is `NO_CHANGE`; an empty `old_string` is
 * `INVALID_ARGS` (use `write` to create files).
 *
 * Decisions (DEC-10, issue 26: lossless edits):
 * - Only the matched bytes change. A file that is not valid UTF-8 (e.g. Latin-1) is refused with
 *   `NOT_UTF8` (decoding it would replace bytes with U+FFFD); a UTF-8 byte order mark is kept.
 * - Matching is exact (whitespace, indentation). One tolerance for line endings (the model sees
 *   lines without `\r` in `read` output): when `old_string` has no `\r`, each of its `\n` matches
 *   `\n` or `\r\n` in the file.
 * - Line endings are kept: when neither string has a `\r`, the k-th `\n` of `new_string` is
 *   written with the k-th line ending of the text the occurrence replaces (the last one for extra
 *   lines, the ending of its line when it had none), so a CRLF file stays CRLF and a mixed file
 *   keeps each line's ending. When either string has a `\r` (the model chose the endings),
 *   `new_string` is written as given.
 * - Occurrences are counted without overlap; the replacement text is inserted literally (no `$`
 *   patterns). The file is rewritten atomically and keeps its permission bits.
 * - Files larger than {@link MAX_FILE_BYTES} and binary files are refused.
 * - The result names the file, the number of replacements and the first changed line.
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
 * Largest file `edit` rewrites (16 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_FILE_BYTES = 16 * 1024 * 1024

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "edit"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  "Replace an exact string in a file. old_string must match the file exactly (including whitespace and " +
  "indentation) and occur exactly once, unless replace_all is true. Read the file first."

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
  old_string: Schema.String.annotate({
    description: "The exact text to replace; include enough surrounding lines to make it unique"
  }),
  new_string: Schema.String.annotate({ description: "The replacement text (must differ from old_string)" }),
  replace_all: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Replace every occurrence instead of requiring exactly one" })
  )
})

/**
 * Decoded parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Params = typeof parameters.Type

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Where `oldString` occurs in `text`, without overlap: `[start, end)` ranges. Without a `\r` in
 * `oldString`, each of its `\n` matches `\n` or `\r\n` (the model reads lines without `\r`).
 */
const occurrences = (text: string, oldString: string): ReadonlyArray<readonly [number, number]> => {
  const ranges: Array<readonly [number, number]> = []
  if (oldString.includes("\r") || !oldString.includes("\n")) {
    for (let at = text.indexOf(oldString); at !== -1; at = text.indexOf(oldString, at + oldString.length)) {
      ranges.push([at, at + oldString.length])
    }
    return ranges
  }
  const pattern = new RegExp(oldString.split("\n").map(escapeRegExp).join("\\r?\\n"), "g")
  for (const m of text.matchAll(pattern)) ranges.push([m.index, m.index + m[0].length])
  return ranges
}

const lineOf = (text: string, index: number): number => {
  let line = 1
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/**
 * Runs `edit`.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = Effect.fn("Edit.run")(function*(params: Params) {
  const workspace = yield* Workspace.Workspace
  if (params.old_string === "") {
    return yield* Effect.fail(
      ToolError.make("INVALID_ARGS", "old_string must not be empty; use write to create or overwrite a file")
    )
  }
  if (params.old_string === params.new_string) {
    return yield* Effect.fail(
      ToolError.make("NO_CHANGE", "old_string and new_string are identical; there is nothing to change")
    )
  }
  const target = yield* workspace.resolve(params.file_path)
  const display = target.relative
  const { bytes, info, truncated } = yield* Effect.scoped(
    Effect.gen(function*() {
      const fd = yield* FileIo.open(workspace.root, target)
      const info = yield* FileIo.fstat(fd, display)
      if (info.type !== "File") {
        return yield* Effect.fail(ToolError.make("NOT_A_FILE", `${display} is not a regular file`))
      }
      return { info, ...(yield* FileIo.readBoundedFd(fd, display, MAX_FILE_BYTES)) }
    })
  )
  if (truncated) {
    return yield* Effect.fail(
      ToolError.make("FILE_TOO_LARGE", `${display} is larger than ${MAX_FILE_BYTES} bytes; edit refuses to rewrite it`)
    )
  }
  if (FileIo.looksBinary(bytes)) {
    return yield* Effect.fail(ToolError.make("BINARY_FILE", `${display} looks like a binary file; edit only changes text files`))
  }
  const decoded = TextFile.decode(bytes)
  if (decoded === undefined) {
    return yield* Effect.fail(
      ToolError.make(
        "NOT_UTF8",
        `${display} is not valid UTF-8 text (another encoding such as Latin-1?); edit refuses it because rewriting it would change bytes it was not asked to change. Use bash to change it in its own encoding (e.g. sed), or write to replace the whole file`
      )
    )
  }
  const text = decoded.text
  const ranges = occurrences(text, params.old_string)
  const count = ranges.length
  const first = ranges[0]
  if (first === undefined) {
    return yield* Effect.fail(
      ToolError.make(
        "NO_MATCH",
        `old_string was not found in ${display}; it must match the file exactly, including whitespace and indentation (read the file to check)`
      )
    )
  }
  const replaceAll = params.replace_all === true
  if (count > 1 && !replaceAll) {
    return yield* Effect.fail(
      ToolError.make(
        "AMBIGUOUS_MATCH",
        `old_string occurs ${count} times in ${display}; include more surrounding context to make it unique, or set replace_all to true to replace every occurrence`
      )
    )
  }
  const firstLine = lineOf(text, first[0])
  const crOld = params.old_string.includes("\r")
  const parts: Array<string> = []
  let at = 0
  for (const [start, end] of ranges) {
    // an old_string with `\r` chose its endings: new_string is then written as given
    const replacement = crOld ? params.new_string : TextFile.replacing(params.new_string, text, start, end)
    parts.push(text.slice(at, start), replacement)
    at = end
  }
  parts.push(text.slice(at))
  const updated = TextFile.encode({ bom: decoded.bom, text: parts.join("") })
  yield* FileIo.atomicWrite(workspace.root, target, updated, info.mode & 0o7777)
  return {
    content: [{
      type: "text",
      text: `Edited ${display}: replaced ${count} occurrence${count === 1 ? "" : "s"} (first at line ${firstLine})`
    }],
    meta: { path: display, replacements: count, firstLine }
  } satisfies Outcome
})

/**
 * The `edit` tool (mutating: needs approval, see `Approval`).
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
    title: `edit ${args.file_path}${args.replace_all === true ? " (all occurrences)" : ""}`,
    path: args.file_path,
    diff: [
      ...args.old_string.split("\n").map((l) => `-${l}`),
      ...args.new_string.split("\n").map((l) => `+${l}`)
    ].join("\n")
  }),
  execute: (args) => run(args)
})
