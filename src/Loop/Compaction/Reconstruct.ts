/**
 * Rebuilding the summary requests from the log alone (K-10, AC-113): for each `compact/summary`,
 * the request = the latest `request/header` before its `compact/start` (config with the logged
 * provider, model and `maxTokens`; system prompt; tools; session prefix) + the projection of the
 * surface nodes from `range.start` to `range.end` of the surface just before the summary event +
 * one user message holding the logged instruction.
 *
 * @since 0.1.0
 */
import type { GenerateOptions } from "../../Llm/Message.js"
import * as Projection from "../../Session/Projection.js"
import * as RequestHeader from "../../Session/RequestHeader.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as Surface from "../../Session/Surface.js"
import { summaryRequest } from "./Compactor.js"

/**
 * One rebuilt summary request.
 *
 * @since 0.1.0
 * @category models
 */
export interface RebuiltSummary {
  /** seq of the `compact/summary` event */
  readonly seq: number
  readonly request: GenerateOptions | undefined
}

/**
 * Every summary request of a log, in log order.
 *
 * @since 0.1.0
 * @category reconstruction
 */
export const summaryRequests = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<RebuiltSummary> => {
  const out: Array<RebuiltSummary> = []
  let startAt = 0
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as SessionEvent
    if (e.type === "compact/start") startAt = i
    if (e.type !== "compact/summary") continue
    const header = RequestHeader.foldRequestHeader(events.slice(0, startAt))
    if (header === undefined) {
      out.push({ seq: e.seq, request: undefined })
      continue
    }
    const nodes = Surface.foldSurface(events.slice(0, i)).nodes
    const a = nodes.findIndex((n) => n.seq === e.data.range.start)
    const b = nodes.findIndex((n) => n.seq === e.data.range.end)
    const shadowed = a < 0 || b < a ? [] : Projection.deriveMessages(nodes.slice(a, b + 1))
    out.push({
      seq: e.seq,
      request: summaryRequest(header, { provider: e.data.provider, model: e.data.model }, e.data.maxTokens, shadowed, e.data.instruction)
    })
  }
  return out
}
