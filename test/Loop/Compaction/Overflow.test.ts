import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ContentBlock from "../../../src/Llm/ContentBlock.js"
import * as TestKit from "../../../src/Loop/TestKit.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import * as Kit from "./Kit.js"

const ofType = <T extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: T) =>
  events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type)

const calls = (n: number, size: number, prefix = "c") =>
  Array.from({ length: n }, (_, i) => Kit.bigCall(`${prefix}${i + 1}`, size))

describe("Compaction triggers and guards (K-3, K-4, K-11)", () => {
  const once = Kit.scenario([...calls(4, 8_000), Kit.overflow])
  it.effect("AC-112 [K-3] a CONTEXT_WINDOW_EXCEEDED at step 5 compacts, then the step is retried once and succeeds", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: { threshold: 0.99 } })
      yield* t.prompt("go")
      const events = yield* t.events
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      const starts = ofType(events, "compact/start")
      expect(starts.map((e) => e.data.trigger)).toEqual(["overflow"])
      // the failed step 5 is closed before the compaction; the retry is step 6, after compact/end
      const step5End = events.find((e) => e.type === "step/end" && e.data.step === 5)!
      const end = ofType(events, "compact/end")[0]!
      const step6 = events.find((e) => e.type === "step/start" && e.data.step === 6)!
      expect(step5End.seq).toBeLessThan(starts[0]!.seq)
      expect(end.seq).toBeLessThan(step6.seq)
      expect(end.data.error).toBeUndefined()
      const requests = yield* t.requests
      const retried = requests[requests.length - 1]!
      expect(ContentBlock.flattenText([retried.messages[0]!.content[0]!])).toMatch(/^\[Summary of the earlier/)
      yield* Kit.verify(t.agent.session, requests)
    }).pipe(Effect.provide(Kit.layer(once.script, 32_000))))

  const twice = Kit.scenario([...calls(4, 8_000), Kit.overflow, Kit.overflow])
  it.effect("AC-112 [K-4] a second overflow right after the compaction ends the turn COMPACTION_STALLED", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: { threshold: 0.99 } })
      yield* t.prompt("go")
      const [reason] = yield* t.turnEnds
      expect(reason).toMatchObject({ kind: "error", code: "COMPACTION_STALLED" })
      expect(ofType(yield* t.events, "compact/start")).toHaveLength(1)
      yield* Kit.verify(t.agent.session, yield* t.requests)
    }).pipe(Effect.provide(Kit.layer(twice.script, 32_000))))

  // a model that overflows by itself once the request exceeds its window; threshold compactions
  // keep the turn going until the per-turn limit, then the overflow cannot be recovered
  const runaway = Kit.scenario(calls(60, 4_000), { window: 16_000 })
  it.effect("AC-112 [K-4] never more than 3 compactions per turn; past the limit the overflow ends COMPACTION_STALLED", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {} })
      yield* t.prompt("go")
      const events = yield* t.events
      const starts = ofType(events, "compact/start")
      expect(starts.length).toBe(3)
      const [reason] = yield* t.turnEnds
      expect(reason).toMatchObject({ kind: "error", code: "COMPACTION_STALLED" })
      if (reason?.kind === "error") expect(reason.message).toMatch(/after 3 compactions/)
      yield* Kit.verify(t.agent.session, yield* t.requests)
    }).pipe(Effect.provide(Kit.layer(runaway.script, 16_000))))

  const emptySummary = Kit.scenario([...calls(4, 8_000), Kit.overflow], { summarize: () => [] })
  it.effect("K-11 an empty summary leaves the surface untouched; the overflow ends with the original error", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: { threshold: 0.99 } })
      yield* t.prompt("go")
      const events = yield* t.events
      const [reason] = yield* t.turnEnds
      expect(reason).toMatchObject({ kind: "error", code: "CONTEXT_WINDOW_EXCEEDED" })
      const end = ofType(events, "compact/end")[0]!
      expect(end.data.error?.code).toBe("COMPACTION_SUMMARY_FAILED")
      expect(events.filter((e) => e.type === "user/message" && e.surfaceOp !== "append")).toEqual([])
      expect(ofType(events, "compact/summary")[0]!.data.summary).toBe("")
      yield* Kit.verify(t.agent.session, yield* t.requests)
    }).pipe(Effect.provide(Kit.layer(emptySummary.script, 32_000))))

  const threshold = Kit.scenario(calls(12, 8_000), { summarize: () => [] })
  it.effect("K-11 a failed threshold compaction lets the step proceed", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: { maxPerTurn: 1 } })
      yield* t.prompt("go")
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      const ends = ofType(yield* t.events, "compact/end")
      expect(ends).toHaveLength(1)
      expect(ends[0]!.data.error?.code).toBe("COMPACTION_SUMMARY_FAILED")
      yield* Kit.verify(t.agent.session, yield* t.requests)
    }).pipe(Effect.provide(Kit.layer(threshold.script, 32_000))))
})
