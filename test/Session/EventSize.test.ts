import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as EventSize from "../../src/Session/EventSize.js"
import * as Surface from "../../src/Session/Surface.js"
import * as Validate from "../../src/Session/Validate.js"

describe("EventSize (issue 26)", () => {
  it("small events are not measured; an event over 64 MiB encoded is, escapes included", () => {
    expect(EventSize.oversize({ text: "hello", n: 1 })).toBeUndefined()
    expect(EventSize.oversize({ text: "x".repeat(20 * 1024 * 1024) })).toBeUndefined()
    // 12 Mi control characters encode to 72 MiB (\u0001 is 6 bytes)
    expect(EventSize.oversize({ text: "\u0001".repeat(12 * 1024 * 1024) })).toBeGreaterThan(EventSize.MAX_EVENT_BYTES)
    expect(EventSize.oversize({ parts: Array.from({ length: 70 }, () => "y".repeat(1024 * 1024)) })).toBeGreaterThan(
      EventSize.MAX_EVENT_BYTES
    )
  }, 120_000) // hundreds of MB of strings: slow on a loaded machine, not a speed check

  it("an append over the cap is refused with INVALID_EVENT before it is committed", () => {
    const input = {
      type: "user/message",
      data: { content: [{ type: "text", text: "z".repeat(65 * 1024 * 1024) }], source: { kind: "user" } },
      surfaceOp: "append"
    }
    const result = Validate.appendInputGeneric(Surface.makeState(), input, 0, 1)
    expect(Result.isFailure(result) && result.failure.code).toBe("INVALID_EVENT")
    expect(Result.isFailure(result) && result.failure.message).toContain("over the limit of 67108864 bytes")
  }, 120_000)
})
