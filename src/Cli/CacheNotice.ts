/**
 * Cache-break notices (issue 30, DEC-17): what the CLI says before a warm prompt cache breaks.
 *
 * - `run` (and the chat's line mode): a request whose logged attribution (`request/cache`) names a cause prints
 *   one stderr line before the request goes out — the cause, the tokens re-sent and their estimated extra cost
 *   ({@link breakLine});
 * - the chat's terminal UI asks before an action that would break a warm cache (`/model` to another model,
 *   `/compact`), with the same figures ({@link warning}).
 *
 * The extra cost of re-sending `n` tokens is `n` × (the cache-write price, else the input price, − the cache-read
 * price), at the model catalog's prices; unpriced models get the tokens only. A cache is warm when the session's
 * last request was sent within its provider's TTL (`CacheAttribution.Ttl`; no TTL: always warm); {@link ttlOf}
 * is that TTL for `--cache-ttl`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ModelCatalog from "../Llm/ModelCatalog.js"
import * as CacheAttribution from "../Session/CacheAttribution.js"
import type { Session } from "../Session/Session.js"
import type { SessionEvent } from "../Session/SessionEvent.js"

/**
 * The extra USD of sending `tokens` uncached instead of reading them from the cache.
 *
 * @since 0.1.0
 * @category utils
 */
export const resendCost = (tokens: number, pricing: ModelCatalog.Pricing): number =>
  ModelCatalog.roundUsd(
    (tokens * ((pricing.cacheWritePerMTok ?? pricing.inputPerMTok) - (pricing.cacheReadPerMTok ?? pricing.inputPerMTok))) /
      1_000_000
  )

const figures = (tokens: number, pricing: ModelCatalog.Pricing | undefined): string =>
  `~${tokens} tokens${pricing === undefined ? "" : ` (~$${resendCost(tokens, pricing).toFixed(4)} more than cached)`}`

/**
 * The stderr line of a request that breaks its cached prefix, or `undefined` when it does not.
 *
 * @since 0.1.0
 * @category utils
 */
export const breakLine = (
  attribution: CacheAttribution.Attribution,
  pricing: ModelCatalog.Pricing | undefined
): string | undefined => {
  const resent = attribution.requestTokens - attribution.prefixTokens
  if (attribution.cause === undefined || resent <= 0) return undefined
  return `prompt cache break (${attribution.cause}): this request re-sends ${figures(resent, pricing)}`
}

const reportsCache = (e: SessionEvent): boolean =>
  e.type === "assistant/message" && ((e.data.usage?.cacheReadTokens ?? 0) > 0 || (e.data.usage?.cacheWriteTokens ?? 0) > 0)

/**
 * The tokens of the session's warm cached prefix at `now` (its last request), or `undefined` when the provider
 * never reported cache activity or the cache is cold (`ttl`
 * passed since; `ttl` undefined: never cold).
 *
 * @since 0.1.0
 * @category utils
 */
export const warmTokens = (events: ReadonlyArray<SessionEvent>, ttl: number | undefined, now: number): number | undefined => {
  // a provider that never reported a cache read or write (the offline demo, a server without prompt
  // caching) has no cache to lose
  if (!events.some(reportsCache)) return undefined
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent
    if (e.type !== "request/cache") continue
    return ttl !== undefined && now - e.time > ttl ? undefined : e.data.requestTokens
  }
  return undefined
}

/**
 * The question to ask before `action` (e.g. "switching to claude-opus-4-5") on a session whose cache is warm, or
 * `undefined` when there is nothing to lose.
 *
 * @since 0.1.0
 * @category utils
 */
export const warning = (
  session: Session,
  route: { readonly provider: string; readonly model: string },
  action: string
): Effect.Effect<string | undefined> =>
  Effect.map(Effect.all([session.heldEvents, Clock.currentTimeMillis, CacheAttribution.Ttl]), ([events, now, ttl]) => {
    const tokens = warmTokens(events, ttl(route.provider), now)
    if (tokens === undefined) return undefined
    const pricing = ModelCatalog.pricingOf(ModelCatalog.unsafeMake(), route.provider, route.model)
    return `${action} breaks the warm prompt cache: the next request re-sends ${figures(tokens, pricing)}. Continue?`
  })

/**
 * The TTLs `--cache-ttl` means: one hour for Anthropic with `1h`, else the providers' defaults.
 *
 * @since 0.1.0
 * @category utils
 */
export const ttlOf = (cacheTtl: "5m" | "1h" | undefined) => (provider: string): number | undefined =>
  provider === "anthropic" && cacheTtl === "1h" ? 3_600_000 : CacheAttribution.defaultTtlMs(provider)
