import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as SessionIds from "../../../src/Cli/sessions/SessionIds.js"

const a = "harness-session-3f2a0000-0000-4000-8000-000000000001"
const b = "harness-session-3f2b0000-0000-4000-8000-000000000002"
const old = "0b5e1d2c-1111-4222-8333-944455556666"
const ids = [a, b, old]

describe("SessionIds (issue 15: one id format, unique prefixes)", () => {
  it("new ids have the run format harness-session-<uuid>", () => {
    expect(SessionIds.make()).toMatch(/^harness-session-[0-9a-f-]{36}$/)
    expect(SessionIds.make()).not.toBe(SessionIds.make())
  })

  it("an exact id, a prefix of the id, or a prefix of its uuid part names one session", () => {
    expect(SessionIds.match(a, ids)).toEqual(Result.succeed(a))
    expect(SessionIds.match("3f2a", ids)).toEqual(Result.succeed(a))
    expect(SessionIds.match("harness-session-3f2b", ids)).toEqual(Result.succeed(b))
    expect(SessionIds.match("0b5e", ids)).toEqual(Result.succeed(old))
    expect(SessionIds.match(" 3f2a ", ids)).toEqual(Result.succeed(a))
  })

  it("an ambiguous prefix lists the candidates in one line; an unknown one says so", () => {
    const amb = SessionIds.match("3f2", ids)
    expect(amb).toEqual(Result.fail(`"3f2" matches 2 sessions: ${a}, ${b}; type more of the id`))
    expect(SessionIds.match("zz", ids)).toEqual(Result.fail("no session matches \"zz\" (see harness sessions list)"))
    expect(Result.isFailure(SessionIds.match("", ids))).toBe(true)
    const many = Array.from({ length: 8 }, (_, i) => `harness-session-${i}`)
    const left = SessionIds.match("harness", many)
    expect(Result.isFailure(left) && left.failure).toMatch(/matches 8 sessions: .*, and 3 more; type more of the id$/)
    expect(Result.isFailure(left) && left.failure.includes("\n")).toBe(false)
  })
})
