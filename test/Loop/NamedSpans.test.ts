/**
 * Named spans of the service-level operations (issue 18): `Agent.make`, `Agent.send`,
 * `SessionStore.create`/`flush`, … appear in a trace, while the GenAI spans keep their shape: every
 * turn's `invoke_agent` stays under the span current where the agent was created (never under the
 * short `Agent.make` span), and `chat` stays a direct child of `invoke_agent`.
 */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import type { DecodedSpan } from "../Telemetry/OtlpDecode.js"
import * as OtlpReceiver from "../Telemetry/OtlpReceiver.js"

const traced = (outer: boolean) => {
  const body = Effect.gen(function*() {
    const t = yield* TestKit.agent()
    yield* t.prompt("hi")
  })
  return OtlpReceiver.traced(
    (outer ? Effect.withSpan(body, "embedder.request") : body).pipe(
      Effect.scoped,
      Effect.provide(TestKit.layer({ script: [Scripted.text("hello")] }))
    ),
    "named-spans-test"
  ).pipe(Effect.map(({ spans }) => spans))
}

const named = (spans: ReadonlyArray<DecodedSpan>, name: string) => {
  const found = spans.filter((s) => s.name === name)
  expect(found, name).toHaveLength(1)
  return found[0] as DecodedSpan
}
/** the parent span's id (`undefined` for a root: OTLP sends an empty id) */
const parentOf = (span: DecodedSpan) => span.parentSpanId === "" ? undefined : span.parentSpanId

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
      expect(parentOf(named(spans, "chat test"))).toBe(turn.spanId)
      expect(parentOf(named(spans, "SessionStore.create"))).toBe(make.spanId)
    }))

  it.live("under an embedder's span, the turn hangs under that span (as before Agent.make had a span)", () =>
    Effect.gen(function*() {
      const spans = yield* traced(true)
      const outer = named(spans, "embedder.request")
      expect(parentOf(named(spans, "Agent.make"))).toBe(outer.spanId)
      expect(parentOf(named(spans, "invoke_agent effect-harness"))).toBe(outer.spanId)
    }))
})
