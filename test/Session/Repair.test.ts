import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Repair from "../../src/Session/Repair.js"
import * as Session from "../../src/Session/Session.js"
import type { AppendInput, SessionEvent } from "../../src/Session/SessionEvent.js"
import {
  appendAll,
  assistant,
  call,
  chunk,
  stepEnd,
  stepStart,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage
} from "../support/sessionInputs.js"

const log = (inputs: ReadonlyArray<AppendInput>) =>
  Effect.flatMap(Session.make({ id: "r" }), (s) => Effect.andThen(appendAll(s, inputs), s.events))

const shape = (events: ReadonlyArray<SessionEvent>) =>
  events.map((e) => {
    switch (e.type) {
      case "tool/result":
        return `result ${e.data.callId} ${e.data.error?.code ?? "-"} [${e.sourceEventSeqs?.join(",") ?? "none"}]`
      case "step/end":
        return `step/end ${e.data.turn}.${e.data.step}`
      case "turn/end":
        return `turn/end ${e.data.turn} ${e.data.reason.kind}`
      default:
        return e.type
    }
  })

const open = [turnStart(1), userMessage("u"), stepStart(1, 1)]

describe("Repair", () => {
  it.effect("AC-41 [S-22] balanced or empty log → nothing", () =>
    Effect.gen(function*() {
      expect(Repair.repair([])).toEqual([])
      expect(Repair.repair(yield* log([...open, assistant(1, 1, [text("a")]), stepEnd(1, 1), turnEnd(1)]))).toEqual([])
    }))

  it.effect("AC-41 [S-23] open turn → [turn/end interrupted]; open step → [step/end, turn/end]", () =>
    Effect.gen(function*() {
      const openTurn = yield* log([turnStart(1), userMessage("u")])
      const closers = Repair.repair(openTurn)
      expect(shape(closers)).toEqual(["turn/end 1 interrupted"])
      expect(closers[0]).toMatchObject({ seq: 2, time: openTurn[1]?.time })
      const openStep = yield* log([...open, chunk(1, 1, "x")])
      expect(shape(Repair.repair(openStep))).toEqual(["step/end 1.1", "turn/end 1 interrupted"])
      expect(Repair.repair(openStep).map((e) => e.seq)).toEqual([4, 5])
    }))

  it.effect("AC-41 [S-23,DEC-7] unanswered call → [tool/result INTERRUPTED (sources [call seq] if logged), step/end, turn/end]", () =>
    Effect.gen(function*() {
      const logged = yield* log([...open, assistant(1, 1, [call("c1")]), toolCall(1, 1, "c1")])
      const closers = Repair.repair(logged)
      expect(shape(closers)).toEqual(["result c1 INTERRUPTED [4]", "step/end 1.1", "turn/end 1 interrupted"])
      expect(closers[0]).toEqual({
        type: "tool/result",
        seq: 5,
        time: logged[4]?.time,
        data: {
          turn: 1,
          step: 1,
          callId: "c1",
          content: [text(Repair.interruptedText("c1", "echo"))],
          isError: true,
          error: { name: "InterruptedError", code: "INTERRUPTED" }
        },
        surfaceOp: "append",
        sourceEventSeqs: [4]
      })
      expect(Object.isFrozen(closers[0]?.data)).toBe(true)
      const notLogged = yield* log([...open, assistant(1, 1, [call("c1")])])
      expect(shape(Repair.repair(notLogged))).toEqual(["result c1 INTERRUPTED [none]", "step/end 1.1", "turn/end 1 interrupted"])
      // the closers are appendable: the repaired log seeds a balanced session
      const repaired = yield* Session.make({ id: "x", seed: [...logged, ...closers] })
      expect(Repair.repair(yield* repaired.events)).toEqual([])
    }))

  it.effect("AC-41 answered call, call in a closed step, earlier committed turn → no result; two unanswered → two in order; orphan tool/call → none", () =>
    Effect.gen(function*() {
      const answered = yield* log([...open, assistant(1, 1, [call("c1")]), toolCall(1, 1, "c1"), toolResult(1, 1, "c1", "ok")])
      expect(shape(Repair.repair(answered))).toEqual(["step/end 1.1", "turn/end 1 interrupted"])
      const closedStep = yield* log([...open, assistant(1, 1, [call("c1")]), stepEnd(1, 1), stepStart(1, 2)])
      expect(shape(Repair.repair(closedStep))).toEqual(["step/end 1.2", "turn/end 1 interrupted"])
      const earlier = yield* log([...open, assistant(1, 1, [call("c0")]), stepEnd(1, 1), turnEnd(1, { kind: "error", step: 1, message: "x" }), turnStart(2)])
      expect(shape(Repair.repair(earlier))).toEqual(["turn/end 2 interrupted"])
      const two = yield* log([...open, assistant(1, 1, [call("b"), text("t"), call("a")]), toolCall(1, 1, "b")])
      expect(shape(Repair.repair(two))).toEqual(["result b INTERRUPTED [4]", "result a INTERRUPTED [none]", "step/end 1.1", "turn/end 1 interrupted"])
      const orphan = yield* log([...open, toolCall(1, 1, "zz")])
      expect(shape(Repair.repair(orphan))).toEqual(["step/end 1.1", "turn/end 1 interrupted"])
    }))
})
