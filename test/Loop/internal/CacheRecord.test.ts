import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as Scripted from "../../../src/Adapter/Scripted.js"
import * as Hooks from "../../../src/Loop/Hooks.js"
import * as SystemPrompt from "../../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../../src/Loop/TestKit.js"
import * as CacheAttribution from "../../../src/Session/CacheAttribution.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import { echo } from "../../support/LoopKit.js"

const logged = (events: ReadonlyArray<SessionEvent>) =>
  events.flatMap((e) => {
    if (e.type !== "request/cache") return []
    const { turn: _t, step: _s, ...attribution } = e.data
    return [attribution]
  })

describe("request/cache (issue 30): every request logs its prefix attribution, reconstructable from the log", () => {
  it.effect("append-only turns share the whole previous request; a system prompt change and a model change are named; a resumed instance continues", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const sp = yield* SystemPrompt.SystemPrompt
      yield* hooks.request.register((i, next) => i.turn >= 4 ? Effect.succeed({ ...i.config, model: "other" }) : next())
      const id = "cache-record-session"
      yield* Effect.scoped(Effect.gen(function*() {
        const t = yield* TestKit.agent({ tools: [echo], session: { _tag: "New", id } })
        yield* t.prompt("one")
        yield* t.prompt("two")
        yield* sp.registerSection({ name: "extra", order: 50, text: "Be brief." }, { agentId: id })
        yield* t.prompt("three")
      }))
      const t2 = yield* TestKit.agent({ tools: [echo], session: { _tag: "Resume", id } })
      yield* t2.prompt("four")
      const events = yield* t2.events
      const attributions = logged(events)
      // one per request: 2 (tool call + answer) + 1 + 1 + 1
      expect(attributions).toHaveLength(5)
      expect(attributions.map((a) => a.cause)).toEqual([undefined, undefined, undefined, "system-prompt-changed", "model-changed"])
      expect(attributions[1]?.prefixBytes).toBe(attributions[0]?.requestBytes)
      expect(attributions[2]?.prefixBytes).toBe(attributions[1]?.requestBytes)
      expect(attributions[3]?.divergence).toEqual({ part: "system" })
      // what the loop logged is what the log alone derives
      expect(CacheAttribution.ofLog(events).map((l) => l.attribution)).toEqual(attributions)
      // each request/cache sits inside its step, after the step's header (if any) and before its first chunk
      const cacheAt = events.findIndex((e) => e.type === "request/cache")
      expect(events.slice(0, cacheAt).map((e) => e.type)).toContain("request/header")
      expect(events[cacheAt + 1]?.type).toBe("assistant/chunk")
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "echo", "{\"text\":\"ping\"}"), Scripted.text("pong"), Scripted.text("2"), Scripted.text("3"), Scripted.text("4")],
      tools: [echo]
    }))))

  it.effect("ttl-expired: the provider's TTL (CacheAttribution.Ttl) passed between two otherwise appended requests", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.prompt("one")
      yield* TestClock.adjust("2 minutes")
      yield* t.prompt("two")
      yield* TestClock.adjust("30 seconds")
      yield* t.prompt("three")
      const events = yield* t.events
      const attributions = logged(events)
      expect(attributions.map((a) => a.cause)).toEqual([undefined, "ttl-expired", undefined])
      expect(attributions[1]?.prefixBytes).toBe(attributions[0]?.requestBytes)
      const ttl = (provider: string) => provider === "scripted" ? 60_000 : undefined
      expect(CacheAttribution.ofLog(events, ttl).map((l) => l.attribution)).toEqual(attributions)
    }).pipe(
      Effect.provideService(CacheAttribution.Ttl, (provider) => provider === "scripted" ? 60_000 : undefined),
      Effect.provide(TestKit.layer({ script: [Scripted.text("1"), Scripted.text("2"), Scripted.text("3")] }))
    ))
})
