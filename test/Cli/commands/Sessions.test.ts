import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import { forkBoundary } from "../../../src/Cli/commands/Sessions.js"

const log = [
  { seq: 0, type: "turn/start", data: { turn: 1 } },
  { seq: 1, type: "user/message", data: {} },
  { seq: 2, type: "turn/end", data: { turn: 1, reason: { kind: "completed" } } },
  { seq: 3, type: "turn/start", data: { turn: 2 } },
  { seq: 4, type: "turn/end", data: { turn: 2, reason: { kind: "aborted" } } },
  { seq: 5, type: "turn/start", data: { turn: 3 } }
]
const none = Option.none<number>()

describe("sessions fork boundary (issue 15: --turn N, --at <event>)", () => {
  it("default: after the last completed turn; --turn N: after turn N; --at: a turn end", () => {
    expect(forkBoundary(log, { turn: none, at: none })).toEqual(Result.succeed(2))
    expect(forkBoundary(log, { turn: Option.some(2), at: none })).toEqual(Result.succeed(4))
    expect(forkBoundary(log, { turn: none, at: Option.some(4) })).toEqual(Result.succeed(4))
  })

  it("refuses negative, missing, mid-turn and unfinished points in words", () => {
    const left = (turn: Option.Option<number>, at: Option.Option<number>) => {
      const r = forkBoundary(log, { turn, at })
      return Result.isFailure(r) ? r.failure : "accepted"
    }
    expect(left(none, Option.some(-1))).toBe("--at takes an event number (0 or more), not -1")
    expect(left(none, Option.some(9))).toBe("there is no event #9: the session has events #0-#5")
    expect(left(none, Option.some(1))).toBe("event #1 does not end a turn (a fork keeps whole turns); it lies inside turn 1: use --turn 1 to fork after that turn")
    expect(left(Option.some(3), none)).toBe("turn 3 has not ended (it is still running, or its process stopped)")
    expect(left(Option.some(8), none)).toBe("there is no turn 8: the session has turns 1-3")
    expect(left(Option.some(1), Option.some(2))).toBe("use either --turn or --at, not both")
    expect(Result.isFailure(forkBoundary(log.slice(3, 5), { turn: none, at: none }))).toBe(true)
  })
})
