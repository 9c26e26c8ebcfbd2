import { describe, expect, it } from "@effect/vitest"
import { isEnvelope } from "../../src/Session/SessionEvent.js"

describe("SessionEvent.isEnvelope", () => {
  it("accepts an envelope of any type (unknown types pass verbatim, V-2) and rejects what is not one", () => {
    expect(isEnvelope({ type: "turn/start", seq: 0, time: 1, data: {} })).toBe(true)
    expect(isEnvelope({ type: "x-plugin/note", seq: 3, time: 1, data: null, surfaceOp: "append" })).toBe(true)
    expect(isEnvelope({ type: "", seq: 0, time: 1, data: {} })).toBe(false)
    expect(isEnvelope({ type: "turn/start", seq: "0", time: 1, data: {} })).toBe(false)
    expect(isEnvelope({ type: "turn/start", seq: 0, data: {} })).toBe(false)
    expect(isEnvelope({ type: "turn/start", seq: 0, time: 1 })).toBe(false)
    expect(isEnvelope(null)).toBe(false)
    expect(isEnvelope("turn/start")).toBe(false)
  })
})
