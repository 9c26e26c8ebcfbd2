import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Repair from "../../src/Session/Repair.js"
import * as ResumePlan from "../../src/Session/ResumePlan.js"
import * as Session from "../../src/Session/Session.js"
import type { AppendInput, SessionEvent } from "../../src/Session/SessionEvent.js"
import {
  appendAll,
  assistant,
  call,
  chunk,
  stepEnd,
  stepStart,
  steering,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage
} from "../support/sessionInputs.js"

/** A log of `inputs` as a crashed process left it, repaired as a load would repair it. */
const repaired = (inputs: ReadonlyArray<AppendInput>) =>
  Effect.flatMap(Session.make({ id: "p" }), (s) =>
    Effect.gen(function*() {
      yield* appendAll(s, inputs)
      const events = yield* s.events
      return [...events, ...Repair.repair(events)] as ReadonlyArray<SessionEvent>
    }))

const continued = (plan: ResumePlan.Plan) => {
  if (plan._tag !== "Continue") throw new Error(`expected a Continue plan, got ${plan.reason}`)
  return plan
}

const done = [turnStart(1), userMessage("one"), stepStart(1, 1), assistant(1, 1, [text("a")]), stepEnd(1, 1), turnEnd(1)]

describe("ResumePlan", () => {
  it.effect("nothing to resume: empty log, a completed or failed turn, an injection turn", () =>
    Effect.gen(function*() {
      expect(ResumePlan.plan([])._tag).toBe("Nothing")
      expect(ResumePlan.plan(yield* repaired(done))._tag).toBe("Nothing")
      const failed = [...done.slice(0, 5), turnEnd(1, { kind: "error", step: 1, message: "boom" })]
      expect(ResumePlan.plan(yield* repaired(failed))._tag).toBe("Nothing")
      expect(ResumePlan.plan(yield* repaired([turnStart(1, "injection")]))._tag).toBe("Nothing")
      // the crash came before the prompt was logged: nothing to continue
      expect(ResumePlan.plan(yield* repaired([turnStart(1)]))).toMatchObject({ _tag: "Nothing", reason: "turn 1 logged no prompt" })
    }))

  it.effect("a partial answer (chunks, no assistant/message) is superseded and requested again as the next step", () =>
    Effect.gen(function*() {
      const plan = continued(ResumePlan.plan(yield* repaired([
        ...done,
        turnStart(2),
        userMessage("two"),
        stepStart(2, 1),
        chunk(2, 1, "par"),
        chunk(2, 1, "tial")
      ])))
      expect(plan).toEqual({ _tag: "Continue", turn: 2, fromStep: 2, superseded: { step: 1, chunks: 2 }, calls: [], finished: false })
    }))

  it.effect("an open tail plans as repair would close it; the same plan as the repaired log", () =>
    Effect.gen(function*() {
      const inputs = [turnStart(1), userMessage("u"), stepStart(1, 1), chunk(1, 1, "x")]
      const raw = yield* Effect.flatMap(Session.make({ id: "q" }), (s) => Effect.andThen(appendAll(s, inputs), s.events))
      expect(ResumePlan.plan(raw)).toEqual(ResumePlan.plan(yield* repaired(inputs)))
    }))

  it.effect("calls: a logged result is kept; a started call is in doubt; an announced call never started is not", () =>
    Effect.gen(function*() {
      const plan = continued(ResumePlan.plan(yield* repaired([
        turnStart(1),
        userMessage("u"),
        stepStart(1, 1),
        assistant(1, 1, [call("done"), call("doubt", "bash"), call("later", "write")]),
        toolCall(1, 1, "done"),
        toolResult(1, 1, "done", "ok", false, { surfaceOp: "append", sourceEventSeqs: [4] }),
        toolCall(1, 1, "doubt", "bash")
      ])))
      expect(plan.fromStep).toBe(2)
      expect(plan.superseded).toBeUndefined()
      expect(plan.finished).toBe(false)
      expect(plan.calls.map((c) => [c.block.id, c.block.name, c.started, c.step])).toEqual([
        ["doubt", "bash", true, 1],
        ["later", "write", false, 1]
      ])
      // each names the synthetic result a re-run replaces
      for (const c of plan.calls) expect(c.resultSeq).toBeGreaterThan(6)
    }))

  it.effect("steering logged before the crash stays; the turn continues after the last step", () =>
    Effect.gen(function*() {
      const plan = continued(ResumePlan.plan(yield* repaired([
        turnStart(1),
        userMessage("u"),
        stepStart(1, 1),
        assistant(1, 1, [text("half way")]),
        stepEnd(1, 1),
        steering(1, "also this")
      ])))
      expect(plan).toMatchObject({ fromStep: 2, finished: false, calls: [] })
    }))

  it.effect("an answer without tool calls and nothing after it: the turn only needs closing", () =>
    Effect.gen(function*() {
      const plan = continued(ResumePlan.plan(yield* repaired([
        turnStart(1),
        userMessage("u"),
        stepStart(1, 1),
        assistant(1, 1, [text("final")])
      ])))
      expect(plan).toMatchObject({ fromStep: 2, finished: true, calls: [] })
    }))

  it.effect("a resumed turn interrupted again: the same turn number, decided calls are not asked again", () =>
    Effect.gen(function*() {
      const first = yield* repaired([
        turnStart(1),
        userMessage("u"),
        stepStart(1, 1),
        assistant(1, 1, [call("a", "bash"), call("b", "bash")]),
        toolCall(1, 1, "a", "bash"),
        toolCall(1, 1, "b", "bash")
      ])
      const before = continued(ResumePlan.plan(first))
      expect(before.calls.map((c) => c.block.id)).toEqual(["a", "b"])
      const s = yield* Session.make({ id: "again", seed: first })
      yield* appendAll(s, [
        { type: "turn/start", data: { turn: 1, trigger: { kind: "resume", source: { kind: "user" } } } },
        { type: "turn/resume", data: { turn: 1, fromStep: 2 } },
        { type: "tool/in-doubt", data: { turn: 1, step: 1, callId: before.calls[0]!.block.id, name: "bash", decision: "report", by: "policy" } },
        stepStart(1, 2),
        chunk(1, 2, "cut")
      ])
      const events = yield* s.events
      const after = continued(ResumePlan.plan([...events, ...Repair.repair(events)]))
      expect(after.turn).toBe(1)
      expect(after.fromStep).toBe(3)
      expect(after.superseded).toEqual({ step: 2, chunks: 1 })
      expect(after.calls.map((c) => c.block.id)).toEqual(["b"])
    }))

  it.effect("a disposed, fiber-interrupted or cancelled turn is resumable too", () =>
    Effect.gen(function*() {
      const base = [turnStart(1), userMessage("u"), stepStart(1, 1), chunk(1, 1, "x"), stepEnd(1, 1)]
      expect(ResumePlan.plan(yield* repaired([...base, turnEnd(1, { kind: "disposed" })]))._tag).toBe("Continue")
      expect(ResumePlan.plan(yield* repaired([...base, turnEnd(1, { kind: "aborted", reason: "interrupted" })]))._tag).toBe(
        "Continue"
      )
      expect(ResumePlan.plan(yield* repaired([...base, turnEnd(1, { kind: "aborted", reason: "cancelled" })]))._tag).toBe(
        "Continue"
      )
    }))

  it("the idempotency key is stable per session, turn, step and call", () => {
    expect(ResumePlan.idempotencyKey("s1", 2, 3, "call_9")).toBe("s1:2:3:call_9")
    expect(ResumePlan.idempotencyKey("s1", 2, 3, "call_9")).not.toBe(ResumePlan.idempotencyKey("s1", 2, 4, "call_9"))
  })
})
