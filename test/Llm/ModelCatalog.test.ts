import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as ModelCatalog from "../../src/Llm/ModelCatalog.js"

describe("ModelCatalog (K-1)", () => {
  it.effect("K-1 every provider profile's default model has a built-in entry", () =>
    Effect.gen(function*() {
      const catalog = yield* ModelCatalog.make()
      for (const [provider, model] of [
        ["deepseek", "deepseek-v4-flash"],
        ["deepseek", "deepseek-v4-pro"],
        ["anthropic", "claude-sonnet-4-5"],
        ["openai", "gpt-4.1-mini"],
        ["scripted", "demo"]
      ] as const) {
        const found = yield* catalog.lookup(provider, model)
        expect(found.known, `${provider}/${model}`).toBe(true)
        expect(found.facts.contextWindow).toBeGreaterThan(found.facts.maxOutputTokens)
      }
      expect((yield* catalog.lookup("anthropic", "claude-sonnet-4-5")).facts.contextWindow).toBe(200_000)
    }))

  it.effect("K-1 a Layer overrides a built-in entry and adds new ones", () =>
    Effect.gen(function*() {
      const catalog = yield* ModelCatalog.ModelCatalog
      expect((yield* catalog.lookup("anthropic", "claude-sonnet-4-5")).facts).toMatchObject({
        contextWindow: 64_000,
        maxOutputTokens: 4_000
      })
      expect((yield* catalog.lookup("local", "tiny")).facts.contextWindow).toBe(8_000)
      expect((yield* catalog.lookup("openai", "gpt-4.1-mini")).known).toBe(true)
    }).pipe(Effect.provide(ModelCatalog.layer({
      entries: [
        { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 64_000, maxOutputTokens: 4_000 },
        { provider: "local", model: "tiny", contextWindow: 8_000, maxOutputTokens: 1_000 }
      ]
    }))))

  it.effect("K-1 an unknown model gets the configured default window and is logged once", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => {
        lines.push(String(message))
      })
      const catalog = yield* ModelCatalog.make({ defaultContextWindow: 32_000 })
      const run = Effect.gen(function*() {
        const a = yield* catalog.lookup("nowhere", "mystery-1")
        const b = yield* catalog.lookup("nowhere", "mystery-1")
        const c = yield* catalog.lookup("nowhere", "mystery-2")
        return [a, b, c]
      }).pipe(Effect.provide(Logger.layer([logger])))
      const [a, b, c] = yield* run
      expect(a).toEqual({ known: false, facts: { contextWindow: 32_000, maxOutputTokens: 8_192 } })
      expect(b?.known).toBe(false)
      expect(c?.facts.contextWindow).toBe(32_000)
      expect(lines.filter((l) => l.includes("mystery-1"))).toHaveLength(1)
      expect(lines.filter((l) => l.includes("mystery-2"))).toHaveLength(1)
      expect((yield* (yield* ModelCatalog.make()).lookup("x", "y")).facts.contextWindow).toBe(128_000)
    }))

  it("K-1 cost from published prices (V-6 split), none without prices", () => {
    const facts = ModelCatalog.builtIn.find((e) => e.model === "claude-sonnet-4-5")
    expect(facts).toBeDefined()
    if (facts === undefined) return
    expect(ModelCatalog.costOf(facts, { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000 }))
      .toBeCloseTo(3 + 15 + 0.3)
    expect(ModelCatalog.costOf({ contextWindow: 1, maxOutputTokens: 1 }, { inputTokens: 1, outputTokens: 1 }))
      .toBeUndefined()
  })
})
