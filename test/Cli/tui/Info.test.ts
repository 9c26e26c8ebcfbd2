import { describe, expect, it } from "@effect/vitest"
import * as ModelCatalog from "../../../src/Llm/ModelCatalog.js"
import * as ApprovalText from "../../../src/Cli/tui/ApprovalText.js"
import * as Info from "../../../src/Cli/tui/Info.js"
import type { SessionSummary } from "../../../src/Session/SessionPersistence.js"

const summary = (id: string): SessionSummary => ({
  header: { version: 0, id: id as SessionSummary["header"]["id"], createdAt: 0, cwd: "/w" },
  updatedAt: 0,
  turns: 1
})

describe("tui/Info and tui/ApprovalText (issue 34)", () => {
  it("/resume <prefix>: exact id, unique prefix with or without the label, several, none", () => {
    const sessions = ["harness-session-abc111", "harness-session-abc222", "harness-session-def333", "custom-id"].map(summary)
    expect(Info.resolvePrefix(sessions, "custom-id")).toEqual({ _tag: "One", id: "custom-id" })
    expect(Info.resolvePrefix(sessions, "def")).toEqual({ _tag: "One", id: "harness-session-def333" })
    expect(Info.resolvePrefix(sessions, "harness-session-abc1")).toEqual({ _tag: "One", id: "harness-session-abc111" })
    expect(Info.resolvePrefix(sessions, "abc")).toEqual({ _tag: "Many", ids: ["harness-session-abc111", "harness-session-abc222"] })
    expect(Info.resolvePrefix(sessions, "zzz")).toEqual({ _tag: "Many", ids: [] })
  })

  it("/cost: tokens, and the price only when the model is priced", () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 0 }
    expect(Info.cost({ contextWindow: 1, maxOutputTokens: 1 }, usage)).toContain("cost: unknown")
    expect(Info.cost({ contextWindow: 1, maxOutputTokens: 1, pricing: { inputPerMTok: 2, outputPerMTok: 4 } }, usage))
      .toContain("cost: $2.0000")
    expect(Info.cost({ contextWindow: ModelCatalog.DEFAULT_CONTEXT_WINDOW, maxOutputTokens: 1 }, undefined)).toBe(
      "no model requests yet in this session"
    )
  })

  it("approval texts say what the rule covers and where p saves it", () => {
    expect(ApprovalText.covers("Bash(npm test:*)")).toBe("any command starting with \"npm test\"")
    expect(ApprovalText.covers("Bash(make)")).toBe("the command \"make\" exactly")
    expect(ApprovalText.covers("Edit(./src/**)")).toBe("edits of every file under ./src/")
    expect(ApprovalText.covers("Write(./notes.txt)")).toBe("writes of ./notes.txt only")
    expect(ApprovalText.covers("Edit")).toBe("every edit call")
    expect(ApprovalText.alwaysLines("Edit(./src/**)")[1]).toContain("saved to .effect-harness/settings.local.json")
  })
})
