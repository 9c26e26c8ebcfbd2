import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as GenAi from "../../src/Llm/GenAi.js"
import * as ModelCatalog from "../../src/Llm/ModelCatalog.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo } from "../support/LoopKit.js"
import type { DecodedSpan } from "../Telemetry/OtlpDecode.js"
import * as OtlpReceiver from "../Telemetry/OtlpReceiver.js"

/** One traced agent run: a two-step turn (tool call, then text) whose first request is retried once. */
const tracedTurn = (capture: boolean) => {
  const script: Scripted.Script = [
    [Scripted.fail("RATE_LIMIT", "slow down", { status: 429, retryAfterMillis: 1 })],
    Scripted.call("c1", "echo", "{\"text\":\"ping\"}"),
    Scripted.text("done")
  ]
  return OtlpReceiver.traced(
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ tools: [echo] })
      yield* t.prompt("hi")
      const requests = yield* t.requests
      return { requests, sessionId: t.agent.id, events: yield* t.events }
    }).pipe(
      // the agent is disposed (its turn long finished) before the exporter's layer closes and flushes the spans
      Effect.scoped,
      Effect.provide(TestKit.layer({ script, tools: [echo] })),
      // a price for the scripted route: $2 / $10 per million input / output tokens
      Effect.provide(ModelCatalog.layer({ entries: [{ provider: "scripted", model: "test", contextWindow: 100_000, maxOutputTokens: 1_000, pricing: { inputPerMTok: 2, outputPerMTok: 10 } }] })),
      Effect.provideService(GenAi.CaptureContent, capture)
    ),
    "telemetry-test"
  ).pipe(Effect.map(({ spans, value }) => ({ ...value, spans })))
}

const byName = (spans: ReadonlyArray<DecodedSpan>, name: string) => spans.filter((s) => s.name === name)
/** the parent span's id (`undefined` for a root: OTLP sends an empty id) */
const parentOf = (span: DecodedSpan) => span.parentSpanId === "" ? undefined : span.parentSpanId

describe("GenAI spans (issue 19)", () => {
  it.live("a two-step turn with a tool call and a retried request: invoke_agent > chat, execute_tool, chat", () =>
    Effect.gen(function*() {
      const { events, requests, sessionId, spans } = yield* tracedTurn(false)
      expect(requests).toHaveLength(3) // the retry is a second HTTP-level attempt of the first request
      const [agent] = byName(spans, "invoke_agent effect-harness")
      expect(agent).toBeDefined()
      expect(agent!.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": sessionId,
        "effect_harness.turn": 1,
        "effect_harness.turn.end_reason": "completed"
      })
      const chats = byName(spans, "chat test")
      expect(chats).toHaveLength(2)
      for (const chat of chats) expect(parentOf(chat)).toBe(agent!.spanId)
      expect(chats.map((c) => c.attributes["effect_harness.step"])).toEqual([1, 2])
      expect(chats[0]!.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "test"
      })
      // a string array; the decoder renders an OTLP array as its JSON text
      expect(String(chats[0]!.attributes["gen_ai.response.finish_reasons"])).toContain("tool_calls")
      expect(chats[1]!.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 4
      })
      expect(String(chats[1]!.attributes["gen_ai.response.finish_reasons"])).toContain("stop")
      const [tool] = byName(spans, "execute_tool echo")
      expect(tool).toBeDefined()
      expect(parentOf(tool!)).toBe(agent!.spanId)
      expect(tool!.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "c1"
      })
      expect(tool!.attributes["error.type"]).toBeUndefined()
      // the retry: a child of the first request's span, with the session, turn and step
      const [retry] = byName(spans, "effect_harness.retry")
      expect(retry).toBeDefined()
      expect(byName(spans, "effect_harness.retry")).toHaveLength(1)
      expect(parentOf(retry!)).toBe(chats[0]!.spanId)
      expect(retry!.attributes).toMatchObject({
        "effect_harness.retry.attempt": 1,
        "effect_harness.retry.delay_ms": 1,
        "error.type": "RATE_LIMIT",
        "gen_ai.conversation.id": sessionId,
        "effect_harness.turn": 1,
        "effect_harness.step": 1
      })
      expect(chats[0]!.attributes["effect_harness.request.retries"]).toBe(1)
      expect(chats[1]!.attributes["effect_harness.request.retries"]).toBeUndefined()
      // the turn-end flush: under the turn, naming the session
      const flushes = byName(spans, "effect_harness.session.flush")
      expect(flushes.length).toBeGreaterThan(0)
      expect(flushes.some((f) => parentOf(f) === agent!.spanId)).toBe(true)
      for (const f of flushes) expect(f.attributes["effect_harness.session.id"]).toBe(sessionId)
      // release at disposal: a flush point too
      expect(byName(spans, "effect_harness.session.release")).toHaveLength(1)
      // no per-chunk spans: turn + 2 requests + 1 tool + 1 retry + flushes + release (+ no hooks: none registered),
      // besides the named service-level operations (`Module.name`, issue 18: once per call of a service, never per chunk)
      const expected = new Set(["invoke_agent effect-harness", "chat test", "execute_tool echo", "effect_harness.retry", "effect_harness.session.flush", "effect_harness.session.release"])
      const serviceLevel = /^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$/
      expect(spans.filter((s) => !expected.has(s.name) && !serviceLevel.test(s.name)).map((s) => s.name)).toEqual([])
      // cost: on each request span, logged with each usage, the retry logged as request/retry
      expect(chats[1]!.attributes["effect_harness.cost.usd"]).toBeCloseTo((10 * 2 + 4 * 10) / 1e6, 12)
      const messages = events.flatMap((e) => (e.type === "assistant/message" ? [e.data] : []))
      expect(messages).toHaveLength(2)
      for (const m of messages) expect(m.cost).toBeCloseTo(((m.usage?.inputTokens ?? 0) * 2 + (m.usage?.outputTokens ?? 0) * 10) / 1e6, 12)
      expect(events.filter((e) => e.type === "request/retry").map((e) => e.data)).toEqual([
        { turn: 1, step: 1, attempt: 1, delayMs: 1, code: "RATE_LIMIT" }
      ])
      // no content unless opted in
      for (const span of spans) {
        for (const key of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) {
          expect(span.attributes[key]).toBeUndefined()
        }
      }
    }))

  it.live("content capture is opt-in: with CaptureContent the messages, arguments and results are attached", () =>
    Effect.gen(function*() {
      const { spans } = yield* tracedTurn(true)
      const chats = byName(spans, "chat test")
      expect(String(chats[0]!.attributes["gen_ai.input.messages"])).toContain("hi")
      expect(String(chats[1]!.attributes["gen_ai.output.messages"])).toContain("done")
      const [tool] = byName(spans, "execute_tool echo")
      expect(tool!.attributes["gen_ai.tool.call.arguments"]).toBe("{\"text\":\"ping\"}")
      expect(String(tool!.attributes["gen_ai.tool.call.result"])).toContain("echo: ping")
    }))
})
