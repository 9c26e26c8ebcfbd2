/**
 * The outcome of one `run` as a script reads it: a pure fold over the turn's session events
 * (usage totals, steps, the final text, the end reason), turned into the `--json` mode's last line
 * (`{"type":"result", …}`, schema in `docs/cli-json.md`).
 *
 * Decisions (DEC-10): `result` is the text of the turn's last assistant message; when the last
 * step ended without one (a cancel or an error mid-stream), it is the text streamed in that step so
 * far. `subtype` is `success` for `completed` and `max-tokens`, `cancelled` for `aborted` and
 * `disposed`, else `error` (also when the session could not be saved).
 *
 * @since 0.1.0
 */
import type * as ContentBlock from "../Llm/ContentBlock.js"
import type * as Message from "../Llm/Message.js"
import * as ModelCatalog from "../Llm/ModelCatalog.js"
import type { SessionEvent, TurnEndReason } from "../Session/SessionEvent.js"

/**
 * The fold's state.
 *
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  readonly steps: number
  readonly usage: Message.TokenUsage
  /** the text of the last assistant message */
  readonly lastText: string
  /** text streamed in the current step, not yet part of an assistant message */
  readonly stepText: string
  readonly reason: TurnEndReason | undefined
  /** USD at the catalog's prices, summed over the priced requests (`undefined`: none was priced) */
  readonly cost?: number | undefined
  /** USD prompt caching saved at the built-in catalog's prices (`ModelCatalog.cacheSavings`; `undefined`: unpriced) */
  readonly saved?: number | undefined
}

const catalog = ModelCatalog.unsafeMake()

/**
 * Nothing seen yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Summary = { steps: 0, usage: { inputTokens: 0, outputTokens: 0 }, lastText: "", stepText: "", reason: undefined }

const sum = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0)

/**
 * Adds two usages (optional counters stay absent when both are).
 *
 * @since 0.1.0
 * @category utils
 */
export const addUsage = (a: Message.TokenUsage, b: Message.TokenUsage): Message.TokenUsage => {
  const cacheRead = sum(a.cacheReadTokens, b.cacheReadTokens)
  const cacheWrite = sum(a.cacheWriteTokens, b.cacheWriteTokens)
  const reasoning = sum(a.reasoningTokens, b.reasoningTokens)
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cacheRead === undefined ? {} : { cacheReadTokens: cacheRead }),
    ...(cacheWrite === undefined ? {} : { cacheWriteTokens: cacheWrite }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning })
  }
}

/**
 * Adds a logged request cost (USD) to a total; absent stays absent.
 *
 * @since 0.1.0
 * @category utils
 */
export const addCost = (total: number | undefined, cost: number | undefined): number | undefined =>
  cost === undefined ? total : Math.round(((total ?? 0) + cost) * 1e10) / 1e10

/**
 * Folds one event.
 *
 * @since 0.1.0
 * @category utils
 */
export const step = (summary: Summary, event: SessionEvent): Summary => {
  switch (event.type) {
    case "step/start":
      return { ...summary, steps: summary.steps + 1, stepText: "" }
    case "assistant/chunk":
      return event.data.chunk.type === "text-delta" ? { ...summary, stepText: summary.stepText + event.data.chunk.text } : summary
    case "assistant/message":
      return {
        ...summary,
        usage: event.data.usage === undefined ? summary.usage : addUsage(summary.usage, event.data.usage),
        cost: addCost(summary.cost, event.data.cost),
        saved: addCost(
          summary.saved,
          ModelCatalog.requestSavings(catalog, event.data.provenance.provider, event.data.provenance.model, event.data.usage)
        ),
        lastText: event.data.content.flatMap((b) => b.type === "text" ? [(b as ContentBlock.TextBlock).text] : []).join(""),
        stepText: ""
      }
    case "compact/summary":
      return {
        ...summary,
        cost: addCost(summary.cost, event.data.cost),
        saved: addCost(summary.saved, ModelCatalog.requestSavings(catalog, event.data.provider, event.data.model, event.data.usage))
      }
    case "turn/end":
      return { ...summary, reason: event.data.reason }
    default:
      return summary
  }
}

/**
 * What the log holds of its last turn (from its `turn/start`; its `turn/end`, a crash repair's or a
 * cancel's, left out): where a resumed turn's summary starts (DEC-16), so a resume that only closes
 * the turn still reports the answer logged before the crash.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ofLastTurn = (events: ReadonlyArray<SessionEvent>): Summary => {
  let start = events.length
  while (start > 0 && events[start - 1]!.type !== "turn/start") start--
  return start === 0 ? empty : events.slice(start - 1).filter((e) => e.type !== "turn/end").reduce(step, empty)
}

/**
 * The `subtype` of a result.
 *
 * @since 0.1.0
 * @category models
 */
export type Subtype = "success" | "error" | "cancelled"

/**
 * The subtype of an end reason (`error` when the turn did not end or was not saved).
 *
 * @since 0.1.0
 * @category utils
 */
export const subtypeOf = (reason: TurnEndReason | undefined, saved: boolean): Subtype => {
  if (!saved || reason === undefined) return "error"
  switch (reason.kind) {
    case "completed":
    case "max-tokens":
      return "success"
    case "aborted":
    case "disposed":
      return "cancelled"
    default:
      return "error"
  }
}

/**
 * The `{"type":"result", …}` object (see `docs/cli-json.md`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const resultLine = (options: {
  readonly sessionId: string
  readonly summary: Summary
  readonly durationMs: number
  /** the one-line save failure, when the session could not be saved */
  readonly saveError?: string | undefined
}) => {
  const { summary } = options
  return {
    type: "result" as const,
    session_id: options.sessionId,
    subtype: subtypeOf(summary.reason, options.saveError === undefined),
    result: summary.stepText !== "" ? summary.stepText : summary.lastText,
    usage: summary.usage,
    duration_ms: options.durationMs,
    num_steps: summary.steps,
    cost: summary.cost ?? null,
    cache: { hit_rate: ModelCatalog.hitRate(summary.usage) ?? null, saved: summary.saved ?? null },
    turn_end_reason: summary.reason ?? null,
    ...(options.saveError === undefined ? {} : { error: options.saveError })
  }
}
