/**
 * The session-picker summary (`SessionPersistence.list`), computed the same way by every backend
 * from the header, the first `user/message` and the tail of the log.
 *
 * [DECISION] `turns` is `1 + the turn number of the last turn-scoped event - the turn number of the
 * first one` (0 when the log has none). Turn numbers are contiguous (S-17; a live session starts
 * at 1, older logs at 0) and every turn-scoped event lies in its turn (S-16), so this equals the
 * number of `turn/start` events while needing only the head and the tail of the log. Without a
 * known first turn number, 0 is assumed.
 * `firstPrompt` is the first line of the first text block of the first `user/message`, cut to
 * {@link MAX_PROMPT_LENGTH} characters (an ellipsis marks a cut). `updatedAt` is the time of the
 * last stored event, or the creation time.
 *
 * @since 0.1.0
 */
import type { Location, SessionSummary } from "../SessionPersistence.js"
import type { SessionHeader } from "../SessionEvent.js"

/**
 * The longest `firstPrompt` (characters).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_PROMPT_LENGTH = 200

/**
 * Event types whose `data.turn` is the number of the turn they lie in.
 *
 * @since 0.1.0
 * @category constants
 */
export const turnScopedTypes: ReadonlySet<string> = new Set([
  "turn/start",
  "turn/end",
  "step/start",
  "step/end",
  "assistant/chunk",
  "assistant/message",
  "tool/call",
  "tool/result",
  "steering/message"
])

/**
 * The turn number carried by a turn-scoped event, or `undefined`.
 *
 * @since 0.1.0
 * @category utils
 */
export const turnOf = (event: { readonly type: string; readonly data: unknown }): number | undefined => {
  if (!turnScopedTypes.has(event.type) || typeof event.data !== "object" || event.data === null) return undefined
  const turn = (event.data as Record<string, unknown>)["turn"]
  return typeof turn === "number" && Number.isSafeInteger(turn) && turn >= 0 ? turn : undefined
}

/**
 * The first-prompt line of a `user/message` event, or `undefined` for any other event.
 *
 * @since 0.1.0
 * @category utils
 */
export const promptOf = (event: { readonly type: string; readonly data: unknown }): string | undefined => {
  if (event.type !== "user/message" || typeof event.data !== "object" || event.data === null) return undefined
  const content = (event.data as Record<string, unknown>)["content"]
  if (!Array.isArray(content)) return undefined
  for (const block of content) {
    if (typeof block === "object" && block !== null && block.type === "text" && typeof block.text === "string") {
      const line = (block.text as string).trimStart().split("\n", 1)[0]?.trimEnd() ?? ""
      return line.length > MAX_PROMPT_LENGTH ? `${line.slice(0, MAX_PROMPT_LENGTH - 1)}…` : line
    }
  }
  return undefined
}

/**
 * Builds a summary from the pieces a backend found.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly header: SessionHeader
  readonly lastTime: number | undefined
  readonly lastTurn: number | undefined
  /** the turn number of the first turn-scoped event (default 0) */
  readonly firstTurn?: number | undefined
  readonly firstPrompt: string | undefined
  readonly location?: Location | undefined
}): SessionSummary => {
  const summary: {
    header: SessionHeader
    updatedAt: number
    turns: number
    firstPrompt?: string
    location?: Location
  } = {
    header: options.header,
    updatedAt: options.lastTime ?? options.header.createdAt,
    turns: options.lastTurn === undefined ? 0 : Math.max(0, options.lastTurn - (options.firstTurn ?? 0)) + 1
  }
  if (options.firstPrompt !== undefined) summary.firstPrompt = options.firstPrompt
  if (options.location !== undefined) summary.location = options.location
  return summary
}

/**
 * Builds a summary from a whole log (for backends that hold it in memory).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEvents = (
  header: SessionHeader,
  events: ReadonlyArray<{ readonly type: string; readonly time: number; readonly data: unknown }>,
  location?: Location
): SessionSummary => {
  let firstPrompt: string | undefined
  for (const event of events) {
    firstPrompt = promptOf(event)
    if (firstPrompt !== undefined) break
  }
  let lastTurn: number | undefined
  for (let i = events.length - 1; i >= 0 && lastTurn === undefined; i--) lastTurn = turnOf(events[i]!)
  let firstTurn: number | undefined
  for (let i = 0; i < events.length && firstTurn === undefined; i++) firstTurn = turnOf(events[i]!)
  return make({ header, lastTime: events[events.length - 1]?.time, lastTurn, firstTurn, firstPrompt, location })
}

/**
 * Most recently updated first, then by id.
 *
 * @since 0.1.0
 * @category utils
 */
export const order = (a: SessionSummary, b: SessionSummary): number =>
  b.updatedAt - a.updatedAt || (a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0)
