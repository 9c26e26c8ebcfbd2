import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"

// Effect 4 has no `onExcessProperty: "preserve"`; open members (extension blocks, unknown finish
// reasons and sources) are declared verbatim, so the default options round-trip them
const roundTrip = <A, I>(schema: Schema.Codec<A, I>, text: string) =>
  Effect.gen(function*() {
    const decoded = yield* Schema.decodeUnknownEffect(schema)(JSON.parse(text))
    const encoded = yield* Schema.encodeEffect(schema)(decoded)
    return JSON.stringify(encoded)
  })

describe("LlmCallConfig equality (V-9)", () => {
  it("AC-6 [V-9] configs differ on each of provider, model, temperature, maxTokens, stop presence/length/element; [\"a\",\"b\"] = [\"a\",\"b\"]", () => {
    const base: Message.LlmCallConfig = { provider: "p", model: "m", temperature: 0.5, maxTokens: 10, stop: ["a", "b"] }
    expect(Message.configEquals(base, { ...base, stop: ["a", "b"] })).toBe(true)
    expect(Message.configEquals(base, base)).toBe(true)
    const { stop: _stop, ...noStop } = base
    const { temperature: _t, ...noTemperature } = base
    const variants: ReadonlyArray<Message.LlmCallConfig> = [
      { ...base, provider: "q" },
      { ...base, model: "n" },
      { ...base, temperature: 0.7 },
      noTemperature,
      { ...base, maxTokens: 11 },
      noStop,
      { ...base, stop: [] },
      { ...base, stop: ["a"] },
      { ...base, stop: ["a", "b", "c"] },
      { ...base, stop: ["a", "c"] },
      { ...base, stop: ["b", "a"] }
    ]
    for (const other of variants) {
      expect(Message.configEquals(base, other)).toBe(false)
      expect(Message.configEquals(other, base)).toBe(false)
    }
    // absent ≠ any present list, including []
    expect(Message.configEquals(noStop, { ...noStop, stop: [] })).toBe(false)
    expect(Message.configEquals(noStop, { ...noStop })).toBe(true)
  })
})

describe("Open unions (V-2) and strict core members (V-1)", () => {
  it.effect("[V-2] an unknown block, finish reason and message source decode and re-encode byte-identically", () =>
    Effect.gen(function*() {
      const block = "{\"type\":\"citation\",\"url\":\"https://x.test\",\"span\":{\"from\":1,\"to\":[2,3]},\"note\":null}"
      expect(yield* roundTrip(ContentBlock.ContentBlock, block)).toBe(block)
      const finish = "{\"kind\":\"content-filtered\",\"category\":\"violence\",\"score\":0.97}"
      expect(yield* roundTrip(Message.FinishReason, finish)).toBe(finish)
      const source = "{\"kind\":\"agent\",\"agent\":\"reviewer\",\"depth\":2}"
      expect(yield* roundTrip(Message.MessageSource, source)).toBe(source)
      // inside a message, a tool result and a block-end chunk
      const message = `{"role":"assistant","content":[{"type":"text","text":"t"},${block}],"provenance":{"provider":"p","model":"m","replayState":{"sig":"s"}}}`
      expect(yield* roundTrip(Message.Message, message)).toBe(message)
      const result = `{"type":"tool-result","toolCallId":"c1","content":[${block}],"isError":false}`
      expect(yield* roundTrip(ContentBlock.ContentBlock, result)).toBe(result)
      const chunk = `{"type":"block-end","index":0,"block":${block}}`
      expect(yield* roundTrip(StreamChunk.StreamChunk, chunk)).toBe(chunk)
    }))

  it.effect("[V-2] undeclared keys of a core block survive decode (ContentBlock.decode preserves them)", () =>
    Effect.gen(function*() {
      const decoded = yield* ContentBlock.decode({ type: "text", text: "hi", cacheHint: "x" })
      expect(decoded).toEqual({ type: "text", text: "hi", cacheHint: "x" })
    }))

  it.effect("[V-1] malformed core blocks are rejected, also nested in a tool result; an unknown block that is not lossless JSON too", () =>
    Effect.gen(function*() {
      const bad: ReadonlyArray<unknown> = [
        { type: "text", text: 5 },
        { type: "text" },
        { type: "reasoning", text: null },
        { type: "tool-call", id: "c", name: "n" },
        { type: "tool-call", id: "c", name: "n", arguments: { parsed: true } },
        { type: "tool-result", toolCallId: "c", content: [{ type: "text" }] },
        { type: "tool-result", toolCallId: "c", content: [], isError: "no" },
        { type: "citation", url: NaN },
        { type: 42 },
        "text"
      ]
      for (const value of bad) {
        const exit = yield* Effect.exit(ContentBlock.decode(value))
        expect(exit._tag, JSON.stringify(value) ?? String(value)).toBe("Failure")
      }
      const badFinish = yield* Effect.exit(Schema.decodeUnknownEffect(Message.FinishReason)({ kind: "error" }))
      expect(badFinish._tag).toBe("Failure")
      const badSource = yield* Effect.exit(Schema.decodeUnknownEffect(Message.MessageSource)({ kind: "plugin" }))
      expect(badSource._tag).toBe("Failure")
    }))

  it.effect("[V-4,V-6] provenance and usage are validated: replay state must be lossless JSON, counts non-negative integers", () =>
    Effect.gen(function*() {
      const badState = yield* Effect.exit(
        Schema.decodeUnknownEffect(Message.Message)({ role: "assistant", content: [], provenance: { provider: "p", model: "m", replayState: { n: Infinity } } })
      )
      expect(badState._tag).toBe("Failure")
      const badUsage = yield* Effect.exit(Schema.decodeUnknownEffect(Message.TokenUsage)({ inputTokens: -1, outputTokens: 1.5 }))
      expect(badUsage._tag).toBe("Failure")
      const usage = yield* Schema.decodeUnknownEffect(Message.TokenUsage)({ inputTokens: 1, outputTokens: 2, cacheReadTokens: 3 })
      expect(usage).toEqual({ inputTokens: 1, outputTokens: 2, cacheReadTokens: 3 })
      expect("reasoningTokens" in usage).toBe(false)
    }))
})
