/**
 * `RunSummary.ofLastTurn` (DEC-16): a resumed run's result starts from what the log holds of the interrupted
 * turn, so a resume that only closes the turn still reports the answer logged before the crash.
 */
import { describe, expect, it } from "@effect/vitest"
import * as RunSummary from "../../src/Cli/RunSummary.js"
import type { EventOf, EventType, SessionEvent, SessionEventMap } from "../../src/Session/SessionEvent.js"

let seq = 0
const ev = <K extends EventType>(type: K, data: SessionEventMap[K]): EventOf<K> => ({ seq: seq++, time: 0, type, data })
const provenance = { provider: "p", model: "m" }
const user = { kind: "message", source: { kind: "user" } } as const

const turn = (n: number, text: string, end: SessionEventMap["turn/end"]["reason"]): ReadonlyArray<SessionEvent> => [
  ev("turn/start", { turn: n, trigger: user }),
  ev("step/start", { turn: n, step: 1 }),
  ev("assistant/message", {
    turn: n,
    step: 1,
    content: [{ type: "text", text }],
    provenance,
    usage: { inputTokens: 10, outputTokens: 2 }
  }),
  ev("step/end", { turn: n, step: 1 }),
  ev("turn/end", { turn: n, reason: end })
]

describe("RunSummary.ofLastTurn (DEC-16)", () => {
  it("folds the last turn without its turn/end: its answer, steps and usage", () => {
    const events = [...turn(1, "first", { kind: "completed" }), ...turn(2, "answered before the crash", { kind: "interrupted" })]
    const s = RunSummary.ofLastTurn(events)
    expect(s.lastText).toBe("answered before the crash")
    expect(s.steps).toBe(1)
    expect(s.usage).toEqual({ inputTokens: 10, outputTokens: 2 })
    expect(s.reason).toBeUndefined()
  })

  it("an empty log gives the empty summary", () => {
    expect(RunSummary.ofLastTurn([])).toEqual(RunSummary.empty)
  })
})
