/**
 * What the loop logs next to a model request's usage (issue 19): its cost in USD at the model catalog's prices
 * (`cost` on `assistant/message` and `compact/summary`, absent when the model is unpriced, and in logs written
 * before it existed), and each transport-level retry of the request as a `request/retry` event (non-core: a
 * reader without this declaration round-trips it verbatim). `harness sessions stats` totals both.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { GenerateOptions, TokenUsage } from "../../Llm/Message.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type * as Retry from "../../Llm/Retry.js"
import type { Runtime } from "./Runtime.js"
import type * as Spans from "./Spans.js"

declare module "../../Session/SessionEvent.js" {
  interface SessionEventMap {
    /** a model request failed before its first chunk and is retried after `delayMs` (DEC-3) */
    readonly "request/retry": {
      readonly turn: number
      readonly step: number
      /** the failed attempt, 1-based */
      readonly attempt: number
      readonly delayMs: number
      readonly code: string
    }
  }
}

/**
 * `{ cost }` for a request's usage at the catalog's prices, or `{}` when unpriced (spread into an event payload).
 *
 * @since 0.1.0
 * @category utils
 */
export const field = (
  catalog: ModelCatalog.Service,
  route: { readonly provider: string; readonly model: string },
  usage: TokenUsage | undefined
): { readonly cost?: number } => {
  const cost = ModelCatalog.requestCost(catalog, route.provider, route.model, usage)
  return cost === undefined ? {} : { cost }
}

/**
 * An event payload with its request's cost added when priced.
 *
 * @since 0.1.0
 * @category utils
 */
export const priced = <D extends { readonly usage?: TokenUsage }>(
  rt: Runtime,
  route: { readonly provider: string; readonly model: string },
  data: D
): D => {
  const cost = field(rt.catalog, route, data.usage)
  return cost.cost === undefined ? data : { ...data, ...cost }
}

/**
 * The request span's options: the request's price, and each retry logged as `request/retry` in the session
 * (a failed append is logged, not fatal: the request goes on, and the next append reports the session's state).
 *
 * @since 0.1.0
 * @category utils
 */
export const chatOptions = (
  rt: Runtime,
  request: GenerateOptions,
  position: { readonly turn: number; readonly step: number }
): Spans.ChatOptions => ({
  cost: (usage) => ModelCatalog.requestCost(rt.catalog, request.provider, request.model, usage),
  onRetry: (notice: Retry.RetryNotice) =>
    rt.session.append({
      type: "request/retry",
      data: {
        turn: position.turn,
        step: position.step,
        attempt: notice.attempt,
        delayMs: notice.delayMs,
        code: notice.code
      }
    }).pipe(
      Effect.asVoid,
      Effect.catch((error) => Effect.logWarning("could not log a model request retry in the session", error))
    )
})
