/**
 * Context pressure (K-2): how full the next request's context is, in tokens.
 *
 * Pressure = the whole-context usage the model reported on the latest assistant message still
 * valid on the surface (input + cache read + cache write + output, V-6's disjoint fields) plus the
 * {@link Estimate} of every surface node after it (tool results, injected context, steering,
 * prompts). With no valid usage (a fresh session, or after any surface replace — the reported
 * numbers describe a context that no longer exists), the whole projected request is estimated:
 * system prompt, tool definitions, session prefix and every surface node.
 *
 * A usage anchor is valid when its assistant message sits on the surface and no node that entered
 * by a replace has a higher seq (a replace after the anchor changed what the anchor measured).
 *
 * The {@link Tracker} is incremental: per measure it visits the nodes appended since the previous
 * measure (to keep the highest replacing seq) and walks back from the end only to the latest
 * anchor — O(new events) per step; a replace (new generation) costs one full pass.
 *
 * @since 0.1.0
 */
import type { TokenUsage } from "../../Llm/Message.js"
import type { SurfaceView } from "../../Session/Session.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as Estimate from "./Estimate.js"

/**
 * The whole-context tokens of one usage record (V-6: disjoint fields; reasoning is inside output).
 *
 * @since 0.1.0
 * @category utils
 */
export const usageTotal = (u: TokenUsage): number =>
  u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + u.outputTokens

/**
 * One measurement.
 *
 * @since 0.1.0
 * @category models
 */
export interface Measure {
  readonly tokens: number
  /** `true` when a reported usage anchored it, `false` when it is a full estimate */
  readonly anchored: boolean
}

/**
 * An incremental pressure meter over one session's surface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tracker {
  /** measures the surface; `fixed` = the estimate of system + tools + prefix (used without anchor) */
  readonly measure: (view: SurfaceView, fixed: number) => Measure
}

/**
 * A fresh tracker.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tracker = (): Tracker => {
  let generation = -1
  let seen = 0
  let maxReplaceSeq = -1
  return {
    measure: (view, fixed) => {
      const nodes = view.nodes
      if (view.replaceGeneration !== generation || nodes.length < seen) {
        generation = view.replaceGeneration
        seen = 0
        maxReplaceSeq = -1
      }
      for (let i = seen; i < nodes.length; i++) {
        const node = nodes[i] as SessionEvent
        if (node.surfaceOp !== undefined && node.surfaceOp !== "append" && node.seq > maxReplaceSeq) {
          maxReplaceSeq = node.seq
        }
      }
      seen = nodes.length
      let sum = 0
      for (let i = nodes.length - 1; i >= 0; i--) {
        const node = nodes[i] as SessionEvent
        if (node.type === "assistant/message" && node.data.usage !== undefined && node.seq > maxReplaceSeq) {
          return { tokens: usageTotal(node.data.usage) + sum, anchored: true }
        }
        sum += Estimate.event(node)
      }
      return { tokens: fixed + sum, anchored: false }
    }
  }
}

/**
 * A one-shot measurement (no incremental state).
 *
 * @since 0.1.0
 * @category utils
 */
export const measure = (view: SurfaceView, fixed: number): Measure => tracker().measure(view, fixed)
