/**
 * Claude Code's stream-json input lines (issue 35): what is read and how the rest is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as StreamJsonInput from "../../src/Cli/StreamJsonInput.js"

const decoded = (line: string) => StreamJsonInput.decodeLine(line)

describe("Cli/StreamJsonInput", () => {
  it("a user message with string or text-block content, session fields accepted", () => {
    expect(decoded(`{"type":"user","message":{"role":"user","content":"hi"}}`)).toEqual(Result.succeed([{ type: "text", text: "hi" }]))
    expect(decoded(JSON.stringify({
      type: "user",
      message: { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      session_id: "default",
      parent_tool_use_id: null
    }))).toEqual(Result.succeed([{ type: "text", text: "a" }, { type: "text", text: "b" }]))
  })

  it("anything else is refused with the reason", () => {
    expect(decoded("hello")).toEqual(Result.fail("it is not JSON"))
    expect(decoded(`{"type":"control_request"}`)).toEqual(
      Result.fail(`its type is "control_request"; only {"type":"user","message":{"role":"user","content":…}} is read`)
    )
    const image = JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "" } }] } })
    expect(Result.isFailure(decoded(image))).toBe(true)
    expect(Result.isFailure(decoded(`{"type":"user","message":{"role":"assistant","content":"x"}}`))).toBe(true)
  })
})
