import { describe, expect, it } from "vitest"
import * as SessionError from "../../src/Session/SessionError.js"

describe("SessionError messages (issue 18: no rule ids in what users read)", () => {
  it("moves a leading citation to the rule field", () => {
    const e = SessionError.make("OPEN_TURN", "S-21: boundary event 1 is user/message, not turn/end")
    expect(e.message).toBe("boundary event 1 is user/message, not turn/end")
    expect(e.rule).toBe("S-21")
  })

  it("moves citations in the middle and in parentheses, keeping the words", () => {
    expect(SessionError.splitRules("log.jsonl:3: S-11: seq 4 must equal its index 3, before a later turn/end (D-5)"))
      .toEqual({ message: "log.jsonl:3: seq 4 must equal its index 3, before a later turn/end", rule: "S-11, D-5" })
    expect(SessionError.splitRules("invalid session header (S-12): no id")).toEqual({ message: "invalid session header: no id", rule: "S-12" })
  })

  it("leaves a message without citations alone (no rule field)", () => {
    const e = SessionError.make("SESSION_NOT_FOUND", "no session abc-1 (see S-21 docs)")
    expect(e.message).toBe("no session abc-1 (see S-21 docs)")
    expect("rule" in e).toBe(false)
  })
})
