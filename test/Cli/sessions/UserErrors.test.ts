import { describe, expect, it } from "@effect/vitest"
import * as SessionError from "../../../src/Session/SessionError.js"
import * as UserErrors from "../../../src/Cli/sessions/UserErrors.js"

describe("UserErrors (issue 15: session errors in the user's words, no rule ids)", () => {
  it("drops rule ids and words each code for people; the typed error keeps the rule in its field", () => {
    const open = SessionError.make("OPEN_TURN", "S-21: boundary event 1 is user/message, not turn/end")
    expect(open.rule).toBe("S-21")
    expect(UserErrors.sentence(open)).toBe("cannot fork there: boundary event 1 is user/message, not turn/end (use --turn N, see harness sessions show)")
    expect(UserErrors.sentence(SessionError.make("SESSION_NOT_FOUND", "x", { sessionId: "s1" }))).toBe(
      "no session s1 is stored (see harness sessions list)"
    )
    expect(UserErrors.sentence(SessionError.make("IO", "D-4: S-12: cannot read"))).toBe("cannot read")
    const cli = UserErrors.toCli(SessionError.make("SESSION_LOCKED", "held by pid 42", { sessionId: "s1" }))
    expect(cli.exitCode).toBe(4)
    expect(cli.message).toMatch(/^error: session s1 is in use by another harness process/)
  })
})
