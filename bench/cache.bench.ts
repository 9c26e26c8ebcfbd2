/**
 * Prompt-cache figures of issue 30 (no timings): the scripted 50-turn session of `test/support/CacheScenario.ts`
 * (tool calls, two steering messages, one injected context update, one tool-list change, one compaction) run by
 * the real loop and adapters against the simulated DeepSeek and Anthropic caches. Per provider, one line with:
 * `value` = the session's cost in USD with caching at the model catalog's prices, `baseline` = the same tokens
 * without caching (every input token at the input price), `ratio` = value / baseline (lower is better), plus the
 * cache-read share of input tokens and the request count.
 */
import * as Effect from "effect/Effect"
import type { TokenUsage } from "../src/Llm/Message.js"
import * as ModelCatalog from "../src/Llm/ModelCatalog.js"
import * as CacheSim from "../test/support/CacheSim.js"
import * as CacheScenario from "../test/support/CacheScenario.js"
import { report } from "./Bench.js"

const catalog = ModelCatalog.unsafeMake()

/** the wire usage of one exchange in the harness's disjoint vocabulary (V-6), output excluded */
const usageOf = (usage: CacheSim.WireUsage): TokenUsage => {
  if (usage["prompt_tokens"] !== undefined) {
    return { inputTokens: usage["prompt_cache_miss_tokens"] ?? 0, outputTokens: 0, cacheReadTokens: usage["prompt_cache_hit_tokens"] ?? 0 }
  }
  return {
    inputTokens: usage["input_tokens"] ?? 0,
    outputTokens: 0,
    cacheReadTokens: usage["cache_read_input_tokens"] ?? 0,
    cacheWriteTokens: usage["cache_creation_input_tokens"] ?? 0
  }
}

const figures = (provider: "deepseek" | "anthropic", exchanges: ReadonlyArray<CacheSim.Exchange>) => {
  const route = CacheScenario.routes[provider]
  let cached = 0
  let uncached = 0
  for (const e of exchanges) {
    const usage = usageOf(e.usage)
    const all = CacheSim.inputOf(e.usage).input
    cached += ModelCatalog.requestCost(catalog, route.provider, route.model, usage) ?? 0
    uncached += ModelCatalog.requestCost(catalog, route.provider, route.model, { inputTokens: all, outputTokens: 0 }) ?? 0
  }
  return { cached: ModelCatalog.roundUsd(cached), uncached: ModelCatalog.roundUsd(uncached) }
}

export async function run(): Promise<void> {
  for (const provider of ["deepseek", "anthropic"] as const) {
    const outcome = await Effect.runPromise(Effect.scoped(Effect.orDie(CacheScenario.runIsolated(provider))))
    const { cached, uncached } = figures(provider, outcome.exchanges)
    report({
      bench: `cache.${provider}.50-turn-session`,
      unit: "USD input cost (lower is better)",
      value: cached,
      baseline: uncached,
      cacheReadShare: Math.round(CacheSim.readShare(outcome.exchanges) * 10_000) / 10_000,
      requests: outcome.exchanges.length
    })
  }
}
