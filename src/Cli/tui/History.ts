/**
 * The chat's input history, kept across chats (issue 34): one JSON string a line in
 * `<harness home>/history.jsonl` (`0600`), newest last, trimmed to {@link MAX_ENTRIES} when loaded.
 * Up/Down walk it in the editor; Ctrl-R searches it ({@link search}).
 *
 * A history that cannot be read or written costs the history only: the failure is reported once in
 * the transcript, the chat goes on.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * Entries kept (the oldest are dropped beyond this).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ENTRIES = 1000

/**
 * The history file could not be read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class HistoryError extends Schema.TaggedError<HistoryError>()("HistoryError", {
  code: Schema.Literal("IO_ERROR"),
  message: Schema.String
}) {}

/**
 * The history file of a harness home.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fileOf = (home: string): string => NodePath.join(home, "history.jsonl")

const parseLine = (line: string): ReadonlyArray<string> => {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === "string" && value.trim() !== "" ? [value] : []
  } catch {
    return [] // a torn last line (two chats writing at once) is skipped
  }
}

/**
 * The stored entries, oldest first (none when the file does not exist yet).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (file: string): Effect.Effect<ReadonlyArray<string>, HistoryError> =>
  Effect.try({
    try: () => {
      if (!NodeFs.existsSync(file)) return []
      const entries = NodeFs.readFileSync(file, "utf8").split("\n").flatMap(parseLine)
      return entries.slice(-MAX_ENTRIES)
    },
    catch: (e) => new HistoryError({ code: "IO_ERROR", message: `cannot read the input history ${file}: ${String(e)}` })
  })

/**
 * Appends one entry (creating the home `0700` and the file `0600` when missing).
 *
 * @since 0.1.0
 * @category mutations
 */
export const append = (file: string, entry: string): Effect.Effect<void, HistoryError> =>
  Effect.try({
    try: () => {
      NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true, mode: 0o700 })
      NodeFs.appendFileSync(file, `${JSON.stringify(entry)}\n`, { mode: 0o600 })
    },
    catch: (e) => new HistoryError({ code: "IO_ERROR", message: `cannot write the input history ${file}: ${String(e)}` })
  })

/**
 * Entries containing `query` (case-insensitive), newest first, each once.
 *
 * @since 0.1.0
 * @category utils
 */
export const search = (entries: ReadonlyArray<string>, query: string): ReadonlyArray<string> => {
  const q = query.toLowerCase()
  const seen = new Set<string>()
  const out: Array<string> = []
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!
    if (seen.has(entry) || !entry.toLowerCase().includes(q)) continue
    seen.add(entry)
    out.push(entry)
  }
  return out
}
