// vitest project: integration
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as CacheAttribution from "../../src/Session/CacheAttribution.js"
import * as CacheSim from "../support/CacheSim.js"
import * as CacheScenario from "../support/CacheScenario.js"

const scenario = (provider: "deepseek" | "anthropic", minShare: number) =>
  Effect.scoped(Effect.gen(function*() {
    const { events, exchanges } = yield* CacheScenario.runIsolated(provider)
    // the scenario is what it says: 50 prompts, tool calls, two steering messages, one injected context update,
    // one tool-list change, one compaction
    expect(events.filter((e) => e.type === "user/message" && e.data.source.kind === "user")).toHaveLength(CacheScenario.TURNS)
    expect(events.filter((e) => e.type === "tool/result").length).toBeGreaterThan(90)
    expect(events.filter((e) => e.type === "steering/message")).toHaveLength(2)
    expect(events.filter((e) => e.type === "context/message")).toHaveLength(1)
    expect(events.filter((e) => e.type === "compact/summary")).toHaveLength(1)
    // every break is attributed, and only the two the scenario causes happen
    const causes = events.flatMap((e) => e.type === "request/cache" && e.data.cause !== undefined ? [e.data.cause] : [])
    expect(causes).toEqual(["tool-list-changed", "compaction"])
    expect(CacheAttribution.ofLog(events, CacheAttribution.defaultTtlMs).flatMap((l) => l.attribution.cause ?? [])).toEqual(causes)
    // the summary request of the compaction reads the warm prefix
    const summary = events.find((e) => e.type === "compact/summary")
    const summaryUsage = summary?.type === "compact/summary" ? summary.data.usage : undefined
    expect(summaryUsage?.cacheReadTokens ?? 0).toBeGreaterThan(0.9 * ((summaryUsage?.inputTokens ?? 0) + (summaryUsage?.cacheReadTokens ?? 0)))
    expect(CacheSim.readShare(exchanges)).toBeGreaterThanOrEqual(minShare)
  }))

describe("issue 30 acceptance: a 50-turn session keeps the provider's prompt cache warm", () => {
  it.live("DeepSeek simulation (64-token blocks, longest prefix with earlier requests): ≥ 98 % of input tokens read from the cache", () =>
    scenario("deepseek", 0.98), 120_000)

  it.live("Anthropic simulation (breakpoints, 5-minute TTL, 20-block lookback, 1024-token minimum): ≥ 95 % read from the cache", () =>
    scenario("anthropic", 0.95), 120_000)
})
