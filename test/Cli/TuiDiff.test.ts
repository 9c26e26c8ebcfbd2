/**
 * The chat UI's unified diffs (`tui/Diff`) and colour decision (`tui/Style`), issue 15.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Diff from "../../src/Cli/tui/Diff.js"
import * as Style from "../../src/Cli/tui/Style.js"

const text = (lines: ReadonlyArray<Diff.Line>) => lines.map(Diff.marked)

describe("tui/Diff unified (issue 15)", () => {
  it("equal texts have no diff", () => {
    expect(Diff.unified("a\nb\n", "a\nb\n")).toEqual([])
  })

  it("a replaced line: removal before addition, with context and diff -u numbering", () => {
    expect(text(Diff.unified("alpha\nbeta\ngamma\n", "alpha\nBETA\ngamma\n"))).toEqual([
      "@@ -1,3 +1,3 @@",
      " alpha",
      "-beta",
      "+BETA",
      " gamma"
    ])
  })

  it("distant changes make separate hunks with 3 lines of context", () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`)
    const after = before.map((l, i) => (i === 1 ? "changed 2" : i === 27 ? "changed 28" : l))
    const lines = text(Diff.unified(before.join("\n"), after.join("\n")))
    expect(lines.filter((l) => l.startsWith("@@"))).toEqual(["@@ -1,5 +1,5 @@", "@@ -25,6 +25,6 @@"])
    expect(lines).toContain("-line 28")
    expect(lines).toContain("+changed 28")
  })

  it("a created file is all additions; an insertion into an empty range is numbered like diff -u", () => {
    expect(text(Diff.unified("", "one\ntwo\n"))).toEqual(["@@ -0,0 +1,2 @@", "+one", "+two"])
    expect(text(Diff.unified("a\nb\n", "a\nnew\nb\n", { context: 0 }))).toEqual(["@@ -1,0 +2 @@", "+new"])
  })

  it("offset shifts the numbers of a snippet", () => {
    expect(text(Diff.unified("x", "y", { offset: 41 }))).toEqual(["@@ -42 +42 @@", "-x", "+y"])
  })
})

describe("tui/Style (issue 15)", () => {
  it("NO_COLOR turns colours off; FORCE_COLOR wins; a terminal has colours by default", () => {
    expect(Style.colorEnabled({}, true)).toBe(true)
    expect(Style.colorEnabled({}, false)).toBe(false)
    expect(Style.colorEnabled({ TERM: "dumb" }, true)).toBe(false)
    expect(Style.colorEnabled({ NO_COLOR: "1" }, true)).toBe(false)
    expect(Style.colorEnabled({ NO_COLOR: "" }, true)).toBe(true)
    expect(Style.colorEnabled({ NO_COLOR: "1", FORCE_COLOR: "1" }, true)).toBe(true)
    expect(Style.colorEnabled({ FORCE_COLOR: "0" }, true)).toBe(false)
    expect(Style.colorEnabled({ FORCE_COLOR: "1" }, false)).toBe(true)
  })

  it("styles are identity without colours and SGR sequences per line with them", () => {
    expect(Style.make(false).red("a\nb")).toBe("a\nb")
    const red = Style.make(true).red("a\nb")
    expect(red).toBe("\x1b[31ma\x1b[39m\n\x1b[31mb\x1b[39m")
    expect(Style.strip(red)).toBe("a\nb")
  })
})
