import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as GenAi from "../../src/Llm/GenAi.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo } from "../support/LoopKit.js"

/** One traced agent run: a two-step turn (tool call, then text) whose first request is retried once. */
const tracedTurn = (capture: boolean) => {
  const exporter = new InMemorySpanExporter()
  const tracing = NodeSdk.layer(() => ({
    resource: { serviceName: "telemetry-test" },
    spanProcessor: new SimpleSpanProcessor(exporter)
  }))
  const script: Scripted.Script = [
    [Scripted.fail("RATE_LIMIT", "slow down", { status: 429, retryAfterMillis: 1 })],
    Scripted.call("c1", "echo", "{\"text\":\"ping\"}"),
    Scripted.text("done")
  ]
  return Effect.gen(function*() {
    const t = yield* TestKit.agent({ tools: [echo] })
    yield* t.prompt("hi")
    const requests = yield* t.requests
    return { requests, sessionId: t.agent.id }
  }).pipe(
    // the agent is disposed (its turn long finished) before the spans are read; the exporter is read before
    // the tracing layer shuts it down (shutdown clears it)
    Effect.scoped,
    Effect.provide(TestKit.layer({ script, tools: [echo] })),
    Effect.map((run) => ({ ...run, spans: [...exporter.getFinishedSpans()] })),
    Effect.provideService(GenAi.CaptureContent, capture),
    Effect.provide(tracing)
  )
}

const byName = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((s) => s.name === name)
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

describe("GenAI spans (issue 19)", () => {
  it.live("a two-step turn with a tool call and a retried request: invoke_agent > chat, execute_tool, chat", () =>
    Effect.gen(function*() {
      const { requests, sessionId, spans } = yield* tracedTurn(false)
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
      for (const chat of chats) expect(parentOf(chat)).toBe(agent!.spanContext().spanId)
      expect(chats.map((c) => c.attributes["effect_harness.step"])).toEqual([1, 2])
      expect(chats[0]!.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "test"
      })
      // a string array; the OpenTelemetry bridge may carry it JSON-encoded
      expect(String(chats[0]!.attributes["gen_ai.response.finish_reasons"])).toContain("tool_calls")
      expect(chats[1]!.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 4
      })
      expect(String(chats[1]!.attributes["gen_ai.response.finish_reasons"])).toContain("stop")
      const [tool] = byName(spans, "execute_tool echo")
      expect(tool).toBeDefined()
      expect(parentOf(tool!)).toBe(agent!.spanContext().spanId)
      expect(tool!.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "c1"
      })
      expect(tool!.attributes["error.type"]).toBeUndefined()
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
