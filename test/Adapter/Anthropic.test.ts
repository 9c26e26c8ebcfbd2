// vitest project: integration
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as HttpEdge from "../../src/Adapter/HttpEdge.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as LlmError from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as FakeProvider from "../support/FakeProvider.js"

const key = Redacted.make("sk-ant-secret-abcdef")
const model = "claude-sonnet-4-5"

const event = (type: string, payload: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`

const start = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }) =>
  event("message_start", {
    message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-sonnet-4-5-20250929", usage }
  })
const blockStart = (index: number, block: Record<string, unknown>) => event("content_block_start", { index, content_block: block })
const blockDelta = (index: number, delta: Record<string, unknown>) => event("content_block_delta", { index, delta })
const blockStop = (index: number) => event("content_block_stop", { index })
const messageDelta = (stop: string, usage: Record<string, unknown>) =>
  event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage })
const stop = event("message_stop")

const signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+ExampleSignature/+==" // opaque
const firstTurn = [
  start({ input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 }),
  blockStart(0, { type: "thinking", thinking: "", signature: "" }),
  event("ping"),
  blockDelta(0, { type: "thinking_delta", thinking: "Let me " }),
  blockDelta(0, { type: "thinking_delta", thinking: "check ü." }),
  blockDelta(0, { type: "signature_delta", signature: signature.slice(0, 20) }),
  blockDelta(0, { type: "signature_delta", signature: signature.slice(20) }),
  blockStop(0),
  blockStart(1, { type: "redacted_thinking", data: "opaque-redacted==" }),
  blockStop(1),
  blockStart(2, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }),
  blockDelta(2, { type: "input_json_delta", partial_json: "{\"query\":" }),
  blockDelta(2, { type: "input_json_delta", partial_json: "\"x\"}" }),
  blockStop(2),
  blockStart(3, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://x" }] }),
  blockStop(3),
  event("brand_new_event", { anything: true }),
  blockStart(4, { type: "text", text: "" }),
  blockDelta(4, { type: "text_delta", text: "I'll read " }),
  blockDelta(4, { type: "text_delta", text: "it." }),
  blockStop(4),
  blockStart(5, { type: "tool_use", id: "toolu_1", name: "read", input: {} }),
  blockDelta(5, { type: "input_json_delta", partial_json: "" }),
  blockDelta(5, { type: "input_json_delta", partial_json: "{\"path\":" }),
  blockDelta(5, { type: "input_json_delta", partial_json: " \"a.txt\"}" }),
  blockStop(5),
  messageDelta("tool_use", { output_tokens: 42 }),
  stop
].join("")

const textTurn = (text: string) =>
  [start(), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text }), blockStop(0), messageDelta("end_turn", { output_tokens: 3 }), stop].join("")

const resolved = (options: Partial<Anthropic.Options> = {}) => Anthropic.resolve({ apiKey: key, ...options })

const request = (extra: Partial<Message.GenerateOptions> = {}): Message.GenerateOptions => ({
  provider: "anthropic",
  model,
  messages: [Message.user("hi")],
  ...extra
})

const decode = (sse: string) =>
  Stream.make(new TextEncoder().encode(sse)).pipe(
    Anthropic.decodeResponse("anthropic"),
    Stream.runCollect,
    Effect.result
  )

const live = <A, E>(
  effect: Effect.Effect<A, E, import("effect/http/HttpClient").HttpClient | import("effect/Scope").Scope>
) => effect.pipe(Effect.provide(NodeHttpClient.layerUndici))

describe("Anthropic request mapping", () => {
  it.effect("body: model, default max_tokens 8192, system, tools as input_schema, temperature, stop_sequences, stream", () =>
    Effect.gen(function*() {
      const tool = { name: "read", description: "Read", parameters: { type: "object", properties: { path: { type: "string" } } } }
      const body = Result.getOrThrow(
        Anthropic.buildBody(yield* resolved(), request({ system: "be brief", tools: [tool], temperature: 0.5, stop: ["X"] }))
      )
      const ephemeral = { type: "ephemeral" }
      expect(body).toEqual({
        model,
        max_tokens: 8192,
        system: [{ type: "text", text: "be brief", cache_control: ephemeral }],
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: ephemeral }] }],
        tools: [{ name: "read", description: "Read", input_schema: tool.parameters, cache_control: ephemeral }],
        temperature: 0.5,
        stop_sequences: ["X"],
        stream: true
      })
      const uncached = Result.getOrThrow(
        Anthropic.buildBody(yield* resolved({ promptCache: false }), request({ system: "be brief", tools: [tool] }))
      )
      expect(uncached["system"]).toBe("be brief")
      expect(JSON.stringify(uncached)).not.toContain("cache_control")
      const minimal = Result.getOrThrow(Anthropic.buildBody(yield* resolved(), request({ tools: [], maxTokens: 99 })))
      expect(Object.keys(minimal)).toEqual(["model", "max_tokens", "messages", "stream"])
      expect(minimal["max_tokens"]).toBe(99)
    }))

  it.effect("thinking budget → thinking {enabled, budget_tokens}; a budget not below max_tokens fails before I/O", () =>
    Effect.gen(function*() {
      const config = yield* resolved({ thinking: { budgetTokens: 4000 }, maxTokens: 16000 })
      const body = Result.getOrThrow(Anthropic.buildBody(config, request()))
      expect(body["thinking"]).toEqual({ type: "enabled", budget_tokens: 4000 })
      expect(body["max_tokens"]).toBe(16000)
      const tooSmall = Anthropic.buildBody(config, request({ maxTokens: 4000 }))
      expect(Result.isFailure(tooSmall) && tooSmall.failure.code).toBe("INVALID_REQUEST")
      // C-8: an option the provider cannot honour fails loudly before I/O
      const hot = Anthropic.buildBody(config, request({ temperature: 0.2 }))
      expect(Result.isFailure(hot) && hot.failure).toMatchObject({ code: "UNSUPPORTED_OPTION", provider: "anthropic" })
      expect(Result.isSuccess(Anthropic.buildBody(config, request({ temperature: 1 })))).toBe(true)
    }))

  it.effect("[DEC-5] whitespace-only text blocks are never replayed (Anthropic 400s on them), with or without replay state; signatures intact", () =>
    Effect.gen(function*() {
      const replayState = {
        kind: "anthropic-messages",
        version: 1,
        model,
        id: "msg_1",
        blocks: [{ type: "text" }, { type: "thinking", signature: "sig-1" }, { type: "text" }]
      }
      const messages = Result.getOrThrow(
        Anthropic.toWireMessages({
          model,
          messages: [
            Message.user([ContentBlock.text("q"), ContentBlock.text(" \n\t ")]),
            Message.assistant([ContentBlock.text("\n\n"), ContentBlock.reasoning("thought"), ContentBlock.text("answer")], {
              provider: "anthropic",
              model,
              replayState
            }),
            Message.user("next"),
            Message.assistant([ContentBlock.text("  "), ContentBlock.text("plain")])
          ]
        })
      )
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "q" }] },
        {
          role: "assistant",
          content: [{ type: "thinking", thinking: "thought", signature: "sig-1" }, { type: "text", text: "answer" }]
        },
        { role: "user", content: [{ type: "text", text: "next" }] },
        { role: "assistant", content: [{ type: "text", text: "plain" }] }
      ])
      expect(JSON.stringify(messages)).not.toMatch(/"text":"\s*"/)
    }))

  it.effect("user turns: tool results first, consecutive results in ONE user turn, (no output), is_error; history system → user text", () =>
    Effect.gen(function*() {
      const messages = Result.getOrThrow(
        Anthropic.toWireMessages({
          model,
          messages: [
            { role: "system", content: [ContentBlock.text("sys note")] },
            Message.user("question"),
            Message.assistant([ContentBlock.toolCall("c1", "a", "{\"x\":1}"), ContentBlock.toolCall("c2", "b", "")]),
            Message.user([
              ContentBlock.text("note first"),
              ContentBlock.toolResult("c1", [ContentBlock.text("one"), ContentBlock.text(" two")]),
              ContentBlock.toolResult("c2", [], true),
              ContentBlock.text("")
            ]),
            Message.user([ContentBlock.text("steering")]),
            Message.user([]),
            Message.assistant([]),
            Message.assistant([ContentBlock.reasoning("foreign thoughts"), ContentBlock.text("answer"), ContentBlock.toolCall("c3", "c", "not json")])
          ]
        })
      )
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "sys note" }, { type: "text", text: "question" }] },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "c1", name: "a", input: { x: 1 } },
            { type: "tool_use", id: "c2", name: "b", input: {} }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "c1", content: "one two" },
            { type: "tool_result", tool_use_id: "c2", content: "(no output)", is_error: true },
            { type: "text", text: "note first" },
            { type: "text", text: "steering" }
          ]
        },
        {
          role: "assistant",
          content: [{ type: "text", text: "answer" }, { type: "tool_use", id: "c3", name: "c", input: {} }]
        }
      ])
    }))
})

describe("Anthropic response translation", () => {
  it.effect("thinking → reasoning, redacted → empty reasoning, server tools kept native, tool_use args streamed; usage and replay", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(yield* decode(firstTurn))
      expect(chunks.slice(0, 4)).toEqual([
        StreamChunk.blockStart(0, "reasoning"),
        StreamChunk.reasoningDelta(0, "Let me "),
        StreamChunk.reasoningDelta(0, "check ü."),
        StreamChunk.blockEnd(0, ContentBlock.reasoning("Let me check ü."))
      ])
      expect(chunks).toContainEqual(StreamChunk.toolCallDelta(3, "toolu_1", "", "read"))
      expect(chunks).toContainEqual(StreamChunk.toolCallDelta(3, "toolu_1", "{\"path\":", "read"))
      const usageAt = chunks.findIndex((c) => c.type === "usage")
      expect(usageAt).toBe(chunks.length - 2)
      const assembled = yield* Stream.run(Stream.fromIterable(chunks), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([
        ContentBlock.reasoning("Let me check ü."),
        ContentBlock.reasoning(""),
        ContentBlock.text("I'll read it."),
        ContentBlock.toolCall("toolu_1", "read", "{\"path\": \"a.txt\"}")
      ])
      expect(assembled.usage).toEqual({ inputTokens: 10, outputTokens: 42, cacheReadTokens: 5, cacheWriteTokens: 0 })
      expect(assembled.finish).toEqual({ kind: "tool-calls" })
      expect(assembled.replayState).toEqual({
        kind: "anthropic-messages",
        version: 1,
        model: "claude-sonnet-4-5-20250929",
        id: "msg_1",
        blocks: [
          { type: "thinking", signature },
          { type: "redacted_thinking", data: "opaque-redacted==" },
          { type: "native", block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } } },
          {
            type: "native",
            block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://x" }] }
          },
          { type: "text" },
          { type: "tool_use" }
        ]
      })
    }))

  it.effect("empty tool input → {}; message_delta usage overrides message_start; stop reasons", () =>
    Effect.gen(function*() {
      const sse = [
        start({ input_tokens: 43, output_tokens: 1 }),
        blockStart(0, { type: "tool_use", id: "t", name: "noargs", input: {} }),
        blockDelta(0, { type: "input_json_delta", partial_json: "" }),
        blockStop(0),
        messageDelta("tool_use", { input_tokens: 61, output_tokens: 2, output_tokens_details: { thinking_tokens: 0 } }),
        stop
      ].join("")
      const assembled = yield* Stream.run(
        Stream.fromIterable(Result.getOrThrow(yield* decode(sse))),
        BlockAssembler.sink
      )
      expect(assembled.blocks).toEqual([ContentBlock.toolCall("t", "noargs", "{}")])
      expect(assembled.usage).toEqual({ inputTokens: 61, outputTokens: 2, reasoningTokens: 0 })
      expect(Anthropic.mapStopReason("end_turn")).toEqual({ kind: "stop" })
      expect(Anthropic.mapStopReason("stop_sequence")).toEqual({ kind: "stop" })
      expect(Anthropic.mapStopReason("tool_use")).toEqual({ kind: "tool-calls" })
      expect(Anthropic.mapStopReason("max_tokens")).toEqual({ kind: "max-tokens" })
      expect(Anthropic.mapStopReason("refusal")).toEqual({ kind: "error", message: "model stopped: refusal", code: "REFUSAL" })
      expect(Anthropic.mapStopReason("model_context_window_exceeded").kind === "error" &&
        (Anthropic.mapStopReason("model_context_window_exceeded") as { code: string }).code).toBe("CONTEXT_WINDOW_EXCEEDED")
    }))

  it.effect("missing message_stop → STREAM_CLOSED; bad event JSON → MALFORMED_RESPONSE", () =>
    Effect.gen(function*() {
      const cut = yield* decode([start(), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "x" })].join(""))
      expect(Result.flip(cut)).toEqual(
        Result.succeed(LlmError.providerError("STREAM_CLOSED", "stream ended without message_stop", { provider: "anthropic" }))
      )
      const bad = yield* decode(start() + "event: content_block_start\ndata: {oops\n\n" + stop)
      expect(Result.isFailure(bad) && bad.failure.code).toBe("MALFORMED_RESPONSE")
    }))

  it.effect("error event: before any chunk the stream FAILS (retryable SERVER); after chunks it ends in-band with usage", () =>
    Effect.gen(function*() {
      const overloaded = event("error", { error: { type: "overloaded_error", message: "Overloaded" } })
      const first = yield* decode(start() + event("ping") + overloaded)
      expect(Result.isFailure(first)).toBe(true)
      const error = Result.flip(first).pipe(Result.getOrThrow)
      expect(error).toMatchObject({ code: "SERVER", message: "Overloaded" })
      expect(LlmError.isRetryable(error)).toBe(true)
      const mid = Result.getOrThrow(
        yield* decode(
          [start({ input_tokens: 17, output_tokens: 1 }), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "Hello" }), overloaded].join("")
        )
      )
      expect(mid.slice(-3)).toEqual([
        StreamChunk.blockEnd(0, ContentBlock.text("Hello")),
        StreamChunk.usage({ inputTokens: 17, outputTokens: 1 }),
        StreamChunk.finish({ kind: "error", message: "Overloaded", code: "SERVER", providerCode: "overloaded_error" })
      ])
      expect(Anthropic.codeForErrorType("rate_limit_error", "")).toBe("RATE_LIMIT")
      expect(Anthropic.codeForErrorType("authentication_error", "")).toBe("AUTH")
      expect(Anthropic.codeForErrorType("invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum"))
        .toBe("CONTEXT_WINDOW_EXCEEDED")
      expect(Anthropic.codeForErrorType("invalid_request_error", "bad effort")).toBe("INVALID_REQUEST")
      expect(Anthropic.codeForErrorType("weird_error", "")).toBe("WEIRD_ERROR")
    }))
})

describe("Anthropic over HTTP", () => {
  it.live("AC-5 [C-6] POST <base>/v1/messages with x-api-key, anthropic-version and the attribution user-agent", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(textTurn("hello"))] })
      const adapter = yield* Anthropic.make({
        apiKey: key,
        baseUrl: fake.url,
        betas: ["interleaved-thinking-2025-05-14"],
        headers: { "USER-AGENT": "other/1", "anthropic-version": "2023-06-01" }
      })
      expect(adapter.providers).toEqual([{ id: "anthropic", name: "Anthropic" }])
      const assembled = yield* adapter.stream(request()).pipe(Stream.run(BlockAssembler.sink))
      expect(assembled.blocks).toEqual([ContentBlock.text("hello")])
      const [received] = yield* fake.requests
      expect(received?.path).toBe("/v1/messages")
      expect(received?.headers["x-api-key"]).toBe(Redacted.value(key))
      expect(received?.headers["authorization"]).toBeUndefined()
      expect(received?.headers["anthropic-version"]).toBe("2023-06-01")
      expect(received?.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14")
      expect(received?.headers["user-agent"]).toBe(HttpEdge.userAgent)
      expect(received?.headers["content-type"]).toBe("application/json")
      expect(Object.keys(received?.headers ?? {}).filter((h) => h === "http-referer" || h.startsWith("x-openrouter-"))).toEqual([])
    })))

  it.live("[C-7, DEC-5] multi-turn tool loop with thinking: the 2nd request carries the thinking signature unchanged", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        replies: [FakeProvider.sse(firstTurn, { maxPiece: 7 }), FakeProvider.sse(textTurn("a.txt says hi"))]
      })
      const adapter = yield* Anthropic.make({ apiKey: key, baseUrl: fake.url, thinking: { budgetTokens: 2048 } })
      const history: Array<Message.Message> = [Message.user("what is in a.txt?")]
      const first = yield* adapter.stream(request({ messages: history })).pipe(Stream.run(BlockAssembler.sink))
      expect(first.finish).toEqual({ kind: "tool-calls" })
      history.push(
        Message.assistant(first.blocks, {
          provider: "anthropic",
          model,
          ...(first.replayState === undefined ? {} : { replayState: first.replayState })
        }),
        Message.user([ContentBlock.toolResult("toolu_1", [ContentBlock.text("hi")])])
      )
      const second = yield* adapter.stream(request({ messages: history })).pipe(Stream.run(BlockAssembler.sink))
      expect(second.blocks).toEqual([ContentBlock.text("a.txt says hi")])
      const [, received] = yield* fake.requests
      const body = received?.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }
      expect(body.messages[1]).toEqual({
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Let me check ü.", signature },
          { type: "redacted_thinking", data: "opaque-redacted==" },
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
          { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://x" }] },
          { type: "text", text: "I'll read it." },
          { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } }
        ]
      })
      expect(body.messages[2]).toEqual({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "hi", cache_control: { type: "ephemeral" } }]
      })
      expect(received?.rawBody).toContain(JSON.stringify(signature))
      expect(received?.rawBody).toContain(JSON.stringify("Let me check ü."))
    })))

  it.live("[C-7] real capture: thinking signature of anthropic/thinking-then-tool-use-empty-input goes back byte-identical", () =>
    live(Effect.gen(function*() {
      if (FakeProvider.fixturesAbsent("the real-capture signature replay")) return
      const name = "anthropic/thinking-then-tool-use-empty-input"
      const expected = JSON.parse(readFileSync(FakeProvider.fixture(`${name}.expected.json`), "utf8")) as {
        blocks: Array<{ signature?: string; text?: string; id?: string }>
      }
      const fake = yield* FakeProvider.make({
        replies: [FakeProvider.sseFile(FakeProvider.fixture(`${name}.sse`)), FakeProvider.sse(textTurn("v1.2.3, no joke"))]
      })
      const adapter = yield* Anthropic.make({ apiKey: key, baseUrl: fake.url })
      const first = yield* adapter.stream(request()).pipe(Stream.run(BlockAssembler.sink))
      const messages = [
        Message.user("hi"),
        Message.assistant(first.blocks, { provider: "anthropic", model, replayState: first.replayState ?? null }),
        Message.user([ContentBlock.toolResult(expected.blocks[1]?.id ?? "", [ContentBlock.text("1.2.3")])])
      ]
      yield* adapter.stream(request({ messages })).pipe(Stream.runDrain)
      const [, received] = yield* fake.requests
      const content = (received?.body as { messages: Array<{ content: Array<Record<string, unknown>> }> }).messages[1]?.content
      expect(content?.[0]).toEqual({ type: "thinking", thinking: expected.blocks[0]?.text, signature: expected.blocks[0]?.signature })
      expect(received?.rawBody).toContain(JSON.stringify(expected.blocks[0]?.signature))
      expect(content?.[1]).toEqual({ type: "tool_use", id: expected.blocks[1]?.id, name: "fixed_version", input: {} })
    })))

  it.live("[C-7] replay state validated: mismatch → INVALID_REPLAY_STATE before I/O; another model → foreign (thinking not sent)", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(textTurn("ok"))] })
      const adapter = yield* Anthropic.make({ apiKey: key, baseUrl: fake.url })
      const first = yield* Stream.run(Stream.fromIterable(Result.getOrThrow(yield* decode(firstTurn))), BlockAssembler.sink)
      const replayState = first.replayState ?? null
      const withContent = (content: ReadonlyArray<ContentBlock.ContentBlock>, m = model) =>
        request({ messages: [Message.user("q"), Message.assistant(content, { provider: "anthropic", model: m, replayState })] })
      const dropped = yield* Effect.flip(Stream.runDrain(adapter.stream(withContent(first.blocks.slice(1)))))
      expect(dropped).toMatchObject({ code: "INVALID_REPLAY_STATE", provider: "anthropic" })
      const swapped = yield* Effect.flip(
        Stream.runDrain(adapter.stream(withContent([first.blocks[2], first.blocks[1], first.blocks[0], first.blocks[3]] as Array<ContentBlock.ContentBlock>)))
      )
      expect(swapped.code).toBe("INVALID_REPLAY_STATE")
      const garbage = yield* Effect.flip(
        Stream.runDrain(adapter.stream(request({
          messages: [Message.assistant([ContentBlock.text("x")], { provider: "anthropic", model, replayState: { kind: "other" } })]
        })))
      )
      expect(garbage.code).toBe("INVALID_REPLAY_STATE")
      expect((yield* fake.requests).length).toBe(0)
      yield* Stream.runDrain(adapter.stream(withContent(first.blocks, "claude-opus-4-1")))
      const [received] = yield* fake.requests
      expect((received?.body as { messages: Array<unknown> }).messages[1]).toEqual({
        role: "assistant",
        content: [{ type: "text", text: "I'll read it." }, {
          type: "tool_use",
          id: "toolu_1",
          name: "read",
          input: { path: "a.txt" },
          cache_control: { type: "ephemeral" }
        }]
      })
    })))

  it.live("HTTP errors: 529 → SERVER, 429 retry-after → RATE_LIMIT; the key never appears in messages", () =>
    live(Effect.gen(function*() {
      const secret = Redacted.value(key)
      const fake = yield* FakeProvider.make({
        replies: [
          FakeProvider.status(529, { body: "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}" }),
          FakeProvider.status(429, { retryAfter: "13", body: "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}" }),
          FakeProvider.status(401, { body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ${secret}"}}` })
        ]
      })
      const adapter = yield* Anthropic.make({ apiKey: key, baseUrl: fake.url })
      const overloaded = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
      expect(overloaded).toMatchObject({ code: "SERVER", status: 529, message: "Overloaded" })
      const limited = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
      expect(limited).toMatchObject({ code: "RATE_LIMIT", retryAfterMillis: 13000 })
      const auth = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
      expect(auth).toMatchObject({ code: "AUTH", message: "invalid x-api-key <redacted>" })
      expect(JSON.stringify([overloaded, limited, auth])).not.toContain(secret)
    })))

  it.effect("layerConfig reads ANTHROPIC_API_KEY (missing → failure) and ANTHROPIC_BASE_URL", () =>
    Effect.gen(function*() {
      const env = (map: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(map))
      const missing = yield* Effect.exit(Anthropic.config().pipe(env({})))
      expect(Exit.isFailure(missing)).toBe(true)
      const options = yield* Anthropic.config().pipe(env({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "http://gw.example" }))
      expect([Redacted.value(options.apiKey), options.baseUrl]).toEqual(["k", "http://gw.example"])
      const empty = yield* Effect.exit(Anthropic.resolve({ apiKey: Redacted.make("") }))
      expect(Exit.isFailure(empty)).toBe(true)
    }))
})
