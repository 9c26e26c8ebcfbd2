// vitest project: integration
/**
 * The harness's own spans (issue 19), exported over OTLP to a loopback receiver: hook runs, compaction, and a real HTTP adapter
 * over loopback whose key never appears in any span attribute (the HTTP client's spans included).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { describe, expect } from "vitest"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as Retry from "../../src/Llm/Retry.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as Sessions from "../../src/Loop/internal/Sessions.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import * as Wire from "../support/CliWire.js"
import * as FakeProvider from "../support/FakeProvider.js"
import { echo } from "../support/LoopKit.js"
import type { DecodedSpan } from "../Telemetry/OtlpDecode.js"
import * as OtlpReceiver from "../Telemetry/OtlpReceiver.js"
import * as Kit from "./Compaction/Kit.js"

/** Runs `effect` under the OTLP exporter sending to a loopback receiver; returns its value and the received spans. */
const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) => OtlpReceiver.traced(effect, "telemetry-harness-test")

const byName = (spans: ReadonlyArray<DecodedSpan>, name: string) => spans.filter((s) => s.name === name)
/** the parent span's id (`undefined` for a root: OTLP sends an empty id) */
const parentOf = (span: DecodedSpan) => span.parentSpanId === "" ? undefined : span.parentSpanId

describe("harness spans (issue 19)", () => {
  it.live("hook runs: one span per point run with listeners, under the turn, with session, turn and step", () =>
    Effect.gen(function*() {
      const { spans, value: sessionId } = yield* traced(
        Effect.gen(function*() {
          const hooks = yield* Hooks.LoopHooks
          yield* hooks.preStep.register(() => Effect.void)
          yield* hooks.preStep.register(() => Effect.void)
          const t = yield* TestKit.agent()
          yield* t.prompt("hi")
          return t.agent.id
        }).pipe(Effect.scoped, Effect.provide(TestKit.layer({ script: [Kit.say("hello")] })))
      )
      const [turn] = byName(spans, "invoke_agent effect-harness")
      const preSteps = byName(spans, "effect_harness.hook pre-step")
      expect(preSteps).toHaveLength(1) // one run of a two-listener point, one step
      expect(parentOf(preSteps[0]!)).toBe(turn!.spanId)
      expect(preSteps[0]!.attributes).toMatchObject({
        "effect_harness.hook.point": "pre-step",
        "effect_harness.hook.listeners": 2,
        "gen_ai.agent.id": sessionId,
        "gen_ai.conversation.id": sessionId,
        "effect_harness.turn": 1
      })
      // points without listeners open no span
      expect(byName(spans, "effect_harness.hook post-step")).toEqual([])
      expect(spans.filter((s) => s.name.startsWith("effect_harness.hook ")).map((s) => s.name)).toEqual([
        "effect_harness.hook pre-step"
      ])
    }))

  it.live("compaction: a manual compaction while idle: one span with trigger, outcome and pressure", () =>
    Effect.gen(function*() {
      const scenario = Kit.scenario([
        ...Array.from({ length: 3 }, (_, i) => Kit.bigCall(`c${i + 1}`, 8_000)),
        Kit.say("first done")
      ])
      const { spans, value: sessionId } = yield* traced(
        Effect.gen(function*() {
          const t = yield* TestKit.agent({ compaction: { retain: 0.05 } })
          yield* t.prompt("first")
          yield* t.agent.compact({ instructions: "Focus on the files." })
          return t.agent.id
        }).pipe(Effect.scoped, Effect.provide(Kit.layer(scenario.script, 32_000)))
      )
      const compactions = byName(spans, "effect_harness.compaction")
      expect(compactions).toHaveLength(1)
      const [compaction] = compactions
      expect(compaction!.attributes).toMatchObject({
        "effect_harness.compaction.trigger": "manual",
        "effect_harness.compaction.outcome": "done",
        "effect_harness.turn": 2
      })
      expect(Number(compaction!.attributes["effect_harness.compaction.pressure_after"])).toBeLessThan(
        Number(compaction!.attributes["effect_harness.compaction.pressure_before"])
      )
      // a manual compaction while idle is its own turn without an agent invocation: a root span naming the session
      expect(parentOf(compaction!)).toBeUndefined()
      expect(compaction!.attributes["gen_ai.conversation.id"]).toBe(sessionId)
      expect(byName(spans, "invoke_agent effect-harness").map((s) => s.attributes["effect_harness.turn"])).toEqual([1])
    }))

  it.live("compaction inside a turn (threshold): a child of the turn's span", () =>
    Effect.gen(function*() {
      const scenario = Kit.scenario([
        ...Array.from({ length: 12 }, (_, i) => Kit.bigCall(`s${i + 1}`, 8_000))
      ])
      const { spans } = yield* traced(
        Effect.gen(function*() {
          const t = yield* TestKit.agent({ compaction: {} })
          yield* t.prompt("go")
        }).pipe(Effect.scoped, Effect.provide(Kit.layer(scenario.script, 32_000)))
      )
      const compactions = byName(spans, "effect_harness.compaction")
      expect(compactions.length).toBeGreaterThan(0)
      const [turn] = byName(spans, "invoke_agent effect-harness")
      for (const c of compactions) {
        expect(parentOf(c)).toBe(turn!.spanId)
        expect(c.attributes["effect_harness.compaction.trigger"]).toBe("threshold")
      }
    }))

  it.live("no key in any attribute: a real HTTP adapter (key in a header the deployment did not list) with a retry and a tool call", () =>
    Effect.gen(function*() {
      const key = `sk-span-5ecret-${Math.random().toString(36).slice(2)}`
      const fake = yield* FakeProvider.make({
        replies: [
          FakeProvider.status(429),
          FakeProvider.sse(Wire.toolCall("openai-compatible", { id: "call_1", name: "echo", args: "{\"text\":\"ping\"}", text: "ok" }, {
            input: 10,
            output: 5,
            cacheRead: 0
          })),
          FakeProvider.sse(Wire.text("openai-compatible", "done", { input: 12, output: 3, cacheRead: 0 }))
        ]
      })
      // Azure's `api-key` header carries the key; the deployment's own secret list does not name it
      const adapter = OpenAiCompatible.layer({
        profile: "azure",
        apiKey: Redacted.make(key),
        baseUrl: fake.url,
        deployment: "dep",
        secretHeaders: ["x-deployment-token"],
        headers: { "x-deployment-token": `tok-${key}` }
      })
      const services = Layer.provideMerge(
        Agent.layer,
        Layer.mergeAll(
          Llm.layerWith(adapter).pipe(Layer.provide(NodeHttpClient.layerUndici)),
          Hooks.layer,
          SystemPrompt.layerEmpty,
          ToolRuntime.layer({ tools: [echo] }),
          Sessions.layerMemory
        )
      )
      const { spans } = yield* traced(
        Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "azure-openai", model: "dep" })
          yield* agent.send([{ type: "text", text: "hi" }])
          yield* agent.whenIdle
        }).pipe(
          Effect.scoped,
          Effect.provide(services),
          Effect.provide(Retry.layer({ baseDelay: "1 millis", jitter: 0 })),
          // Effect 4 records no HTTP header on client spans by default; record them all (Effect 3's default), so
          // the check covers the headers that carry the key
          Effect.provideService(HttpClient.TracerHeaderFilter, () => true)
        )
      )
      expect(yield* fake.requests).toHaveLength(3)
      const names = spans.map((s) => s.name)
      expect(names).toContain("effect_harness.retry")
      expect(names).toContain("execute_tool echo")
      // the HTTP client's own spans are there, with their request headers (redacted)
      const http = spans.filter((s) => Object.keys(s.attributes).some((k) => k.startsWith("http.request.header.")))
      expect(http.length).toBeGreaterThanOrEqual(3)
      expect(http[0]!.attributes["http.request.header.api-key"]).toBeDefined()
      for (const span of spans) {
        const text = JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events })
        expect(text).not.toContain(key)
        expect(text).not.toContain("5ecret")
      }
    }).pipe(Effect.scoped), 30_000)
})
