// vitest project: integration
/**
 * Byte-level timers inside the HTTP edge (issue 11 item 1, DEC-3): the first-byte timer stops at
 * the first byte of the response body (an SSE comment, an Anthropic `ping`, a role-only delta),
 * the idle timer runs between reads of any bytes. Real HTTP over loopback against the fake
 * provider, with test-sized timers (400 ms) and keep-alives every 50 ms, so no assertion depends on
 * timing beyond an 8x margin.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as Message from "../../src/Llm/Message.js"
import * as Retry from "../../src/Llm/Retry.js"
import type * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as FakeProvider from "../support/FakeProvider.js"

const key = Redacted.make("sk-timer-test")
const limits = Retry.layer({ firstByteTimeout: "400 millis", idleTimeout: "400 millis", baseDelay: "10 millis", jitter: 0 })

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`
const delta = (d: Record<string, unknown>, finish: string | null = null) =>
  data({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: d, finish_reason: finish }] })
const openAiText = (text: string) => [delta({ content: text }), delta({}, "stop"), "data: [DONE]\n\n"].join("")

const event = (type: string, payload: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`
const anthropicStart = event("message_start", {
  message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude", usage: { input_tokens: 3, output_tokens: 1 } }
})
const anthropicRest = [
  event("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "long thought" } }),
  event("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "sig" } }),
  event("content_block_stop", { index: 0 }),
  event("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
  event("content_block_delta", { index: 1, delta: { type: "text_delta", text: "done" } }),
  event("content_block_stop", { index: 1 }),
  event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } }),
  event("message_stop")
].join("")

/** `n` copies of `what`, each followed by a 50 ms pause. */
const every50 = (what: string, n: number): Array<string | number> => Array.from({ length: n }, () => [what, 50]).flat()

type Wire = "openai" | "anthropic"

const withFake = <A, E>(
  wire: Wire,
  replies: ReadonlyArray<FakeProvider.Reply>,
  body: (fake: FakeProvider.FakeProvider, request: Message.GenerateOptions) => Effect.Effect<A, E, Llm.Llm | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fake = yield* FakeProvider.make({ replies })
    const adapter = wire === "openai"
      ? yield* OpenAiCompatible.make({ profile: "generic", baseUrl: `${fake.url}/v1`, apiKey: key })
      : yield* Anthropic.make({ apiKey: key, baseUrl: fake.url })
    const provider = wire === "openai" ? "openai-compatible" : "anthropic"
    yield* Llm.register([provider], adapter)
    return yield* body(fake, { provider, model: "m", messages: [Message.user("hi")] })
  }).pipe(Effect.provide(Layer.mergeAll(Llm.layer, limits, NodeHttpClient.layerUndici)))

const run = (request: Message.GenerateOptions) =>
  Effect.suspend(() => {
    const chunks: Array<StreamChunk.StreamChunk> = []
    return Llm.stream(request).pipe(
      Stream.runForEach((c) => Effect.sync(() => void chunks.push(c))),
      Effect.exit,
      Effect.map((exit) => ({ chunks, exit }))
    )
  })

describe("byte-level timers in the HTTP edge (DEC-3, issue 11)", () => {
  it.live("[DEC-3] SSE keep-alive comments for 3x the first-byte timeout: no timeout, one request", () =>
    withFake("openai", [FakeProvider.timed([...every50(": keep-alive\n\n", 24), openAiText("hello")])], (fake, request) =>
      Effect.gen(function*() {
        const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.text("hello")])
        expect(yield* fake.requests).toHaveLength(1)
      })))

  it.live("[DEC-3] a role-only delta, then comments: the role delta is the first byte; no timeout, one request", () =>
    withFake(
      "openai",
      [FakeProvider.timed([delta({ role: "assistant", content: "" }), 50, ...every50(": ping\n\n", 24), openAiText("ok")])],
      (fake, request) =>
        Effect.gen(function*() {
          const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
          expect(assembled.blocks).toEqual([ContentBlock.text("ok")])
          expect(yield* fake.requests).toHaveLength(1)
        })
    ))

  it.live("[DEC-3] Anthropic thinking with ping-only gaps for 3x the idle timeout: no timeout, one request", () =>
    withFake(
      "anthropic",
      [FakeProvider.timed([
        anthropicStart,
        event("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
        ...every50(event("ping"), 24),
        anthropicRest
      ])],
      (fake, request) =>
        Effect.gen(function*() {
          const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
          expect(assembled.blocks).toEqual([ContentBlock.reasoning("long thought"), ContentBlock.text("done")])
          expect(yield* fake.requests).toHaveLength(1)
        })
    ))

  it.live("[DEC-3, E-6] a silent server (no headers) times out once and the request is retried", () =>
    withFake("openai", [FakeProvider.stall(), FakeProvider.sse(openAiText("second"))], (fake, request) =>
      Effect.gen(function*() {
        const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.text("second")])
        expect(yield* fake.requests).toHaveLength(2)
      })))

  it.live("[DEC-3, E-6] headers alone do not count: headers then silence times out (first-byte) and is retried", () =>
    withFake("anthropic", [FakeProvider.timed([], { end: false }), FakeProvider.sse(anthropicStart + event("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) + anthropicRest)], (fake, request) =>
      Effect.gen(function*() {
        const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.reasoning("long thought"), ContentBlock.text("done")])
        expect(yield* fake.requests).toHaveLength(2)
      })))

  it.live("[DEC-3] with one attempt, the silent server's failure is TIMEOUT (first-byte)", () =>
    withFake("openai", [FakeProvider.timed([], { end: false })], (_fake, request) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Stream.runDrain(Llm.stream(request)))
        expect(error).toMatchObject({ _tag: "ProviderError", code: "TIMEOUT", provider: "openai-compatible" })
        expect(error.message).toMatch(/first-byte timeout/)
      }).pipe(Effect.provide(Retry.layer({ firstByteTimeout: "400 millis", maxAttempts: 1 })))))

  it.live("[DEC-3, L-20] an idle gap after chunks fails with TIMEOUT after the chunks: request recovery, not a retry", () =>
    withFake(
      "openai",
      [FakeProvider.timed([delta({ content: "partial" }), 50, ": still here\n\n"], { end: false }), FakeProvider.sse(openAiText("never"))],
      (fake, request) =>
        Effect.gen(function*() {
          const { chunks, exit } = yield* run(request)
          expect(chunks.filter((c) => c.type === "text-delta")).toMatchObject([{ text: "partial" }])
          const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
          expect(failure).toMatchObject({ _tag: "ProviderError", code: "TIMEOUT" })
          expect(failure?.message).toMatch(/idle timeout/)
          expect(failure !== undefined && Llm.isModelRequestFailure(failure)).toBe(true)
          expect(yield* fake.requests).toHaveLength(1)
        })
    ))

  it.live("[DEC-3, L-20] through the agent loop: the idle timeout after chunks reaches request recovery (attempt 0), whose Retry is a new step that completes the turn", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        replies: [
          FakeProvider.timed([delta({ content: "partial" }), 50, ": still here\n\n"], { end: false }),
          FakeProvider.sse(openAiText("recovered"))
        ]
      })
      const adapter = yield* OpenAiCompatible.make({ profile: "generic", baseUrl: `${fake.url}/v1`, apiKey: key })
      // the test-sized timers apply inside the adapter's HTTP edge; the Llm retry keeps its defaults
      const policy = Result.getOrThrow(Retry.policy({ firstByteTimeout: "400 millis", idleTimeout: "400 millis" }))
      yield* Llm.register(["openai-compatible"], { ...adapter, stream: (r) => adapter.stream(r).pipe(Stream.provideService(Retry.Policy, policy)) })
      const hooks = yield* Hooks.LoopHooks
      const offered = yield* Ref.make<ReadonlyArray<{ code: string | undefined; message: string; step: number; attempt: number }>>([])
      yield* hooks.requestError.register((i) =>
        Effect.as(
          Ref.update(offered, (a) => [...a, { code: i.error.code, message: i.error.message, step: i.step, attempt: i.attempt }]),
          i.attempt === 0 ? Hooks.RequestErrorDecision.Retry() : Hooks.RequestErrorDecision.Fail()
        )
      )
      const agent = yield* Agent.make({ provider: "openai-compatible", model: "m" })
      yield* agent.send([ContentBlock.text("hi")])
      yield* agent.whenIdle
      const seen = yield* Ref.get(offered)
      expect(seen).toMatchObject([{ code: "TIMEOUT", step: 1, attempt: 0 }])
      expect(seen[0]?.message).toMatch(/idle timeout/)
      // one request per step: the Llm retry did not resend the request (chunks were emitted)
      expect(yield* fake.requests).toHaveLength(2)
      const events = yield* agent.session.events
      expect(events.filter((e) => e.type === "step/start").map((e) => e.type === "step/start" && e.data.step)).toEqual([1, 2])
      expect(events.filter((e) => e.type === "turn/end").map((e) => e.type === "turn/end" && e.data.reason)).toEqual([{ kind: "completed" }])
      const texts = events.flatMap((e) => e.type === "assistant/message" ? [ContentBlock.flattenText(e.data.content)] : [])
      expect(texts.at(-1)).toBe("recovered")
    }).pipe(Effect.provide(Layer.merge(TestKit.layer({ script: [] }), NodeHttpClient.layerUndici))))
})
