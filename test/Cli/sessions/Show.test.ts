import { describe, expect, it } from "@effect/vitest"
import * as Show from "../../../src/Cli/sessions/Show.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"

let seq = 0
const ev = (type: string, data: unknown) => ({ seq: seq++, time: 0, type, data }) as unknown as SessionEvent
const user = (text: string) => ev("user/message", { content: [{ type: "text", text }], source: { kind: "user" } })
const chunk = (turn: number, text: string) => ev("assistant/chunk", { turn, step: 1, chunk: { type: "text-delta", text } })

describe("Show (issue 15: sessions show by turn)", () => {
  it("numbers turns, words each end with its event number, shows partial answers and compactions, escapes controls", () => {
    seq = 0
    const events = [
      ev("turn/start", { turn: 1, trigger: { kind: "message", source: { kind: "user" } } }),
      user("first \u001b[2J"),
      ev("step/start", { turn: 1, step: 1 }),
      chunk(1, "half an ans"),
      ev("turn/end", { turn: 1, reason: { kind: "aborted", reason: "SIGINT" } }),
      ev("turn/start", { turn: 2, trigger: { kind: "compaction", source: { kind: "user" } } }),
      ev("compact/start", { turn: 2, trigger: "manual", pressureTokens: 900, contextWindow: 1000 }),
      ev("compact/end", { turn: 2, pressureBefore: 900, pressureAfter: 100 }),
      ev("turn/end", { turn: 2, reason: { kind: "error", step: 1, message: "boom", code: "SERVER" } }),
      ev("session/title", { title: "T" }),
      ev("turn/start", { turn: 3, trigger: { kind: "message", source: { kind: "user" } } }),
      user("crashed"),
      ev("step/start", { turn: 3, step: 1 }),
      chunk(3, "cut")
    ]
    const text = Show.render(events)
    expect(text).toContain("── turn 1 ──\nuser:\n  first \\x1b[2J\nassistant (partial answer, cut off):\n  half an ans\n── turn 1 CANCELLED (SIGINT) · event #4 ──")
    expect(text).toContain("── turn 2 (compaction) ──\n── COMPACTION (manual) at 900 of 1000 tokens ──\n── COMPACTED: 900 → 100 tokens ──")
    expect(text).toContain("── turn 2 FAILED in step 1: boom [SERVER] · event #8 ──")
    expect(text).toContain("(renamed: T)")
    expect(text.endsWith("assistant (partial answer, the log ends here):\n  cut")).toBe(true)
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/\u001b/)
  })

  it("words every end reason", () => {
    expect(Show.endWords({ kind: "completed" })).toBe("completed")
    expect(Show.endWords({ kind: "interrupted" })).toMatch(/^INTERRUPTED/)
    expect(Show.endWords({ kind: "max-steps", steps: 3 })).toBe("STOPPED after 3 steps (--max-steps)")
    expect(Show.endWords({ kind: "rejected", reason: "hook" })).toBe("REJECTED: hook")
  })
})
