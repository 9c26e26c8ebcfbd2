/**
 * The cap of one stored event (issue 26): 64 MiB of encoded JSON. It is above the step output cap
 * (8 MiB) even when every byte of that is escaped in JSON (`\u0001`: 6 bytes), and far below V8's
 * string limit (512 MiB), so a reader can always hold one record. `Session.append` refuses a
 * larger event with `INVALID_EVENT` before it is committed; the producers that could reach it cut
 * their output first with a visible notice (built-in tools and MCP results at 256 KiB, a model
 * step at its output cap).
 *
 * @since 0.1.0
 */
import type * as Json from "../Llm/Json.js"

/**
 * The largest stored event (one JSONL line, one SQLite record), in bytes: 64 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_EVENT_BYTES = 64 * 1024 * 1024

// JSON escapes a character in at most 6 bytes (`\u0001`); below this many characters of strings
// and keys (plus structure) an event cannot reach the cap, so it is not serialized to be measured
const SAFE_CHARS = Math.floor(MAX_EVENT_BYTES / 6) - 64 * 1024

const charsOf = (value: Json.Json, budget: number): number => {
  if (typeof value === "string") return value.length + 2
  if (typeof value !== "object" || value === null) return 24
  let total = 2
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && total <= budget; i++) total += charsOf(value[i] as Json.Json, budget - total) + 1
    return total
  }
  for (const key of Object.keys(value)) {
    if (total > budget) break
    total += key.length + 3 + charsOf((value as Json.JsonObject)[key] as Json.Json, budget - total)
  }
  return total
}

/**
 * The encoded size of `data` when it is over {@link MAX_EVENT_BYTES} (`undefined` when it fits):
 * a walk of its strings, and a serialization only when they could reach the cap.
 *
 * @since 0.1.0
 * @category utils
 */
export const oversize = (data: Json.Json): number | undefined => {
  if (charsOf(data, SAFE_CHARS) <= SAFE_CHARS) return undefined
  const bytes = Buffer.byteLength(JSON.stringify(data), "utf8")
  return bytes > MAX_EVENT_BYTES - 4096 ? bytes : undefined
}
