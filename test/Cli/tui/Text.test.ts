import { describe, expect, it } from "@effect/vitest"
import * as Style from "../../../src/Cli/tui/Style.js"
import * as Text from "../../../src/Cli/tui/Text.js"

describe("tui/Text (issue 34: tabs, wide characters, Markdown theme)", () => {
  it("expands tabs to the next 4-column stop, per line, counting terminal columns", () => {
    expect(Text.expandTabs("a\tb")).toBe("a   b")
    expect(Text.expandTabs("\tx\n\t\ty")).toBe("    x\n        y")
    expect(Text.expandTabs("abcd\te")).toBe("abcd    e")
    // a wide character is two columns: 日本 is 4 columns, the tab goes to 8
    expect(Text.expandTabs("日本\tx")).toBe("日本    x")
    // a combining mark takes no column: e + U+0301 is one column
    expect(Text.expandTabs("e\u0301\tx")).toBe("e\u0301   x")
    expect(Text.expandTabs("no tabs")).toBe("no tabs")
  })

  it("display: escapes stay visible (inert), tabs are expanded instead of shown as \\t", () => {
    expect(Text.display("\x1b[2Jx\ty")).toBe("\\x1b[2Jx    y")
    expect(Text.display("     5\tline")).toBe("     5  line")
  })

  it("the Markdown theme: identity without colours, SGR with them", () => {
    const plain = Text.markdownTheme(Style.make(false))
    expect(plain.heading("H")).toBe("H")
    expect(plain.bold("b")).toBe("b")
    const coloured = Text.markdownTheme(Style.make(true))
    expect(coloured.bold("b")).toBe("\x1b[1mb\x1b[22m")
    expect(coloured.underline("u")).toBe("\x1b[4mu\x1b[24m")
  })
})
