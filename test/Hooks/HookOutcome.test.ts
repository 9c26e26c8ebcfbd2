import { describe, expect, it } from "@effect/vitest"
import * as HookOutcome from "../../src/Hooks/HookOutcome.js"

const raw = (exitCode: number | null, stdout = "", stderr = "") => ({ exitCode, stdout, stderr, timedOut: false, durationMs: 1 })
const o = (decision: HookOutcome.Decision, reason?: string): HookOutcome.Outcome => ({
  decision,
  ...(reason === undefined ? {} : { reason }),
  contexts: [],
  notices: []
})

describe("HookOutcome (HB-6, HB-7, HB-8)", () => {
  it("AC-120: merge [allow, ask r1, deny r2, deny r3] → deny with reason r2\\n\\nr3", () => {
    expect(HookOutcome.merge([o("allow"), o("ask", "r1"), o("deny", "r2"), o("deny", "r3")])).toEqual({
      decision: "deny",
      reason: "r2\n\nr3",
      contexts: []
    })
  })

  it("HB-6: plain stdout is context only for UserPromptSubmit and SessionStart; exit 2 ignores stdout", () => {
    expect(HookOutcome.interpret("UserPromptSubmit", raw(0, "hello\n"), "continue", "h").contexts).toEqual(["hello"])
    expect(HookOutcome.interpret("PostToolUse", raw(0, "hello\n"), "continue", "h").contexts).toEqual([])
    const blocked = HookOutcome.interpret("PreToolUse", raw(2, "{\"decision\":\"approve\"}", "no way\n"), "continue", "h")
    expect(blocked).toMatchObject({ decision: "deny", reason: "no way" })
  })

  it("HB-7: continue:false, systemMessage, legacy decision, hookSpecificOutput of another event ignored", () => {
    const stop = HookOutcome.interpret("PostToolUse", raw(0, JSON.stringify({ continue: false, stopReason: "enough", systemMessage: "hi" })), "continue", "h")
    expect(stop).toMatchObject({ stop: "enough", notices: ["hi"] })
    expect(HookOutcome.interpret("Stop", raw(0, JSON.stringify({ decision: "block", reason: "more" })), "continue", "h")).toMatchObject({ decision: "block", reason: "more" })
    const other = HookOutcome.interpret("PreToolUse", raw(0, JSON.stringify({ hookSpecificOutput: { hookEventName: "PostToolUse", permissionDecision: "deny" } })), "continue", "h")
    expect(other.decision).toBe("none")
    expect(other.notices[0]).toContain("ignored during PreToolUse")
  })
})
