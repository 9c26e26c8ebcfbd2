/**
 * The model catalog (K-1): what the harness knows about a `(provider, model)` pair — its context
 * window, its maximum output and, where the provider publishes them, its prices.
 *
 * Built-in entries cover the default models of every provider profile the CLI ships (DeepSeek,
 * Anthropic, OpenAI) and their current siblings; the facts come from the providers' public model
 * and pricing pages (dated in {@link builtIn}). Embedders and the CLI override or add entries with
 * {@link layer} (`entries` win over built-ins by `(provider, model)`); `--context-window N` in the
 * CLI is such an override.
 *
 * An unknown model is never an error: it gets the configured default (`defaultContextWindow`,
 * 128k unless set; `defaultMaxOutputTokens`, 8,192 unless set) and `known: false`. The first
 * lookup of each unknown pair in a catalog instance is logged once (warning level, through the
 * Effect logger), never silently; the loop additionally records a `model/notice` session event
 * (see `Loop/Compaction`).
 *
 * Prices are USD per million tokens, split as V-6 splits usage (input excludes cached input). Each provider's
 * entries name their source page and when it was read; the loop prices every request with them and logs the cost
 * with the usage ({@link requestCost}, issue 19), so a later price change never rewrites a logged cost.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { TokenUsage } from "./Message.js"

/**
 * Published prices, USD per million tokens.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pricing {
  readonly inputPerMTok: number
  readonly outputPerMTok: number
  readonly cacheReadPerMTok?: number
  readonly cacheWritePerMTok?: number
}

/**
 * What the catalog answers for one model.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelFacts {
  readonly contextWindow: number
  readonly maxOutputTokens: number
  readonly pricing?: Pricing
}

/**
 * One catalog entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry extends ModelFacts {
  readonly provider: string
  readonly model: string
}

/**
 * A lookup answer: the facts, and whether they came from an entry (`known`) or the defaults.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lookup {
  readonly facts: ModelFacts
  readonly known: boolean
}

/**
 * The default window of an unknown model (K-1).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CONTEXT_WINDOW = 128_000

/**
 * The default maximum output of an unknown model.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8_192

const entry = (provider: string, model: string, contextWindow: number, maxOutputTokens: number, pricing?: Pricing): Entry =>
  pricing === undefined
    ? { provider, model, contextWindow, maxOutputTokens }
    : { provider, model, contextWindow, maxOutputTokens, pricing }

/**
 * The built-in entries (facts from the providers' public model and pricing pages, as of late
 * 2025; override any of them with {@link layer}). The `scripted` route's offline demo model is
 * listed so the CLI's demo has a window too.
 *
 * @since 0.1.0
 * @category constants
 */
export const builtIn: ReadonlyArray<Entry> = Object.freeze([
  // DeepSeek: https://api-docs.deepseek.com/quick_start/pricing ("Models & Pricing"), prices as listed in late 2025
  // (input = cache miss, cacheRead = cache hit); 128K context; V4 ids are the P-1 profile defaults
  entry("deepseek", "deepseek-v4-flash", 128_000, 8_192, { inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 }),
  entry("deepseek", "deepseek-v4-pro", 128_000, 65_536, { inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 }),
  entry("deepseek", "deepseek-chat", 128_000, 8_192, { inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 }),
  entry("deepseek", "deepseek-reasoner", 128_000, 65_536, { inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 }),
  // Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing and "Models overview", as listed in late 2025
  // (cacheWrite = 5-minute cache write, 1.25x input; a 1-hour write is 2x input and is priced here at the 5-minute
  // rate, since the usage record does not split writes by TTL); 200K context
  entry("anthropic", "claude-sonnet-4-5", 200_000, 64_000, {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75
  }),
  entry("anthropic", "claude-opus-4-5", 200_000, 64_000, {
    inputPerMTok: 5,
    outputPerMTok: 25,
    cacheReadPerMTok: 0.5,
    cacheWritePerMTok: 6.25
  }),
  entry("anthropic", "claude-haiku-4-5", 200_000, 64_000, {
    inputPerMTok: 1,
    outputPerMTok: 5,
    cacheReadPerMTok: 0.1,
    cacheWritePerMTok: 1.25
  }),
  entry("anthropic", "claude-opus-4-1", 200_000, 32_000, {
    inputPerMTok: 15,
    outputPerMTok: 75,
    cacheReadPerMTok: 1.5,
    cacheWritePerMTok: 18.75
  }),
  // OpenAI: https://platform.openai.com/docs/pricing and the model pages, as listed in late 2025 (standard tier)
  entry("openai", "gpt-4.1-mini", 1_047_576, 32_768, { inputPerMTok: 0.4, outputPerMTok: 1.6, cacheReadPerMTok: 0.1 }),
  entry("openai", "gpt-4.1", 1_047_576, 32_768, { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 }),
  entry("openai", "gpt-4o", 128_000, 16_384, { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25 }),
  entry("openai", "gpt-5", 400_000, 128_000, { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 }),
  entry("openai", "gpt-5-mini", 400_000, 128_000, { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 }),
  entry("openai", "o4-mini", 200_000, 100_000, { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 }),
  // Gateways' default models (P-11, P-12): windows from the providers' model pages as listed in late 2025; no
  // prices, because a gateway's price depends on the account and route (such requests are logged unpriced)
  entry("gemini", "gemini-2.5-flash", 1_048_576, 65_536),
  entry("openrouter", "openai/gpt-4.1-mini", 1_047_576, 32_768),
  entry("groq", "llama-3.3-70b-versatile", 131_072, 32_768),
  entry("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 131_072, 8_192),
  // the keyless offline demo (the CLI's scripted route): no prices, so its cost is unknown, never $0
  entry("scripted", "demo", DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS)
])

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** entries that override or extend the built-ins (matched by provider and model) */
  readonly entries?: ReadonlyArray<Entry>
  /** drop the built-ins (only `entries` are known) */
  readonly replaceBuiltIn?: boolean
  /** window of an unknown model (default 128k) */
  readonly defaultContextWindow?: number
  /** max output of an unknown model (default 8,192) */
  readonly defaultMaxOutputTokens?: number
}

/**
 * The catalog service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The facts of `(provider, model)`; an unknown pair gets the defaults, logged once. */
  readonly lookup: (provider: string, model: string) => Effect.Effect<Lookup>
  /** Every known entry (built-ins with overrides applied, then added entries). */
  readonly entries: ReadonlyArray<Entry>
}

/**
 * The catalog key: a `Context.Reference` whose default is the built-in catalog. [DECISION] Optional
 * by intent (issue 28 item 5): every model runs on the built-ins unless an embedder provides a
 * catalog ({@link layer}), so the default is part of the type instead of an optional lookup at
 * each use. The default is built once per process (so an unknown model is logged once per process).
 *
 * @since 0.1.0
 * @category tags
 */
export const ModelCatalog: Context.Reference<Service> = Context.Reference<Service>("effect-harness/Llm/ModelCatalog", {
  defaultValue: () => unsafeMake()
})

const keyOf = (provider: string, model: string): string => `${provider}\u0000${model}`

const positive = (n: number | undefined, fallback: number): number =>
  n !== undefined && Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback

/**
 * Builds a catalog synchronously (no logging state is shared between instances).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = (options: Options = {}): Service => {
  const table = new Map<string, Entry>()
  if (options.replaceBuiltIn !== true) for (const e of builtIn) table.set(keyOf(e.provider, e.model), e)
  for (const e of options.entries ?? []) table.set(keyOf(e.provider, e.model), Object.freeze({ ...e }))
  const defaults: ModelFacts = Object.freeze({
    contextWindow: positive(options.defaultContextWindow, DEFAULT_CONTEXT_WINDOW),
    maxOutputTokens: positive(options.defaultMaxOutputTokens, DEFAULT_MAX_OUTPUT_TOKENS)
  })
  const noticed = new Set<string>()
  const entries = Object.freeze([...table.values()])
  return {
    entries,
    lookup: (provider, model) =>
      Effect.suspend(() => {
        const key = keyOf(provider, model)
        const found = table.get(key)
        if (found !== undefined) return Effect.succeed<Lookup>({ facts: found, known: true })
        const answer: Lookup = { facts: defaults, known: false }
        if (noticed.has(key)) return Effect.succeed(answer)
        noticed.add(key)
        return Effect.as(
          Effect.logWarning(
            `model catalog: unknown model ${provider}/${model}; assuming a ${defaults.contextWindow}-token context window`
          ),
          answer
        )
      })
  }
}

/**
 * Builds a catalog.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service> => Effect.sync(() => unsafeMake(options))

/**
 * The catalog as a Layer (built-ins, plus `options` overrides).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<never> => Layer.effect(ModelCatalog, make(options))

/**
 * The cost of one usage record in USD, or `undefined` when the model has no published prices.
 *
 * @since 0.1.0
 * @category utils
 */
export const costOf = (facts: ModelFacts, usage: TokenUsage): number | undefined => {
  const p = facts.pricing
  if (p === undefined) return undefined
  const mtok = (n: number | undefined, price: number | undefined) => ((n ?? 0) * (price ?? p.inputPerMTok)) / 1_000_000
  return mtok(usage.inputTokens, p.inputPerMTok) +
    mtok(usage.cacheReadTokens, p.cacheReadPerMTok) +
    mtok(usage.cacheWriteTokens, p.cacheWritePerMTok) +
    mtok(usage.outputTokens, p.outputPerMTok)
}

/**
 * The published prices of `(provider, model)` in a catalog, or `undefined` (unknown or unpriced). Unlike
 * `lookup` it never logs: pricing an unknown model is not a warning.
 *
 * @since 0.1.0
 * @category utils
 */
export const pricingOf = (catalog: Service, provider: string, model: string): Pricing | undefined => {
  for (const e of catalog.entries) if (e.provider === provider && e.model === model) return e.pricing
  return undefined
}

/** `f` of a request's usage at the catalog's prices of its model; `undefined` when unpriced or without usage. */
const atPrices = (
  catalog: Service,
  provider: string,
  model: string,
  usage: TokenUsage | undefined,
  f: (pricing: Pricing, usage: TokenUsage) => number | undefined
): number | undefined => {
  if (usage === undefined) return undefined
  const pricing = pricingOf(catalog, provider, model)
  return pricing === undefined ? undefined : f(pricing, usage)
}

/**
 * The cost in USD of one request's usage at the catalog's prices, rounded to 1e-10 USD (no float noise in logs);
 * `undefined` when the model has no published prices or there is no usage.
 *
 * @since 0.1.0
 * @category utils
 */
export const requestCost = (
  catalog: Service,
  provider: string,
  model: string,
  usage: TokenUsage | undefined
): number | undefined =>
  atPrices(catalog, provider, model, usage, (pricing, u) => {
    const cost = costOf({ contextWindow: 0, maxOutputTokens: 0, pricing }, u)
    return cost === undefined ? undefined : roundUsd(cost)
  })

/**
 * A USD amount rounded to 1e-10 (sums of logged costs stay readable).
 *
 * @since 0.1.0
 * @category utils
 */
export const roundUsd = (usd: number): number => Math.round(usd * 1e10) / 1e10

/**
 * What prompt caching saved on one request in USD at these prices: cache reads at the input price minus their
 * read price, less the premium of cache writes over the input price (a write costs more than plain input, so a
 * request that only writes saves a negative amount; the next request's reads pay it back).
 *
 * @since 0.1.0
 * @category utils
 */
export const cacheSavings = (pricing: Pricing, usage: TokenUsage): number =>
  ((usage.cacheReadTokens ?? 0) * (pricing.inputPerMTok - (pricing.cacheReadPerMTok ?? pricing.inputPerMTok)) -
    (usage.cacheWriteTokens ?? 0) * ((pricing.cacheWritePerMTok ?? pricing.inputPerMTok) - pricing.inputPerMTok)) /
  1_000_000

/**
 * {@link cacheSavings} of one request at a catalog's prices, rounded like {@link requestCost}; `undefined` when
 * the model is unpriced or there is no usage.
 *
 * @since 0.1.0
 * @category utils
 */
export const requestSavings = (
  catalog: Service,
  provider: string,
  model: string,
  usage: TokenUsage | undefined
): number | undefined => atPrices(catalog, provider, model, usage, (pricing, u) => roundUsd(cacheSavings(pricing, u)))

/**
 * The cache hit rate of a usage record: cached input / total input (input + cache reads + cache writes);
 * `undefined` when there is no input.
 *
 * @since 0.1.0
 * @category utils
 */
export const hitRate = (usage: TokenUsage): number | undefined => {
  const read = usage.cacheReadTokens ?? 0
  const total = usage.inputTokens + read + (usage.cacheWriteTokens ?? 0)
  return total === 0 ? undefined : read / total
}
