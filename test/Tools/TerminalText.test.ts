import { describe, expect, it } from "@effect/vitest"
import * as TerminalText from "../../src/Tools/TerminalText.js"

describe("TerminalText (issue 26: escape sequences are inert on a terminal)", () => {
  it("neutralize: ANSI escapes, C1 controls and bidi overrides become inert text", () => {
    expect(TerminalText.neutralize("a\u001b[1A\u001b[2Kb\rc\td\u0007\u009b\u202eé\n")).toBe(
      "a\\x1b[1A\\x1b[2Kb\\rc\\td\\x07\\x9b\\u202eé\n"
    )
  })

  it("neutralize with tabs kept: OSC 52, OSC 0, clear screen and isolates are shown, tabs and newlines stay", () => {
    const hostile = "x\u001b]52;c;aGk=\u0007\u001b]0;pwned\u0007\u001b[2J\u2066y\u2069\t\u007f\n"
    expect(TerminalText.neutralize(hostile, "keep")).toBe(
      "x\\x1b]52;c;aGk=\\x07\\x1b]0;pwned\\x07\\x1b[2J\\u2066y\\u2069\t\\x7f\n"
    )
    expect(TerminalText.neutralize("plain ünïcode ✓ 日本", "keep")).toBe("plain ünïcode ✓ 日本")
  })

  it("line: newlines and tabs are escaped too (a one-line cell)", () => {
    expect(TerminalText.line("one\ntwo\tthree\r\u001b[31m")).toBe("one\\ntwo\\tthree\\r\\x1b[31m")
  })

  it("forStream: a terminal gets inert text, a pipe or file the bytes as they are", () => {
    expect(TerminalText.forStream({ isTTY: true })("\u001b[2Jhi\t\n")).toBe("\\x1b[2Jhi\t\n")
    expect(TerminalText.forStream({ isTTY: false })("\u001b[2Jhi")).toBe("\u001b[2Jhi")
    expect(TerminalText.forStream({})("\u202e")).toBe("\u202e")
  })
})
