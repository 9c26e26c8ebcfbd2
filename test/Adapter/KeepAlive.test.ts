// vitest project: integration
/**
 * Issue 20, HTTP: keep-alive sockets survive the end of a stream, and an adapter's HTTP client
 * cannot die before the adapter does. Real HTTP over loopback to the fake provider.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as HttpEdge from "../../src/Adapter/HttpEdge.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import * as FakeProvider from "../support/FakeProvider.js"

const key = Redacted.make("sk-keepalive-0123456789")

const openAiBody = (text: string) =>
  `data: {"choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n` +
  `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n` +
  "data: [DONE]\n\n"

const anthropicBody = (text: string) =>
  [
    `event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":3,"output_tokens":0}}}\n\n`,
    `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n`,
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${text}"}}\n\n`,
    `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n`,
    `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}\n\n`,
    `event: message_stop\ndata: {"type":"message_stop"}\n\n`
  ].join("")

/** the whole SSE body at once, then (20 ms later, a separate write) the end of the body */
const doneThenEnd = (body: string) => FakeProvider.timed([body, 20])

const request = (provider: string): Message.GenerateOptions => ({ provider, model: "m", messages: [Message.user("hi")] })

describe("keep-alive and client lifetime (issue 20)", () => {
  it.live("[P-4] OpenAI-compatible: [DONE] and the body end 20 ms apart → four requests over ONE socket", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make()
      const texts = ["a", "b", "c", "d"]
      yield* fake.enqueue(...texts.map((t) => doneThenEnd(openAiBody(t))))
      // no client provided: the adapter's own undici client
      const adapter = yield* OpenAiCompatible.make({ profile: "generic", baseUrl: fake.url, apiKey: key })
      for (const t of texts) {
        const assembled = yield* Stream.run(adapter.stream(request("openai-compatible")), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.text(t)])
        expect(assembled.finish).toEqual({ kind: "stop" })
      }
      const requests = yield* fake.requests
      expect(requests).toHaveLength(4)
      expect(new Set(requests.map((r) => r.remotePort)).size).toBe(1)
      for (let i = 0; i < 4; i++) expect(yield* fake.awaitClose(i)).toEqual({ early: false })
    }))

  it.live("[P-4] Anthropic: message_stop and the body end 20 ms apart → three requests over ONE socket", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make()
      yield* fake.enqueue(...["x", "y", "z"].map((t) => doneThenEnd(anthropicBody(t))))
      const adapter = yield* Anthropic.make({ apiKey: key, baseUrl: fake.url })
      for (const t of ["x", "y", "z"]) {
        const assembled = yield* Stream.run(adapter.stream(request("anthropic")), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.text(t)])
      }
      const requests = yield* fake.requests
      expect(new Set(requests.map((r) => r.remotePort)).size).toBe(1)
    }))

  it.live("[P-4] the drain is bounded: a body that never ends after [DONE] is released after the time limit", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make()
      yield* fake.enqueue(FakeProvider.timed([openAiBody("a")], { end: false }))
      const adapter = yield* OpenAiCompatible.make({ profile: "generic", baseUrl: fake.url, apiKey: key })
      const assembled = yield* Stream.run(adapter.stream(request("openai-compatible")), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([ContentBlock.text("a")])
      // the client gave up on the unfinished body: the connection is closed, not pooled
      expect(yield* fake.awaitClose(0)).toEqual({ early: true })
      expect(HttpEdge.drainLimit.bytes).toBeLessThanOrEqual(64 * 1024)
    }))

  it.live("[issue 20] an adapter built in a scope that then closed keeps working (it owns its client)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make()
      yield* fake.enqueue(FakeProvider.sse(openAiBody("late")))
      // constructed inside its own, already closed, scope
      const adapter = yield* Effect.scoped(OpenAiCompatible.make({ profile: "generic", baseUrl: fake.url, apiKey: key }))
      const assembled = yield* Stream.run(adapter.stream(request("openai-compatible")), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([ContentBlock.text("late")])
    }))

  it.live("[issue 20] a client provided only while constructing the adapter: a one-line TRANSPORT error that says why", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make()
      yield* fake.enqueue(FakeProvider.sse(openAiBody("never")))
      const trapped = yield* OpenAiCompatible.make({ profile: "generic", baseUrl: fake.url, apiKey: key }).pipe(
        Effect.provide(NodeHttpClient.layerUndici)
      )
      const error = yield* Effect.flip(Stream.runDrain(trapped.stream(request("openai-compatible"))))
      expect(error).toMatchObject({ _tag: "ProviderError", code: "TRANSPORT" })
      expect(error.message).toMatch(/HTTP client was closed before this request/)
      expect(error.message).not.toContain("\n")
    }))
})
