import { describe, expect, it } from "@effect/vitest"
import * as List from "../../../src/Cli/sessions/List.js"
import type { SessionSummary } from "../../../src/Session/SessionPersistence.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"

const summary = (id: string, prompt?: string): SessionSummary => ({
  header: { version: 0, id: id as SessionSummary["header"]["id"], createdAt: 0, cwd: "/w" },
  updatedAt: Date.UTC(2026, 0, 2, 3, 4),
  turns: 1,
  ...(prompt === undefined ? {} : { firstPrompt: prompt })
})

const ev = (seq: number, type: string, data: unknown) => ({ seq, time: 0, type, data }) as unknown as SessionEvent

const loaded = (events: ReadonlyArray<SessionEvent>, repaired: ReadonlyArray<SessionEvent> = []) => ({
  header: summary("x").header,
  events,
  repaired,
  truncated: 0
})

describe("List (issue 15: sessions list)", () => {
  it("status from the last turn's end; unfinished when the snapshot had to close a turn; damaged when unreadable", () => {
    const end = (kind: string) => ev(1, "turn/end", { turn: 1, reason: { kind } })
    const status = (events: ReadonlyArray<SessionEvent>, repaired: ReadonlyArray<SessionEvent> = []) =>
      List.row(summary("s"), loaded(events, repaired)).status
    expect(status([end("completed")])).toBe("ok")
    expect(status([end("aborted")])).toBe("cancelled")
    expect(status([end("error")])).toBe("failed")
    expect(status([end("interrupted")])).toBe("interrupted")
    expect(status([])).toBe("empty")
    expect(status([end("completed")], [end("interrupted")])).toBe("unfinished")
    expect(List.row(summary("s"), undefined).status).toBe("damaged")
  })

  it("the table has a header, the shortest unique id prefix, local time, the title or first prompt, escaped", () => {
    const a = "harness-session-3f2a0000-0000-4000-8000-000000000001"
    const b = "harness-session-3f2a0000-1111-4000-8000-000000000002"
    const rows = [
      List.row(summary(a, "hello \u001b[31mred"), loaded([])),
      { ...List.row(summary(b), loaded([ev(0, "session/title", { title: "Named" })])) },
      List.row(summary("custom-id"), loaded([]))
    ]
    const lines = List.table(rows).split("\n")
    expect(lines[0]).toMatch(/^ID\s+UPDATED \(local\)\s+TURNS\s+STATUS\s+MODEL\s+TITLE \/ FIRST PROMPT\s+DIRECTORY$/)
    expect(lines[1]).toMatch(/^3f2a0000-0\s/)
    expect(lines[1]).toContain("\"hello \\x1b[31mred\"")
    expect(lines[1]).toContain(List.localTime(Date.UTC(2026, 0, 2, 3, 4)))
    expect(lines[2]).toMatch(/^3f2a0000-1\s.*Named/)
    expect(lines[3]).toMatch(/^custom-id\s/)
    expect(List.localTime(new Date(2026, 4, 6, 7, 8).getTime())).toBe("2026-05-06 07:08")
  })

  it("[issue 34] a fork made now lists before older sessions although its copied events are older", () => {
    const old = summary("harness-session-aaaa1111")
    const fork: SessionSummary = {
      ...summary("harness-session-bbbb2222"),
      header: { ...summary("harness-session-bbbb2222").header, createdAt: Date.UTC(2026, 0, 5) },
      updatedAt: Date.UTC(2026, 0, 1)
    }
    const rows = [old, fork].map((s) => List.row(s, undefined))
    expect(List.ordered(rows).map((r) => r.summary.header.id)).toEqual(["harness-session-bbbb2222", "harness-session-aaaa1111"])
    expect(List.activeAt(fork)).toBe(Date.UTC(2026, 0, 5))
  })
})
