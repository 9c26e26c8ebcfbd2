/**
 * The normalized JSON Lines export (issue 35): one object per line, no chunks or bookkeeping, every
 * line naming its log events.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NormalizedJsonl from "../../src/Export/NormalizedJsonl.js"
import { exportEvents, exportHeader, hostile } from "../support/exportLog.js"

describe("Export/NormalizedJsonl", () => {
  const events = exportEvents()
  const text = NormalizedJsonl.render({ header: exportHeader, events })
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)

  it("one session line, then the conversation in log order, each line naming its events", () => {
    expect(text.endsWith("\n")).toBe(true)
    expect(lines.map((l) => l["type"])).toEqual([
      "session", "context", "user", "assistant", "tool_result", "tool_result", "assistant", "turn_end",
      "user", "steering", "assistant", "turn_end"
    ])
    expect(lines[0]).toMatchObject({ id: "harness-session-export-1", title: hostile.title, events: events.length, cwd: "/work/project" })
    for (const line of lines.slice(1)) {
      const seqs = line["seqs"] as ReadonlyArray<number>
      expect(seqs.length).toBeGreaterThan(0)
      for (const s of seqs) expect(events[s]).toBeDefined()
    }
  })

  it("keeps the strings verbatim and the arguments parsed", () => {
    expect(lines[2]).toMatchObject({ text: hostile.prompt, source: "user", turn: 1 })
    expect(lines[3]).toMatchObject({
      reasoning: hostile.reasoning,
      tool_calls: [{ id: "call-edit", name: "edit", arguments: { new_string: hostile.newString }, seq: 7 }, { id: "call-bash", seq: 8 }],
      usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 50 },
      cost: 0.0012
    })
    expect(lines[5]).toMatchObject({ call_id: "call-bash", is_error: true, code: "EXIT_1", text: hostile.bashError, seqs: [10] })
    expect(lines[1]).toMatchObject({ copied: true })
    expect(lines[11]).toMatchObject({ reason: { kind: "aborted", reason: "cancelled by the user" } })
  })
})
