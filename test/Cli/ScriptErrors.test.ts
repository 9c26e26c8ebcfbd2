import { describe, expect, it } from "@effect/vitest"
import * as ScriptErrors from "../../src/Cli/ScriptErrors.js"

describe("ScriptErrors (issue 15)", () => {
  it("a valid script has no error", () => {
    expect(ScriptErrors.describe("s.json", JSON.stringify({ responses: [{ text: "hi" }] }))).toBeUndefined()
  })

  it("wrong shapes and unknown keys name the JSON path; malformed JSON its line and column; one line each", () => {
    expect(ScriptErrors.describe("s.json", JSON.stringify({ responses: [{ text: "a" }, [{ delayMs: -1 }]] })))
      .toMatch(/^error: invalid script s\.json: responses\[1\]\[0\]\.delayMs: Expected .*got -1/) // Effect 4 wording ("got", Effect 3: "actual")
    expect(ScriptErrors.describe("s.json", JSON.stringify({ responses: [], extra: true })))
      .toBe("error: invalid script s.json: extra: unknown key (not allowed here)")
    expect(ScriptErrors.describe("s.json", "{\n  \"responses\": [\n    1 2\n  ]\n}"))
      .toMatch(/^error: invalid script s\.json: malformed JSON at line 3, column 7: /)
    expect(ScriptErrors.describe("s.json", "{\"responses\": ["))
      .toBe("error: invalid script s.json: malformed JSON at line 1, column 16: Unexpected end of JSON input")
    expect(ScriptErrors.pathText(["responses", 1, 0, "toolCall", "id"])).toBe("responses[1][0].toolCall.id")
    expect(ScriptErrors.pathText([])).toBe("$")
  })
})
