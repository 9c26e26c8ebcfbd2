/**
 * Named spans of the service-level operations (issue 18): `Agent.make`, `Agent.send`,
 * `SessionStore.create`/`flush`, … appear in a trace, while the GenAI spans keep their shape: every
 * turn's `invoke_agent` stays under the span current where the agent was created (never under the
 * short `Agent.make` span), and `chat` stays a direct child of `invoke_agent`.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as TestKit from "../../src/Loop/TestKit.js"

const traced = (outer: boolean) => {
  const exporter = new InMemorySpanExporter()
  const tracing = NodeSdk.layer(() => ({ resource: { serviceName: "named-spans-test" }, spanProcessor: new SimpleSpanProcessor(exporter) }))
  const body = Effect.gen(function*() {
    const t = yield* TestKit.agent()
    yield* t.prompt("hi")
  })
  return (outer ? Effect.withSpan(body, "embedder.request") : body).pipe(
    Effect.scoped,
    Effect.provide(TestKit.layer({ script: [Scripted.text("hello")] })),
    Effect.map(() => [...exporter.getFinishedSpans()]),
    Effect.provide(tracing)
  )
}

const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => {
  const found = spans.filter((s) => s.name === name)
  expect(found, name).toHaveLength(1)
  return found[0] as ReadableSpan
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

describe("named spans (issue 18)", () => {
  it.live("service-level operations are named spans; a turn is not nested under Agent.make", () =>
    Effect.gen(function*() {
      const spans = yield* traced(false)
      const names = spans.map((s) => s.name)
      for (const name of ["Agent.make", "Agent.send", "SessionStore.create", "effect_harness.session.flush", "SessionPrefix.compose"]) {
        expect(names).toContain(name)
      }
      const make = named(spans, "Agent.make")
      const turn = named(spans, "invoke_agent effect-harness")
      expect(parentOf(turn)).toBeUndefined()
      expect(parentOf(named(spans, "chat test"))).toBe(turn.spanContext().spanId)
      expect(parentOf(named(spans, "SessionStore.create"))).toBe(make.spanContext().spanId)
    }))

  it.live("under an embedder's span, the turn hangs under that span (as before Agent.make had a span)", () =>
    Effect.gen(function*() {
      const spans = yield* traced(true)
      const outer = named(spans, "embedder.request")
      expect(parentOf(named(spans, "Agent.make"))).toBe(outer.spanContext().spanId)
      expect(parentOf(named(spans, "invoke_agent effect-harness"))).toBe(outer.spanContext().spanId)
    }))
})
