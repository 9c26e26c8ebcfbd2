import { describe, expect, it } from "@effect/vitest"
import * as ReplayCheck from "../../src/Cli/ReplayCheck.js"
import * as Transcript from "../../src/Cli/Transcript.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"

const chunkEvents = (start: number, chunks: ReadonlyArray<StreamChunk.StreamChunk>): Array<SessionEvent> =>
  chunks.map((chunk, i) => ({ type: "assistant/chunk", seq: start + i, time: 0, data: { turn: 1, step: 1, chunk } }))

const log = (content: string): ReadonlyArray<SessionEvent> => {
  const chunks = chunkEvents(3, [
    StreamChunk.textDelta(0, "hel"),
    StreamChunk.textDelta(0, "lo"),
    StreamChunk.usage({ inputTokens: 3, outputTokens: 2, cacheReadTokens: 7 }),
    StreamChunk.finish({ kind: "stop" })
  ])
  return [
    { type: "turn/start", seq: 0, time: 0, data: { turn: 1, trigger: { kind: "message", source: { kind: "user" } } } },
    { type: "user/message", seq: 1, time: 0, data: { content: [{ type: "text", text: "hi" }], source: { kind: "user" } }, surfaceOp: "append" },
    { type: "step/start", seq: 2, time: 0, data: { turn: 1, step: 1 } },
    ...chunks,
    {
      type: "assistant/message",
      seq: 7,
      time: 0,
      data: {
        turn: 1,
        step: 1,
        content: [{ type: "text", text: content }],
        provenance: { provider: "p", model: "m" },
        usage: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 7 }
      },
      surfaceOp: "append",
      sourceEventSeqs: [3, 4, 5, 6]
    },
    { type: "step/end", seq: 8, time: 0, data: { turn: 1, step: 1 } },
    { type: "turn/end", seq: 9, time: 0, data: { turn: 1, reason: { kind: "completed" } } }
  ]
}

describe("ReplayCheck", () => {
  it("re-derives assistant messages from their logged chunks", () => {
    expect(ReplayCheck.check(log("hello"))).toEqual([{ seq: 7, turn: 1, step: 1, status: "match" }])
  })

  it("reports a message that its chunks do not assemble to", () => {
    const [verdict] = ReplayCheck.check(log("tampered"))
    expect(verdict?.status).toBe("mismatch")
    expect(verdict?.detail).toContain("tampered")
  })
})

describe("Transcript", () => {
  it("renders prompts, answers, usage with cache reads and the turn end", () => {
    const text = Transcript.render(log("hello"))
    expect(text).toContain("── turn 1 (message) ──")
    expect(text).toContain("user:\n  hi")
    expect(text).toContain("assistant [p/m]:\n  hello")
    expect(text).toContain("usage: in 3 (+7 cache read) · out 2")
    expect(text).toContain("── end of turn 1: completed ──")
  })
})
