import { describe, expect, it } from "@effect/vitest"
import * as Matcher from "../../src/Hooks/Matcher.js"

describe("Matcher (HB-4)", () => {
  it("AC-119: Bash|Edit matches Edit not EditX; mcp__.* matches mcp__fs__read; *, \"\" and absent match all; [ matches nothing and warns", () => {
    const list = Matcher.compile("Bash|Edit", "claude")
    expect(list.test(["Edit"])).toBe(true)
    expect(list.test(["EditX"])).toBe(false)
    expect(list.test(Matcher.toolSubjects("edit", "claude"))).toBe(true)
    expect(list.test(Matcher.toolSubjects("edit", "harness"))).toBe(false)
    expect(Matcher.compile("mcp__.*", "claude").test(["mcp__fs__read"])).toBe(true)
    expect(Matcher.compile("mcp__.*", "claude").test(["read"])).toBe(false)
    for (const m of ["*", "", undefined]) expect(Matcher.compile(m, "claude").test(["anything"])).toBe(true)
    const bad = Matcher.compile("[", "claude")
    expect(bad.test(["["])).toBe(false)
    expect(bad.warning).toContain("invalid hook matcher")
    // Codex dialect: always a regex (unanchored)
    expect(Matcher.compile("Bash", "codex").test(["BashX"])).toBe(true)
    expect(Matcher.compile("Bash", "claude").test(["BashX"])).toBe(false)
  })
})
