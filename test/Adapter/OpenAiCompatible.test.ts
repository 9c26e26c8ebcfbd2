// vitest project: integration
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as HttpEdge from "../../src/Adapter/HttpEdge.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as LlmAdapter from "../../src/Llm/LlmAdapter.js"
import type * as LlmError from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as FakeProvider from "../support/FakeProvider.js"

const key = Redacted.make("sk-deepseek-secret-0123456789")

const resolved = (options: Partial<OpenAiCompatible.Options> = {}) =>
  OpenAiCompatible.resolve({ profile: "deepseek", apiKey: key, ...options })

const request = (extra: Partial<Message.GenerateOptions> = {}): Message.GenerateOptions => ({
  provider: "deepseek",
  model: "deepseek-v4-flash",
  messages: [Message.user("hi")],
  ...extra
})

const encoder = new TextEncoder()

/** Decodes an SSE body text (as one read per event) through the DeepSeek translator. */
const translate = (sse: string, fields: ReadonlyArray<string> = ["reasoning_content"]) =>
  Stream.fromIterable(sse.split(/(?<=\n\n)/).map((s) => encoder.encode(s))).pipe(
    OpenAiCompatible.decodeResponse(fields, "deepseek"),
    Stream.runCollect,
    Effect.result
  )

const sse = (...payloads: ReadonlyArray<unknown>) =>
  payloads.map((p) => `data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`).join("") + "data: [DONE]\n\n"

const delta = (d: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: "c1",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
  ...extra
})

describe("OpenAiCompatible request (P-2, P-3)", () => {
  it.effect("AC-21 [P-2] the minimal body has exactly model, messages, stream, stream_options", () =>
    Effect.gen(function*() {
      const body = OpenAiCompatible.buildBody(yield* resolved(), request({ tools: [] }))
      expect(Object.keys(body)).toEqual(["model", "messages", "stream", "stream_options"])
      expect(body["stream"]).toBe(true)
      expect(body["stream_options"]).toEqual({ include_usage: true })
      expect(JSON.stringify(body)).not.toContain("null")
    }))

  it.effect("AC-21 [P-2] thinking, effort, tools, sampling and stop only when set, in order", () =>
    Effect.gen(function*() {
      const config = yield* resolved({ thinking: "enabled", reasoningEffort: "max" })
      const tool = { name: "read", description: "Read a file", parameters: { type: "object", properties: {} } }
      const body = OpenAiCompatible.buildBody(
        config,
        request({ tools: [tool], temperature: 0.2, maxTokens: 100, stop: ["END"] })
      )
      expect(Object.keys(body)).toEqual([
        "model",
        "messages",
        "stream",
        "stream_options",
        "thinking",
        "reasoning_effort",
        "tools",
        "temperature",
        "max_tokens",
        "stop"
      ])
      expect(body["thinking"]).toEqual({ type: "enabled" })
      expect(body["reasoning_effort"]).toBe("max")
      expect(body["tools"]).toEqual([{ type: "function", function: tool }])
      expect(body["temperature"]).toBe(0.2)
      expect(body["max_tokens"]).toBe(100)
      expect(body["stop"]).toEqual(["END"])
      // [DECISION] openai sends max_completion_tokens
      const openai = yield* OpenAiCompatible.resolve({ profile: "openai", apiKey: key })
      const openaiBody = OpenAiCompatible.buildBody(openai, request({ maxTokens: 7 }))
      expect(openaiBody["max_completion_tokens"]).toBe(7)
      expect("max_tokens" in openaiBody).toBe(false)
    }))

  it.effect("AC-22 [P-3] system first; user text flattened; reasoning_content only on tool-call turns", () =>
    Effect.gen(function*() {
      const messages = OpenAiCompatible.toWireMessages({
        system: "be brief",
        messages: [
          Message.user([ContentBlock.text("hello "), ContentBlock.text("world")]),
          Message.assistant([ContentBlock.reasoning("think"), ContentBlock.text("plain answer")]),
          Message.assistant([
            ContentBlock.reasoning("plan "),
            ContentBlock.reasoning("more"),
            ContentBlock.toolCall("c1", "read", "{\"path\":\"a\"}"),
            ContentBlock.toolCall("c2", "ls", "")
          ]),
          Message.assistant([]),
          { role: "system", content: [ContentBlock.text("mid "), ContentBlock.text("system")] }
        ]
      }, true)
      expect(messages).toEqual([
        { role: "system", content: "be brief" },
        { role: "user", content: "hello world" },
        { role: "assistant", content: "plain answer" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "read", arguments: "{\"path\":\"a\"}" } },
            { id: "c2", type: "function", function: { name: "ls", arguments: "" } }
          ],
          reasoning_content: "plan more"
        },
        { role: "assistant", content: null },
        { role: "system", content: "mid system" }
      ])
      // the openai profile never sends reasoning_content
      const openai = OpenAiCompatible.toWireMessages({
        messages: [Message.assistant([ContentBlock.reasoning("r"), ContentBlock.toolCall("c1", "t", "{}")])]
      }, false)
      expect(openai[0]).toEqual({
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }]
      })
    }))

  it.effect("AC-23 [P-3] user [text, tool-result] → user then tool; empty result → (no output); empty user → \"\"; unknown blocks skipped", () =>
    Effect.gen(function*() {
      const unknown = { type: "citation", url: "https://x" } as unknown as ContentBlock.ContentBlock
      const messages = OpenAiCompatible.toWireMessages({
        messages: [
          Message.user([
            ContentBlock.text("see results"),
            ContentBlock.toolResult("c1", [ContentBlock.text("ok")]),
            ContentBlock.toolResult("c2", [], true),
            unknown
          ]),
          Message.user([ContentBlock.toolResult("c3", [ContentBlock.text("a"), ContentBlock.text("b")])]),
          Message.user([]),
          Message.user([unknown])
        ]
      }, true)
      expect(messages).toEqual([
        { role: "user", content: "see results" },
        { role: "tool", tool_call_id: "c1", content: "ok" },
        { role: "tool", tool_call_id: "c2", content: "(no output)" },
        { role: "tool", tool_call_id: "c3", content: "ab" },
        { role: "user", content: "" },
        { role: "user", content: "" }
      ])
    }))
})

describe("OpenAiCompatible response (P-5..P-8)", () => {
  it.effect("AC-25 [P-5,P-6] \"Hel\",\"lo\" + stop + usage → start, 2 deltas, end, usage, finish", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ role: "assistant", content: "Hel" }),
            delta({ content: "lo" }),
            delta({}, "stop", { usage: { prompt_tokens: 5, completion_tokens: 2 } })
          )
        )
      )
      expect(chunks).toEqual([
        StreamChunk.blockStart(0, "text"),
        StreamChunk.textDelta(0, "Hel"),
        StreamChunk.textDelta(0, "lo"),
        StreamChunk.blockEnd(0, ContentBlock.text("Hello")),
        StreamChunk.usage({ inputTokens: 5, outputTokens: 2 }),
        StreamChunk.finish({ kind: "stop" })
      ])
    }))

  it.effect("AC-25 [P-5] a leading reasoning_content \"\" opens nothing; reasoning then text → 0 and 1, ended in order", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ role: "assistant", reasoning_content: "", content: null }),
            delta({ reasoning_content: "think", content: null }),
            delta({ reasoning_content: null, content: "say" }),
            delta({ content: "" }, "stop")
          )
        )
      )
      expect(chunks).toEqual([
        StreamChunk.blockStart(0, "reasoning"),
        StreamChunk.reasoningDelta(0, "think"),
        StreamChunk.blockStart(1, "text"),
        StreamChunk.textDelta(1, "say"),
        StreamChunk.blockEnd(0, ContentBlock.reasoning("think")),
        StreamChunk.blockEnd(1, ContentBlock.text("say")),
        StreamChunk.finish({ kind: "stop" })
      ])
    }))

  it.effect("[P-5] one text block per response, reused after tool calls; reasoning, content, tools per chunk", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ content: "a" }),
            delta({ tool_calls: [{ index: 0, id: "t1", function: { name: "f", arguments: "{}" } }] }),
            delta({ reasoning_content: "r", content: "b" }, "tool_calls")
          )
        )
      )
      const assembled = yield* Stream.run(Stream.fromIterable(chunks), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([
        ContentBlock.text("ab"),
        ContentBlock.toolCall("t1", "f", "{}"),
        ContentBlock.reasoning("r")
      ])
      expect(chunks.slice(4, 8)).toEqual([
        StreamChunk.blockStart(2, "reasoning"),
        StreamChunk.reasoningDelta(2, "r"),
        StreamChunk.textDelta(0, "b"),
        StreamChunk.blockEnd(0, ContentBlock.text("ab"))
      ])
    }))

  it.effect("AC-26 [P-5] fragments '', '{\"city\"', ': \"Paris\"}' → three deltas with id+name; raw args kept", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "weather", arguments: "" } }] }),
            delta({ tool_calls: [{ index: 0, function: { arguments: "{\"city\"" } }] }),
            delta({ tool_calls: [{ index: 0, function: { arguments: ": \"Paris\"}" } }] }, "tool_calls")
          )
        )
      )
      expect(chunks).toEqual([
        StreamChunk.blockStart(0, "tool-call"),
        StreamChunk.toolCallDelta(0, "call_1", "", "weather"),
        StreamChunk.toolCallDelta(0, "call_1", "{\"city\"", "weather"),
        StreamChunk.toolCallDelta(0, "call_1", ": \"Paris\"}", "weather"),
        StreamChunk.blockEnd(0, ContentBlock.toolCall("call_1", "weather", "{\"city\": \"Paris\"}")),
        StreamChunk.finish({ kind: "tool-calls" })
      ])
    }))

  it.effect("AC-26 [P-5] two wire indexes → two blocks (keyed by index, not chunk id; index may start at 1); no id/name → id \"\", no name", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(
        yield* translate(
          sse(
            { id: "x", choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: "a", function: { name: "f", arguments: "{" } }] } }] },
            { id: "y", choices: [{ index: 0, delta: { tool_calls: [{ index: 2, id: "b", function: { name: "g", arguments: "[" } }] } }] },
            { id: "z", choices: [{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: "}" } }] } }] },
            delta({ tool_calls: [{ index: 3, function: { arguments: "1" } }] }, "tool_calls")
          )
        )
      )
      const assembled = yield* Stream.run(Stream.fromIterable(chunks), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([
        ContentBlock.toolCall("a", "f", "{}"),
        ContentBlock.toolCall("b", "g", "["),
        ContentBlock.toolCall("call-2", "", "1")
      ])
      expect(chunks).toContainEqual(StreamChunk.toolCallDelta(2, "", "1"))
      expect(chunks.find((c) => c.type === "tool-call-delta" && c.index === 2)).not.toHaveProperty("name")
    }))

  it.effect("AC-27 [P-6] usage only on a trailing choices: [] chunk → just before finish; two usages → last; none → no usage", () =>
    Effect.gen(function*() {
      const trailing = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ content: "x" }, "stop", { usage: null }),
            { id: "u", choices: [], usage: { prompt_tokens: 9, completion_tokens: 1 } }
          )
        )
      )
      expect(trailing.slice(-3)).toEqual([
        StreamChunk.blockEnd(0, ContentBlock.text("x")),
        StreamChunk.usage({ inputTokens: 9, outputTokens: 1 }),
        StreamChunk.finish({ kind: "stop" })
      ])
      const two = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ content: "x" }, "stop", { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
            { choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }
          )
        )
      )
      expect(two.filter((c) => c.type === "usage")).toEqual([StreamChunk.usage({ inputTokens: 3, outputTokens: 4 })])
      const none = Result.getOrThrow(yield* translate(sse(delta({ content: "x" }, "stop"))))
      expect(none.some((c) => c.type === "usage")).toBe(false)
    }))

  it.effect("AC-27 [P-6] {} then [DONE] → only finish stop; bad JSON → MALFORMED_RESPONSE", () =>
    Effect.gen(function*() {
      expect(Result.getOrThrow(yield* translate(sse({})))).toEqual([StreamChunk.finish({ kind: "stop" })])
      const bad = yield* translate(sse(delta({ content: "x" }), "{\"choices\": [", delta({ content: "y" })))
      expect(Result.isFailure(bad) && bad.failure.code).toBe("MALFORMED_RESPONSE")
    }))

  it.effect("AC-28 [P-7] length → max-tokens; content_filter → error CONTENT_FILTER; overflow reason → CONTEXT_WINDOW_EXCEEDED", () =>
    Effect.gen(function*() {
      expect(OpenAiCompatible.mapFinishReason("length")).toEqual({ kind: "max-tokens" })
      expect(OpenAiCompatible.mapFinishReason("stop")).toEqual({ kind: "stop" })
      expect(OpenAiCompatible.mapFinishReason("tool_calls")).toEqual({ kind: "tool-calls" })
      expect(OpenAiCompatible.mapFinishReason("content_filter")).toEqual({
        kind: "error",
        message: "model stopped: content_filter",
        code: "CONTENT_FILTER"
      })
      expect(OpenAiCompatible.mapFinishReason("context_length_exceeded")).toEqual({
        kind: "error",
        message: "model stopped: context_length_exceeded",
        code: "CONTEXT_WINDOW_EXCEEDED"
      })
      const chunks = Result.getOrThrow(yield* translate(sse(delta({ content: "x" }, "content_filter"))))
      expect(chunks.at(-1)).toEqual(
        StreamChunk.finish({ kind: "error", message: "model stopped: content_filter", code: "CONTENT_FILTER" })
      )
    }))

  it.effect("AC-28 [P-8] usage example, hit-tokens fallback, absent cache fields omitted", () =>
    Effect.gen(function*() {
      expect(OpenAiCompatible.mapUsage({
        prompt_tokens: 283,
        completion_tokens: 69,
        prompt_cache_hit_tokens: 256,
        completion_tokens_details: { reasoning_tokens: 24 }
      })).toEqual({ inputTokens: 27, outputTokens: 69, cacheReadTokens: 256, reasoningTokens: 24 })
      expect(OpenAiCompatible.mapUsage({
        prompt_tokens: 100,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 60 },
        prompt_cache_hit_tokens: 99
      })).toEqual({ inputTokens: 40, outputTokens: 1, cacheReadTokens: 60 })
      const plain = OpenAiCompatible.mapUsage({ prompt_tokens: 10, completion_tokens: 2 })
      expect(plain).toEqual({ inputTokens: 10, outputTokens: 2 })
      expect(plain).not.toHaveProperty("cacheReadTokens")
      expect(plain).not.toHaveProperty("cacheWriteTokens")
      expect(plain).not.toHaveProperty("reasoningTokens")
      expect(OpenAiCompatible.mapUsage({ total_tokens: 3 })).toBeUndefined()
    }))

  it.effect("[E-2] in-band errors after chunks end the stream with the canonical code, the raw code kept as providerCode; before any chunk they fail it", () =>
    Effect.gen(function*() {
      const openrouter = Result.getOrThrow(
        yield* translate(
          sse(
            delta({ reasoning: "hmm" }, "length"),
            { error: { code: 400, message: "Token limit reached" }, choices: [], usage: { prompt_tokens: 4, completion_tokens: 1 } },
            delta({ content: "never" })
          ),
          ["reasoning_content", "reasoning"]
        )
      )
      expect(openrouter).toEqual([
        StreamChunk.blockStart(0, "reasoning"),
        StreamChunk.reasoningDelta(0, "hmm"),
        StreamChunk.blockEnd(0, ContentBlock.reasoning("hmm")),
        StreamChunk.usage({ inputTokens: 4, outputTokens: 1 }),
        StreamChunk.finish({ kind: "error", message: "Token limit reached", code: "INVALID_REQUEST", providerCode: "400" })
      ])
      const groq = Result.getOrThrow(
        yield* translate(
          "data: " + JSON.stringify(delta({ content: "x" })) + "\n\nevent: error\ndata: " +
            JSON.stringify({ error: { message: "bad call", type: "invalid_request_error", code: "tool_use_failed" } }) +
            "\n\n"
        )
      )
      expect(groq.at(-1)).toEqual(
        StreamChunk.finish({ kind: "error", message: "bad call", code: "INVALID_REQUEST", providerCode: "tool_use_failed" })
      )
      const overflow = yield* translate(sse({ error: { message: "This model's maximum context length is 8192 tokens" } }))
      expect(Result.isFailure(overflow) && overflow.failure).toMatchObject({
        _tag: "ProviderError",
        message: "This model's maximum context length is 8192 tokens",
        code: "CONTEXT_WINDOW_EXCEEDED"
      })
    }))

  it.effect("unknown event types are skipped, never fatal; the deepseek profile ignores delta.reasoning", () =>
    Effect.gen(function*() {
      const chunks = Result.getOrThrow(
        yield* translate(
          "event: ping\ndata: not json at all\n\n" + sse(delta({ reasoning: "ignored", content: "x" }, "stop"))
        )
      )
      const assembled = yield* Stream.run(Stream.fromIterable(chunks), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([ContentBlock.text("x")])
    }))
})

describe("OpenAiCompatible over HTTP (P-1, P-9, C-6)", () => {
  const live = <A, E>(effect: Effect.Effect<A, E, import("effect/http/HttpClient").HttpClient | import("effect/Scope").Scope>) =>
    effect.pipe(Effect.provide(NodeHttpClient.layerUndici))

  const okBody = sse(delta({ content: "ok" }, "stop", { usage: { prompt_tokens: 1, completion_tokens: 1 } }))

  it.live("[P-1] POST <base>/chat/completions with bearer key, JSON, SSE accept, attribution and session header", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(okBody)] })
      const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: `${fake.url}/` })
      expect(adapter.providers).toEqual([{ id: "deepseek", name: "DeepSeek" }])
      expect(adapter.models.map((m) => m.id)).toEqual(["deepseek-v4-flash", "deepseek-v4-pro"])
      const assembled = yield* adapter.stream(request({ sessionId: Message.sessionId("s-1") })).pipe(
        Stream.run(BlockAssembler.sink)
      )
      expect(assembled.blocks).toEqual([ContentBlock.text("ok")])
      const [received] = yield* fake.requests
      expect(received?.method).toBe("POST")
      expect(received?.path).toBe("/chat/completions")
      expect(received?.headers["authorization"]).toBe(`Bearer ${Redacted.value(key)}`)
      expect(received?.headers["content-type"]).toBe("application/json")
      expect(received?.headers["accept"]).toBe("text/event-stream")
      expect(received?.headers["user-agent"]).toBe(HttpEdge.userAgent)
      expect(received?.headers["x-deepseek-harness-session-id"]).toBe("s-1")
      expect(received?.body).toEqual({
        model: "deepseek-v4-flash",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: true }
      })
    })))

  it.live("AC-5 [C-6] the attribution user-agent reaches the wire and wins over deployment headers; no provider attribution headers", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(okBody), FakeProvider.sse(okBody)] })
      const adapter = yield* OpenAiCompatible.make({
        profile: "generic",
        provider: "openrouter",
        baseUrl: `${fake.url}/api/v1`,
        headers: { "User-Agent": "curl/8", "X-Deployment": "d1" }
      })
      yield* adapter.stream(request({ provider: "openrouter" })).pipe(Stream.runDrain)
      const substitute = yield* OpenAiCompatible.make({
        profile: "generic",
        baseUrl: fake.url,
        userAgent: "acme-agent/2.0 (+https://acme.example)"
      })
      yield* substitute.stream(request()).pipe(Stream.runDrain)
      const [first, second] = yield* fake.requests
      expect(first?.path).toBe("/api/v1/chat/completions")
      expect(first?.headers["user-agent"]).toMatch(/^effect-harness\/\d+\.\d+\.\d+\S* \(\+https?:\/\/\S+\)$/)
      expect(first?.headers["user-agent"]).toBe(HttpEdge.userAgent)
      expect(first?.headers["x-deployment"]).toBe("d1")
      expect(first?.headers["authorization"]).toBeUndefined()
      for (const r of [first, second]) {
        const names = Object.keys(r?.headers ?? {})
        expect(names).not.toContain("http-referer")
        expect(names).not.toContain("x-title")
        expect(names.filter((n) => n.startsWith("x-openrouter-"))).toEqual([])
      }
      expect(second?.headers["user-agent"]).toBe("acme-agent/2.0 (+https://acme.example)")
    })))

  it.live("[P-9, DEC-3] 429 with Retry-After → RATE_LIMIT with retryAfterMillis; one attempt only", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({
        replies: [
          FakeProvider.status(429, { retryAfter: "3" }),
          FakeProvider.status(500, { headers: { "retry-after-ms": "250", "retry-after": "9" } }),
          FakeProvider.status(529, { retryAfter: new Date(Date.now() + 60_000).toUTCString(), body: "overloaded" })
        ]
      })
      const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url })
      const first = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
      expect(first).toMatchObject({ code: "RATE_LIMIT", status: 429, retryAfterMillis: 3000, provider: "deepseek" })
      const second = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
      expect(second).toMatchObject({ code: "SERVER", status: 500, retryAfterMillis: 250 })
      const third = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
      expect(third).toMatchObject({ code: "SERVER", status: 529, message: "API error (HTTP 529)" })
      expect(third._tag === "ProviderError" && third.retryAfterMillis).toBeGreaterThan(50_000)
      expect((yield* fake.requests).length).toBe(3)
    })))

  it.live("AC-19/AC-20 [E-2,E-3] status mapping over the wire; 2xx without body → EMPTY_RESPONSE", () =>
    live(Effect.gen(function*() {
      const cases: Array<[FakeProvider.Reply, string, string]> = [
        [FakeProvider.status(401, { body: "{\"error\":{\"message\":\"bad key\"}}" }), "AUTH", "bad key"],
        [FakeProvider.status(403), "AUTH", "fake error 403"],
        [FakeProvider.status(400, { body: "{\"error\":{\"message\":\"nope\"}}" }), "INVALID_REQUEST", "nope"],
        [
          FakeProvider.status(400, { body: "{\"error\":{\"message\":\"x\",\"code\":\"context_length_exceeded\"}}" }),
          "CONTEXT_WINDOW_EXCEEDED",
          "x"
        ],
        [FakeProvider.status(413, { body: "{\"error\":{\"code\":\"context_length_exceeded\"}}" }), "HTTP_413", "API error (HTTP 413)"],
        [FakeProvider.status(418, { body: "teapot" }), "HTTP_418", "API error (HTTP 418)"],
        [FakeProvider.status(502, { body: "<html>bad gateway</html>" }), "SERVER", "API error (HTTP 502)"],
        [FakeProvider.status(500, { body: "{\"error\":{\"type\":\"x\"}}" }), "SERVER", "API error (HTTP 500)"],
        [FakeProvider.http("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"), "EMPTY_RESPONSE", "empty response body (HTTP 200)"]
      ]
      const fake = yield* FakeProvider.make({ replies: cases.map(([reply]) => reply) })
      const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url })
      for (const [, code, message] of cases) {
        const error = yield* Effect.flip(Stream.runDrain(adapter.stream(request())))
        expect({ code: error.code, message: error.message }).toEqual({ code, message })
      }
    })))

  it.live("[DEC-3] transport failures: refused connection and a drop mid-stream → TRANSPORT", () =>
    live(Effect.gen(function*() {
      const closed = yield* Effect.scoped(Effect.map(FakeProvider.make(), (fake) => fake.url))
      const refused = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: closed })
      const error = yield* Effect.flip(Stream.runDrain(refused.stream(request())))
      expect(error.code).toBe("TRANSPORT")
      const body = sse(delta({ content: "partial" }), delta({ content: " more" }, "stop"))
      const fake = yield* FakeProvider.make({ replies: [FakeProvider.drop(body, body.indexOf("\n\n") + 2)] })
      const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url })
      const seen: Array<StreamChunk.StreamChunk> = []
      const dropped = yield* adapter.stream(request()).pipe(
        Stream.tap((c) => Effect.sync(() => seen.push(c))),
        Stream.runDrain,
        Effect.flip
      )
      expect(["TRANSPORT", "STREAM_CLOSED"]).toContain(dropped.code)
      expect(seen.slice(0, 2)).toEqual([StreamChunk.blockStart(0, "text"), StreamChunk.textDelta(0, "partial")])
    })))

  it.live("[DEC-1, C-8] interrupting the consumer aborts the request and closes the connection", () =>
    live(Effect.gen(function*() {
      const body = sse(delta({ content: "first" }), delta({ content: "never" }, "stop"))
      const fake = yield* FakeProvider.make({
        replies: [FakeProvider.stallMidBody(body, body.indexOf("\n\n") + 2), FakeProvider.stall()]
      })
      const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url })
      // mid-body: take the first chunks, then stop consuming
      const taken = yield* adapter.stream(request()).pipe(Stream.take(2), Stream.runCollect)
      expect(taken).toEqual([StreamChunk.blockStart(0, "text"), StreamChunk.textDelta(0, "first")])
      expect(yield* fake.awaitClose(0)).toEqual({ early: true })
      // before headers: interrupt the fiber
      const fiber = yield* Effect.forkChild(Stream.runDrain(adapter.stream(request())))
      yield* fake.awaitRequests(2)
      yield* Fiber.interrupt(fiber)
      expect(Exit.hasInterrupts(yield* Fiber.await(fiber))).toBe(true)
      expect(yield* fake.awaitClose(1)).toEqual({ early: true })
    })))

  it.live("an API key never appears in an error message, even when the provider echoes it", () =>
    live(Effect.gen(function*() {
      const secret = Redacted.value(key)
      const fake = yield* FakeProvider.make({
        replies: [
          FakeProvider.status(401, { body: JSON.stringify({ error: { message: `Incorrect API key provided: ${secret}` } }) }),
          FakeProvider.status(400, { body: JSON.stringify({ error: { message: `bad header Bearer ${secret}` } }) })
        ]
      })
      const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url })
      const errors: Array<LlmError.LlmError> = []
      errors.push(yield* Effect.flip(Stream.runDrain(adapter.stream(request()))))
      errors.push(yield* Effect.flip(Stream.runDrain(adapter.stream(request()))))
      const refused = yield* OpenAiCompatible.make({
        profile: "deepseek",
        apiKey: key,
        baseUrl: "http://127.0.0.1:1"
      })
      errors.push(yield* Effect.flip(Stream.runDrain(refused.stream(request()))))
      const badBody = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url })
      errors.push(
        yield* Effect.flip(
          Stream.runDrain(badBody.stream(request({ temperature: 1n as unknown as number })))
        )
      )
      expect(errors.map((e) => e.code)).toEqual(["AUTH", "INVALID_REQUEST", "TRANSPORT", "INVALID_REQUEST"])
      expect(errors[0]?.message).toBe("Incorrect API key provided: <redacted>")
      for (const error of errors) {
        expect(error.message).not.toContain(secret)
        expect(String(error)).not.toContain(secret)
        expect(JSON.stringify(error)).not.toContain(secret)
      }
      expect(String(key)).not.toContain(secret)
    })))
})

describe("OpenAiCompatible configuration (P-1, C-9)", () => {
  const withEnv = (env: Record<string, string>) =>
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))

  it.effect("[P-1] layerConfig: key from DEEPSEEK_API_KEY (missing → startup failure); base URL explicit > env > default", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.exit(
        Layer.build(OpenAiCompatible.layerConfig("deepseek")).pipe(
          Effect.scoped,
          Effect.provide(NodeHttpClient.layerUndici),
          withEnv({})
        )
      )
      expect(Exit.isFailure(missing)).toBe(true)
      expect(String(Exit.isFailure(missing) ? missing.cause : "")).toContain("DEEPSEEK_API_KEY")

      const fromEnv = yield* OpenAiCompatible.config("deepseek").pipe(
        withEnv({ DEEPSEEK_API_KEY: "k1", DEEPSEEK_BASE_URL: "http://env.example" })
      )
      expect(fromEnv.baseUrl).toBe("http://env.example")
      expect(fromEnv.apiKey === undefined ? undefined : Redacted.value(fromEnv.apiKey)).toBe("k1")
      const explicit = yield* OpenAiCompatible.config("deepseek", { baseUrl: "http://explicit.example" }).pipe(
        withEnv({ DEEPSEEK_API_KEY: "k1", DEEPSEEK_BASE_URL: "http://env.example" })
      )
      expect(explicit.baseUrl).toBe("http://explicit.example")
      const defaults = yield* OpenAiCompatible.resolve(
        yield* OpenAiCompatible.config("deepseek").pipe(withEnv({ DEEPSEEK_API_KEY: "k1" }))
      )
      expect(defaults.baseUrl).toBe("https://api.deepseek.com")

      const adapter = yield* Effect.provide(
        LlmAdapter.Adapter,
        OpenAiCompatible.layerConfig("deepseek", { thinking: "enabled" }).pipe(Layer.provide(NodeHttpClient.layerUndici))
      ).pipe(withEnv({ DEEPSEEK_API_KEY: "k1" }))
      expect(adapter.providers).toEqual([{ id: "deepseek", name: "DeepSeek" }])
    }))

  it.effect("[P-1, C-9, C-8, C-6] validation: empty key, bad URL, bad knobs, catalog ids, suppressed identity fail at startup", () =>
    Effect.gen(function*() {
      const fails = (options: OpenAiCompatible.Options) => Effect.map(Effect.exit(OpenAiCompatible.resolve(options)), Exit.isFailure)
      expect(yield* fails({ profile: "deepseek" })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: Redacted.make("") })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: key, baseUrl: "ftp://x" })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: key, reasoningEffort: "low" })).toBe(true)
      expect(yield* fails({ profile: "openai", apiKey: key, thinking: "enabled" })).toBe(true)
      expect(yield* fails({ profile: "generic" })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: key, models: [{ id: "a" }, { id: "a" }] })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: key, models: [{ id: "" }] })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: key, provider: "" })).toBe(true)
      expect(yield* fails({ profile: "deepseek", apiKey: key, userAgent: " " })).toBe(true)
      const ok = yield* OpenAiCompatible.resolve({ profile: "deepseek", apiKey: key, models: [] })
      expect(ok.models).toEqual([])
      const generic = yield* OpenAiCompatible.resolve({ profile: "generic", baseUrl: "http://localhost:8000/v1", provider: "vllm" })
      expect([generic.provider, generic.displayName, generic.apiKey]).toEqual(["vllm", "vllm", undefined])
    }))
})
