import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as CacheNotice from "../../src/Cli/CacheNotice.js"
import * as Output from "../../src/Cli/Output.js"
import * as ModelCatalog from "../../src/Llm/ModelCatalog.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"

const sonnet = ModelCatalog.pricingOf(ModelCatalog.unsafeMake(), "anthropic", "claude-sonnet-4-5")!
const cacheEvent = (seq: number, time: number, data: Record<string, unknown>) =>
  ({ type: "request/cache", seq, time, data: { turn: 1, step: 1, ...data } }) as SessionEvent

describe("cache-break notices (issue 30)", () => {
  it("a request that breaks the prefix: one line with the cause, the tokens re-sent and their extra cost", () => {
    const line = CacheNotice.breakLine({ prefixBytes: 40, requestBytes: 40_040, prefixTokens: 10, requestTokens: 10_010, cause: "model-changed", divergence: { part: "route" } }, sonnet)
    // 10,000 tokens at the write price 3.75 instead of the read price 0.30 per million
    expect(line).toBe("prompt cache break (model-changed): this request re-sends ~10000 tokens (~$0.0345 more than cached)")
    expect(CacheNotice.breakLine({ prefixBytes: 100, requestBytes: 120, prefixTokens: 25, requestTokens: 30 }, sonnet)).toBeUndefined()
    expect(CacheNotice.breakLine({ prefixBytes: 0, requestBytes: 40, prefixTokens: 0, requestTokens: 10, cause: "compaction" }, undefined))
      .toBe("prompt cache break (compaction): this request re-sends ~10 tokens")
  })

  it("warm: the last request within the provider's TTL (Anthropic 5 minutes, 1 hour with --cache-ttl 1h; DeepSeek keeps its cache)", () => {
    const request = cacheEvent(0, 1_000, { prefixBytes: 0, requestBytes: 8_000, prefixTokens: 0, requestTokens: 2_000 })
    const answer = (cacheWriteTokens: number) =>
      ({
        type: "assistant/message",
        seq: 1,
        time: 1_000,
        data: { turn: 1, step: 1, content: [], provenance: { provider: "anthropic", model: "claude-sonnet-4-5" }, usage: { inputTokens: 10, outputTokens: 5, cacheWriteTokens } }
      }) satisfies SessionEvent
    const events = [request, answer(2_000)]
    // a provider that reports no cache activity has no warm cache (the offline demo)
    expect(CacheNotice.warmTokens([request, answer(0)], CacheNotice.ttlOf(undefined)("anthropic"), 1_000 + 60_000)).toBeUndefined()
    const ttl = CacheNotice.ttlOf(undefined)
    expect(CacheNotice.warmTokens(events, ttl("anthropic"), 1_000 + 60_000)).toBe(2_000)
    expect(CacheNotice.warmTokens(events, ttl("anthropic"), 1_000 + 6 * 60_000)).toBeUndefined()
    expect(CacheNotice.warmTokens(events, CacheNotice.ttlOf("1h")("anthropic"), 1_000 + 6 * 60_000)).toBe(2_000)
    expect(CacheNotice.warmTokens(events, ttl("deepseek"), 1_000 + 6 * 60_000)).toBe(2_000)
    expect(CacheNotice.warmTokens([], ttl("anthropic"), 0)).toBeUndefined()
  })

  it.effect("the text printer writes the break line to stderr, never to stdout", () =>
    Effect.gen(function*() {
      const out: Array<string> = []
      const err: Array<string> = []
      const printer = Output.make("text", { stdout: (t) => out.push(t), stderr: (t) => err.push(t) }, {
        contextWindow: 200_000,
        maxOutputTokens: 64_000,
        pricing: sonnet
      })
      yield* printer.observe(cacheEvent(3, 0, { prefixBytes: 0, requestBytes: 400, prefixTokens: 0, requestTokens: 100, cause: "tool-list-changed", divergence: { part: "tools" } }))
      yield* printer.observe(cacheEvent(4, 0, { prefixBytes: 400, requestBytes: 480, prefixTokens: 100, requestTokens: 120 }))
      expect(out).toEqual([])
      expect(err).toEqual(["prompt cache break (tool-list-changed): this request re-sends ~100 tokens (~$0.0003 more than cached)\n"])
    }))
})
