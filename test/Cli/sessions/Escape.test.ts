import { describe, expect, it } from "@effect/vitest"
import * as Escape from "../../../src/Cli/sessions/Escape.js"

describe("Escape (issue 15: control characters from prompts are escaped)", () => {
  it("escape sequences, C0/C1 controls and DEL become visible; text keeps tabs and newlines", () => {
    expect(Escape.text("a\u001b[2Jb\u0007c\u009bd\u007f\n\tok")).toBe("a\\e[2Jb\\x07c\\x9bd\\x7f\n\tok")
    expect(Escape.line("one\ntwo\tthree\r")).toBe("one\\ntwo\\tthree\\r")
    expect(Escape.line("plain ünïcode ✓")).toBe("plain ünïcode ✓")
  })
})
