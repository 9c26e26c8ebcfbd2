// vitest project: integration
/**
 * Runs the shared adapter contract (`test/support/AdapterContract.ts`) against every adapter:
 * the DeepSeek, OpenAI and generic OpenAI-compatible profiles, Anthropic (each over real HTTP +
 * SSE against the fake provider) and the scripted adapter. Each harness renders the contract's
 * scenarios in its provider's own wire format, with that provider's quirks (DeepSeek: usage on the
 * finish chunk with cache-hit fields, an unknown finish reason; OpenAI: a trailing `choices: []`
 * usage chunk, `content_filter`; generic: `delta.reasoning`, tool indexes starting at 1, an SSE
 * `event: error`; Anthropic: thinking, `input_json_delta`, `ping`, a mid-stream `error` event).
 *
 * The last block proves that every check of the contract can fail: each is fed the output of a
 * deliberately broken adapter (a real adapter with one fault injected) and must reject it.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as LlmAdapter from "../../src/Llm/LlmAdapter.js"
import * as LlmError from "../../src/Llm/LlmError.js"
import type * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Contract from "../support/AdapterContract.js"
import * as FakeProvider from "../support/FakeProvider.js"

const key = Redacted.make("sk-contract-secret-0123456789")

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible wire (chat completions)

interface OpenAiStyle {
  readonly model: string
  /** delta field carrying reasoning */
  readonly reasoningField: "reasoning_content" | "reasoning"
  /** usage on the finish chunk (DeepSeek) or on a trailing `choices: []` chunk (OpenAI) */
  readonly usageOn: "finish" | "trailing"
  /** how cache hits are reported */
  readonly cache: "deepseek" | "openai"
  /** first wire tool index (some gateways start at 1) */
  readonly toolIndexBase: number
  /** parallel tool calls whose fragments alternate */
  readonly interleaveTools: boolean
  /** the finish reason of the in-band error scenario */
  readonly inBandReason: string
  /** how the in-band overflow arrives: a top-level `error` payload or an SSE `event: error` */
  readonly overflowVia: "error-payload" | "error-event"
  readonly overflowMessage: string
}

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`

const usage: Message.TokenUsage = { inputTokens: 3, outputTokens: 1 }

const openAiUsage = (style: OpenAiStyle, u: Message.TokenUsage) => {
  const cache = u.cacheReadTokens ?? 0
  const base = {
    prompt_tokens: u.inputTokens + cache,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + cache + u.outputTokens
  }
  return style.cache === "deepseek"
    ? { ...base, prompt_cache_hit_tokens: cache, prompt_cache_miss_tokens: u.inputTokens }
    : { ...base, prompt_tokens_details: { cached_tokens: cache } }
}

const openAiStream = (
  style: OpenAiStyle,
  deltas: ReadonlyArray<Record<string, unknown>>,
  finish: string | undefined,
  u: Message.TokenUsage | undefined
): Array<string> => {
  const chunk = (delta: Record<string, unknown>, reason: string | null, extra: Record<string, unknown> = {}) =>
    data({
      id: "chatcmpl-contract",
      object: "chat.completion.chunk",
      created: 1764661832,
      model: style.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: reason }],
      ...extra
    })
  const out = [chunk({ role: "assistant", content: "", [style.reasoningField]: "" }, null), ...deltas.map((d) => chunk(d, null))]
  if (finish !== undefined) {
    const onFinish = style.usageOn === "finish" && u !== undefined ? { usage: openAiUsage(style, u) } : { usage: null }
    out.push(chunk({ content: "" }, finish, onFinish))
    if (style.usageOn === "trailing" && u !== undefined) {
      out.push(data({ id: "chatcmpl-contract", object: "chat.completion.chunk", model: style.model, choices: [], usage: openAiUsage(style, u) }))
    }
  }
  return out
}

/** `[DONE]`, then bytes a translator must never read (nothing follows finish, P-4) */
const done = "data: [DONE]\n\n" + data({ choices: [{ index: 0, delta: { content: "after done" }, finish_reason: "length" }] })

const renderOpenAi = (style: OpenAiStyle) => (scenario: Contract.Scenario): FakeProvider.Reply => {
  const content = (pieces: ReadonlyArray<string>) => pieces.map((p) => ({ content: p }))
  switch (scenario._tag) {
    case "Text":
      return FakeProvider.sse([...openAiStream(style, content(scenario.pieces), "stop", scenario.usage), done].join(""))
    case "ToolCalls": {
      const deltas: Array<Record<string, unknown>> = [
        ...scenario.reasoning.map((r) => ({ content: null, [style.reasoningField]: r })),
        ...content(scenario.text)
      ]
      const starts = scenario.calls.map((call, k) => ({
        tool_calls: [{ index: style.toolIndexBase + k, id: call.id, type: "function", function: { name: call.name, arguments: "" } }]
      }))
      const fragments = scenario.calls.map((call, k) =>
        call.fragments.map((fragment) => ({ tool_calls: [{ index: style.toolIndexBase + k, function: { arguments: fragment } }] }))
      )
      if (style.interleaveTools) {
        // both calls open, then their fragments alternate (C-1: blocks may interleave)
        deltas.push(...starts)
        const longest = Math.max(...fragments.map((f) => f.length))
        for (let i = 0; i < longest; i++) for (const f of fragments) if (f[i] !== undefined) deltas.push(f[i] as Record<string, unknown>)
      } else {
        starts.forEach((start, k) => deltas.push(start, ...(fragments[k] ?? [])))
      }
      return FakeProvider.sse([...openAiStream(style, deltas, "tool_calls", scenario.usage), done].join(""), { maxPiece: 17 })
    }
    case "InBandError":
      return FakeProvider.sse(
        [...openAiStream(style, content(scenario.partial), style.inBandReason, scenario.usage), done].join("")
      )
    case "InBandOverflow": {
      const error = { error: { message: style.overflowMessage, type: "invalid_request_error" } }
      const tail = style.overflowVia === "error-payload" ? data(error) : `event: error\n${data(error)}`
      // the in-band error ends the answer: what follows it is never translated
      const after = openAiStream(style, content(["never"]), "stop", scenario.usage).slice(1)
      return FakeProvider.sse([...openAiStream(style, content(scenario.partial), undefined, undefined), tail, ...after, done].join(""))
    }
    case "HttpError":
      return FakeProvider.status(scenario.status, {
        body: JSON.stringify({
          error: {
            message: scenario.message,
            type: scenario.status === 401 ? "authentication_error" : "invalid_request_error",
            param: null,
            code: scenario.status === 401 ? "invalid_api_key" : "invalid_request_error"
          }
        })
      })
    case "UnknownEvents": {
      const [head, ...rest] = openAiStream(style, content(scenario.pieces), "stop", scenario.usage)
      const noise = [
        ": keep-alive\n\n",
        "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        "event: response.heartbeat\ndata: not json at all\n\n",
        data({ object: "chat.completion.keepalive", id: "k1" }),
        data({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { audio: { id: "a" }, refusal: null } }] }),
        "id: 7\nretry: 1000\n\n"
      ]
      const body = [head, ...noise.slice(0, 3), ...rest.slice(0, 2), ...noise.slice(3), ...rest.slice(2), done]
      return FakeProvider.sse(body.join(""))
    }
    case "StallMidStream": {
      const head = openAiStream(style, [{ content: scenario.first }], undefined, undefined).join("")
      return FakeProvider.stallMidBody(head, Buffer.byteLength(head))
    }
    case "StallBeforeHeaders":
      return FakeProvider.stall()
    case "ProviderErrorEvent": {
      const error = openAiErrorPayload(style, scenario.kind)
      const tail = style.overflowVia === "error-payload" ? data(error) : `event: error\n${data(error)}`
      const head = openAiStream(style, scenario.position === "first" ? [] : content(scenario.partial), undefined, undefined)
      const after = openAiStream(style, content(["never"]), "stop", usage).slice(1)
      return FakeProvider.sse([...head, tail, ...after, done].join(""))
    }
  }
}

/**
 * In-band error payloads as each flavour sends them: OpenAI-style string codes and types
 * (DeepSeek, OpenAI), or numeric status codes (OpenRouter) and Groq's `tool_use_failed`.
 */
const openAiErrorPayload = (style: OpenAiStyle, kind: Contract.InBandKind) => {
  const numeric = style.overflowVia === "error-event"
  switch (kind) {
    case "rate-limit":
      return numeric
        ? { error: { code: 429, message: "Rate limit exceeded: free-models-per-min" } }
        : { error: { message: "Rate limit reached for requests", type: "requests", param: null, code: "rate_limit_exceeded" } }
    case "server":
      return numeric
        ? { error: { code: 502, message: "Provider returned error" } }
        : { error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null } }
    case "overloaded":
      return numeric
        ? { error: { code: 529, message: "Provider overloaded" } }
        : { error: { message: "The engine is currently overloaded, please try again later", type: "server_error", code: "overloaded" } }
    case "invalid-request":
      return numeric
        ? { error: { message: "Tool call validation failed", type: "invalid_request_error", code: "tool_use_failed" } }
        : { error: { message: "Invalid schema for function 'lookup'", type: "invalid_request_error", param: "tools", code: "invalid_function_parameters" } }
    case "unknown":
      return { error: { message: "something unexpected happened", code: "mystery_error" } }
  }
}

const openAiHarness = (
  profile: OpenAiCompatible.ProfileName,
  style: OpenAiStyle,
  inBandError: Contract.Harness["inBandError"],
  extra: Partial<OpenAiCompatible.Options> = {}
): Contract.Harness => ({
  provider: extra.provider ?? OpenAiCompatible.profiles[profile].route,
  model: style.model,
  inBandError,
  overflowMessage: style.overflowMessage,
  backend: {
    _tag: "Wire",
    make: (baseUrl, headers) => OpenAiCompatible.make({ profile, apiKey: key, baseUrl, headers, ...extra }),
    render: renderOpenAi(style)
  }
})

const deepseekStyle: OpenAiStyle = {
  model: "deepseek-v4-flash",
  reasoningField: "reasoning_content",
  usageOn: "finish",
  cache: "deepseek",
  toolIndexBase: 0,
  interleaveTools: false,
  inBandReason: "insufficient_system_resource",
  overflowVia: "error-payload",
  overflowMessage:
    "This model's maximum context length is 131072 tokens. However, you requested 141980 tokens (133980 in the messages, 8000 in the completion). Please reduce the length of the messages or completion."
}

const deepseek = openAiHarness(
  "deepseek",
  deepseekStyle,
  { code: "INSUFFICIENT_SYSTEM_RESOURCE", message: "model stopped: insufficient_system_resource" }
)

const openaiStyle: OpenAiStyle = {
  model: "gpt-4.1-mini",
  reasoningField: "reasoning_content",
  usageOn: "trailing",
  cache: "openai",
  toolIndexBase: 0,
  interleaveTools: false,
  inBandReason: "content_filter",
  overflowVia: "error-payload",
  overflowMessage:
    "This model's maximum context length is 16385 tokens. However, you requested 18242 tokens (16242 in the messages, 2000 in the completion). Please reduce the length of the messages or completion."
}

const openai = openAiHarness("openai", openaiStyle, { code: "CONTENT_FILTER", message: "model stopped: content_filter" })

const genericStyle: OpenAiStyle = {
  model: "qwen3-coder",
  reasoningField: "reasoning",
  usageOn: "trailing",
  cache: "openai",
  toolIndexBase: 1,
  interleaveTools: true,
  inBandReason: "content_filter",
  overflowVia: "error-event",
  overflowMessage: "the request exceeds the available context size, try increasing it"
}

const generic = openAiHarness(
  "generic",
  genericStyle,
  { code: "CONTENT_FILTER", message: "model stopped: content_filter" },
  { provider: "local-vllm" }
)

// ---------------------------------------------------------------------------------------------
// Anthropic wire (Messages)

const anthropicModel = "claude-sonnet-4-5"
const anthropicOverflow = "prompt is too long: 208310 tokens > 200000 maximum"

const event = (type: string, payload: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`

const messageStart = (u: Message.TokenUsage) =>
  event("message_start", {
    message: {
      id: "msg_contract",
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-sonnet-4-5-20250929",
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: u.inputTokens,
        ...(u.cacheReadTokens === undefined ? {} : { cache_read_input_tokens: u.cacheReadTokens }),
        output_tokens: 1
      }
    }
  })

const textBlock = (index: number, pieces: ReadonlyArray<string>) => [
  event("content_block_start", { index, content_block: { type: "text", text: "" } }),
  ...pieces.map((text) => event("content_block_delta", { index, delta: { type: "text_delta", text } })),
  event("content_block_stop", { index })
]

/** `message_stop`, then an event a translator must never read (nothing follows finish) */
const messageEnd = (stop: string, u: Message.TokenUsage) => [
  event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: u.outputTokens } }),
  event("message_stop"),
  event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "after stop" } })
]

const renderAnthropic = (scenario: Contract.Scenario): FakeProvider.Reply => {
  switch (scenario._tag) {
    case "Text":
      return FakeProvider.sse(
        [messageStart(scenario.usage), event("ping"), ...textBlock(0, scenario.pieces), ...messageEnd("end_turn", scenario.usage)].join("")
      )
    case "ToolCalls": {
      const body = [
        messageStart(scenario.usage),
        event("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
        ...scenario.reasoning.map((thinking) => event("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking } })),
        event("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "EqQBCgIYAhIMsig==" } }),
        event("content_block_stop", { index: 0 }),
        ...textBlock(1, scenario.text)
      ]
      scenario.calls.forEach((call, k) => {
        const index = 2 + k
        body.push(
          event("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }),
          event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }),
          ...call.fragments.map((partial_json) => event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })),
          event("content_block_stop", { index })
        )
      })
      return FakeProvider.sse([...body, ...messageEnd("tool_use", scenario.usage)].join(""), { maxPiece: 17 })
    }
    case "InBandError": {
      const partial = textBlock(0, scenario.partial).slice(0, -1) // cut before content_block_stop
      return FakeProvider.sse(
        [
          messageStart(scenario.usage),
          ...partial,
          event("error", { error: { type: "overloaded_error", message: "Overloaded" } }),
          // the error ends the answer: what follows it is never translated
          event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "never" } }),
          ...messageEnd("end_turn", scenario.usage)
        ].join("")
      )
    }
    case "InBandOverflow":
      return FakeProvider.sse(
        [messageStart(scenario.usage), ...textBlock(0, scenario.partial), ...messageEnd("model_context_window_exceeded", scenario.usage)].join("")
      )
    case "HttpError":
      return FakeProvider.status(scenario.status, {
        body: JSON.stringify({
          type: "error",
          error: { type: scenario.status === 401 ? "authentication_error" : "invalid_request_error", message: scenario.message },
          request_id: "req_contract"
        })
      })
    case "UnknownEvents": {
      const [start, delta1, ...rest] = textBlock(0, scenario.pieces)
      return FakeProvider.sse(
        [
          messageStart(scenario.usage),
          ": comment\n\n",
          start,
          event("ping"),
          delta1,
          event("brand_new_event", { anything: [1, 2] }),
          "event: future_event\ndata: not json at all\n\n",
          event("content_block_delta", { index: 0, delta: { type: "citations_delta", citation: { cited_text: "x" } } }),
          "event: ping\ndata: {\"type\": \"ping\"}\n\n",
          ...rest,
          event("content_block_delta", { index: 9, delta: { type: "text_delta", text: "orphan" } }),
          ...messageEnd("end_turn", scenario.usage)
        ].join("")
      )
    }
    case "StallMidStream": {
      const head = [messageStart({ inputTokens: 1, outputTokens: 1 }), ...textBlock(0, [scenario.first]).slice(0, 2)].join("")
      return FakeProvider.stallMidBody(head, Buffer.byteLength(head))
    }
    case "StallBeforeHeaders":
      return FakeProvider.stall()
    case "ProviderErrorEvent": {
      const type = anthropicErrorTypes[scenario.kind]
      const head = scenario.position === "first" ? [] : textBlock(0, scenario.partial).slice(0, -1)
      return FakeProvider.sse(
        [
          messageStart(usage),
          ...head,
          event("error", { error: { type, message: `${type} happened` } }),
          event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "never" } }),
          ...messageEnd("end_turn", usage)
        ].join("")
      )
    }
  }
}

const anthropicErrorTypes: { readonly [K in Contract.InBandKind]: string } = {
  "rate-limit": "rate_limit_error",
  server: "api_error",
  overloaded: "overloaded_error",
  "invalid-request": "invalid_request_error",
  unknown: "mystery_error"
}

const anthropic: Contract.Harness = {
  provider: "anthropic",
  model: anthropicModel,
  inBandError: { code: "SERVER", message: "Overloaded", providerCode: "overloaded_error" },
  overflowMessage: anthropicOverflow,
  backend: {
    _tag: "Wire",
    make: (baseUrl, headers) => Anthropic.make({ apiKey: key, baseUrl, headers }),
    render: renderAnthropic
  }
}

// ---------------------------------------------------------------------------------------------
// Scripted

const scriptedOverflow = "This model's maximum context length is 8192 tokens"

const scriptedUsage = (u: Message.TokenUsage) =>
  Scripted.usage(u.inputTokens, u.outputTokens, u.cacheReadTokens === undefined ? {} : { cacheReadTokens: u.cacheReadTokens })

const renderScripted = (scenario: Contract.Scenario): Scripted.Reply => {
  switch (scenario._tag) {
    case "Text":
    case "UnknownEvents":
      return [Scripted.say(scenario.pieces.join("")), scriptedUsage(scenario.usage), Scripted.finish("stop")]
    case "ToolCalls":
      return [
        Scripted.think(scenario.reasoning.join("")),
        Scripted.say(scenario.text.join("")),
        ...scenario.calls.map((c) => Scripted.toolCall(c.id, c.name, Contract.rawArguments(c))),
        scriptedUsage(scenario.usage),
        Scripted.finish("tool-calls")
      ]
    case "InBandError":
      return [
        Scripted.say(scenario.partial.join("")),
        scriptedUsage(scenario.usage),
        Scripted.finish({ kind: "error", message: "model stopped: content_filter", code: "CONTENT_FILTER" })
      ]
    case "InBandOverflow":
      return [
        Scripted.say(scenario.partial.join("")),
        Scripted.finish({ kind: "error", message: scriptedOverflow, code: "CONTEXT_WINDOW_EXCEEDED" })
      ]
    case "HttpError":
      // the scripted adapter plays the failure an HTTP adapter produces (the shared E-2/E-3 mapping)
      return [
        Scripted.failWith(
          LlmError.fromHttpResponse({ status: scenario.status, body: JSON.stringify({ error: { message: scenario.message } }), provider: "scripted" })
        )
      ]
    case "StallMidStream":
      return [Scripted.chunk(StreamChunk.blockStart(0, "text"), StreamChunk.textDelta(0, scenario.first)), Scripted.forever]
    case "StallBeforeHeaders":
      return [Scripted.forever]
    case "ProviderErrorEvent": {
      const code = LlmError.toCode(Contract.inBandCanonical[scenario.kind])
      const message = `${scenario.kind} happened`
      const providerCode = scenario.kind.replace("-", "_")
      return scenario.position === "first"
        ? [Scripted.failWith(LlmError.providerError(code, message, { provider: "scripted", providerCode }))]
        : [Scripted.say(scenario.partial.join("")), Scripted.finish({ kind: "error", message, code, providerCode })]
    }
  }
}

const scripted: Contract.Harness = {
  provider: "scripted",
  model: "demo",
  inBandError: { code: "CONTENT_FILTER", message: "model stopped: content_filter" },
  overflowMessage: scriptedOverflow,
  backend: {
    _tag: "Script",
    make: (script) => Effect.map(Scripted.make(script), (handle) => handle.adapter),
    render: renderScripted
  },
  notApplicable: {
    attribution: "sends no HTTP request",
    "connection-close": "opens no connection; interruption is checked at chunk level",
    "unknown-events": "replies are chunk-protocol items, no provider event layer"
  }
}

// ---------------------------------------------------------------------------------------------
// The runs

Contract.adapterContract("DeepSeek profile", deepseek)
Contract.adapterContract("OpenAI profile", openai)
Contract.adapterContract("generic OpenAI-compatible profile", generic)
Contract.adapterContract("Anthropic", anthropic)
Contract.adapterContract("Scripted", scripted)

// ---------------------------------------------------------------------------------------------
// Every check can fail: each is fed the output of a deliberately broken adapter

type Chunks = ReadonlyArray<StreamChunk.StreamChunk>

/** The scripted adapter with its output rewritten by `fault` (a broken adapter). */
const brokenScripted = (scenario: Contract.Scenario, fault: (chunks: Chunks) => Chunks) =>
  Effect.gen(function*() {
    const { adapter } = yield* Contract.rig(scripted, [scenario])
    return yield* Contract.collect(
      Stream.unwrap(Effect.map(Stream.runCollect(adapter.stream(Contract.request(scripted))), (c) => Stream.fromIterable(fault(c))))
    )
  })

const scriptedRun = (scenario: Contract.Scenario) => brokenScripted(scenario, (c) => c)

const move = (chunks: Chunks, from: (c: StreamChunk.StreamChunk) => boolean, to: "first" | "last"): Chunks => {
  const picked = chunks.filter(from)
  const rest = chunks.filter((c) => !from(c))
  return to === "first" ? [...picked, ...rest] : [...rest, ...picked]
}

const live = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient | Scope.Scope>) =>
  effect.pipe(Effect.provide(NodeHttpClient.layerUndici))

describe("the contract's checks fail on broken adapters", () => {
  it.live("[C-2] usage after finish, a chunk after finish, a failure after finish, two finishes, usage before the blocks", () =>
    live(Effect.gen(function*() {
      const text = Contract.scenarios.text
      Contract.checkTerminal(yield* scriptedRun(text)) // the unbroken adapter passes
      const usageLast = yield* brokenScripted(text, (c) => move(c, (x) => x.type === "usage", "last"))
      expect(() => Contract.checkTerminal(usageLast)).toThrow(/\[C-2\] finish is the last chunk/)
      const late = yield* brokenScripted(text, (c) => [...c, StreamChunk.textDelta(0, "late")])
      expect(() => Contract.checkTerminal(late)).toThrow(/\[C-2\] finish is the last chunk/)
      const twice = yield* brokenScripted(text, (c) => [...c, StreamChunk.finish({ kind: "stop" })])
      expect(() => Contract.checkTerminal(twice)).toThrow(/\[C-2\] exactly one finish/)
      const usageFirst = yield* brokenScripted(text, (c) => move(c, (x) => x.type === "usage", "first"))
      expect(() => Contract.checkTerminal(usageFirst)).toThrow(/\[C-2\] usage at 0 must follow every block chunk/)
      const { adapter } = yield* Contract.rig(scripted, [text])
      const failAfter = yield* Contract.collect(
        adapter.stream(Contract.request(scripted)).pipe(Stream.concat(Stream.fail(LlmError.providerError("STREAM_CLOSED", "cut"))))
      )
      expect(() => Contract.checkTerminal(failAfter)).toThrow(/\[C-2\] the stream must complete after finish/)
    })))

  it.live("[C-1] indexes not in first-seen order, a missing block-end, a delta after block-end, deltas disagreeing with block-end", () =>
    live(Effect.gen(function*() {
      const tools = Contract.scenarios.toolCalls
      Contract.checkBlocks((yield* scriptedRun(tools)).chunks)
      const swap = (i: number) => (i === 0 ? 1 : i === 1 ? 0 : i)
      const swapped = yield* brokenScripted(tools, (c) =>
        c.map((x) => (x.type === "usage" || x.type === "finish" ? x : { ...x, index: swap(x.index) })))
      expect(() => Contract.checkBlocks(swapped.chunks)).toThrow(/\[C-1\] indexes are allocated in first-seen order/)
      const noEnd = yield* brokenScripted(tools, (c) => c.filter((x) => !(x.type === "block-end" && x.index === 3)))
      expect(() => Contract.checkBlocks(noEnd.chunks)).toThrow(/\[C-1\] block 3 has a block-end/)
      const lateDelta = yield* brokenScripted(tools, (c) => {
        const end = c.findIndex((x) => x.type === "block-end" && x.index === 1)
        return [...c.slice(0, end + 1), StreamChunk.textDelta(1, "!"), ...c.slice(end + 1)]
      })
      expect(() => Contract.checkBlocks(lateDelta.chunks)).toThrow(/\[C-1\] chunk \d+ \(text-delta\) for index 1 follows/)
      const disagree = yield* brokenScripted(tools, (c) =>
        c.map((x) => (x.type === "block-end" && x.block.type === "text" ? StreamChunk.blockEnd(x.index, ContentBlock.text("other")) : x)))
      expect(() => Contract.checkBlocks(disagree.chunks)).toThrow(/\[C-1\] the deltas assemble to the authoritative block-end/)
    })))

  it.live("[C-3] arguments re-serialized (parse + stringify) in the block-end or in the deltas", () =>
    live(Effect.gen(function*() {
      const tools = Contract.scenarios.toolCalls
      Contract.checkRawArguments((yield* scriptedRun(tools)).chunks, tools.calls)
      const normalize = (s: string) => JSON.stringify(JSON.parse(s))
      const reEnd = yield* brokenScripted(tools, (c) =>
        c.map((x) =>
          x.type === "block-end" && x.block.type === "tool-call"
            ? StreamChunk.blockEnd(x.index, ContentBlock.toolCall(x.block.id, x.block.name, normalize(x.block.arguments)))
            : x
        ))
      expect(() => Contract.checkRawArguments(reEnd.chunks, tools.calls)).toThrow(/\[C-3\] block-end arguments of call_a1/)
      const reDeltas = yield* brokenScripted(tools, (c) => {
        // one delta per call carrying the normalized text
        const out: Array<StreamChunk.StreamChunk> = []
        for (const x of c) {
          if (x.type === "tool-call-delta") continue
          if (x.type === "block-end" && x.block.type === "tool-call") {
            out.push(StreamChunk.toolCallDelta(x.index, x.block.id, normalize(x.block.arguments), x.block.name))
          }
          out.push(x)
        }
        return out
      })
      expect(() => Contract.checkRawArguments(reDeltas.chunks, tools.calls)).toThrow(/\[C-3\] argument deltas of call_a1/)
      expect(() => Contract.checkRawArguments(reEnd.chunks, [...tools.calls].reverse())).toThrow(/\[C-3\] tool calls/)
    })))

  it.live("[C-4, C-5] a non-canonical in-band code, an in-band error turned into a failure, a defect, a wrong status code, chunks before an HTTP failure", () =>
    live(Effect.gen(function*() {
      const inBand = Contract.scenarios.inBandError
      Contract.checkInBand(yield* scriptedRun(inBand), "CONTENT_FILTER")
      const lower = yield* brokenScripted(inBand, (c) =>
        c.map((x) => (x.type === "finish" ? StreamChunk.finish({ kind: "error", message: "m", code: "content_filter" }) : x)))
      expect(() => Contract.checkInBand(lower, "content_filter")).toThrow(/\[C-4\] the code is canonical/)
      expect(() => Contract.checkInBand(lower, "CONTENT_FILTER")).toThrow(/\[C-4\] in-band error code/)
      const { adapter } = yield* Contract.rig(scripted, [inBand, Contract.scenarios.auth, Contract.scenarios.auth, Contract.overflowScenario("maximum context length is 10 tokens")])
      const req = Contract.request(scripted)
      const asFailure = yield* Contract.collect(
        adapter.stream(req).pipe(Stream.filter((x) => x.type !== "finish"), Stream.concat(Stream.fail(LlmError.providerError(LlmError.toCode("CONTENT_FILTER"), "m"))))
      )
      expect(() => Contract.checkInBand(asFailure, "CONTENT_FILTER")).toThrow(/\[C-4\] an in-band error completes the stream/)
      const defect = yield* Contract.collect(adapter.stream(req).pipe(Stream.catch((e) => Stream.die(e))))
      expect(Contract.failureCode(defect)).toBe("DEFECT")
      expect(() => Contract.checkStreamFailure(defect, "AUTH")).toThrow(/\[C-4\] the failure is a typed error/)
      const early = yield* Contract.collect(Stream.concat(Stream.make(StreamChunk.blockStart(0, "text")), adapter.stream(req)))
      expect(() => Contract.checkStreamFailure(early, "AUTH")).toThrow(/\[C-4\] no chunk before an HTTP failure/)
      const overflow = yield* Contract.collect(
        adapter.stream(req).pipe(Stream.mapError((e) => LlmError.providerError("INVALID_REQUEST", e.message)))
      )
      expect(() => Contract.checkStreamFailure(overflow, "CONTEXT_WINDOW_EXCEEDED")).toThrow(/\[C-4\] canonical code/)
    })))

  it.live("[A-9] an assembled result with a wrong usage mapping (cache hits counted as input) or a wrong finish", () =>
    live(Effect.gen(function*() {
      const text = Contract.scenarios.text
      const want = Contract.expected(text, scripted)
      expect(want).toBeDefined()
      Contract.checkAssembled(yield* Contract.assemble(yield* scriptedRun(text)), want as Contract.Expected)
      const cacheAsInput = yield* brokenScripted(text, (c) =>
        c.map((x) => (x.type === "usage" ? StreamChunk.usage({ inputTokens: x.usage.inputTokens + (x.usage.cacheReadTokens ?? 0), outputTokens: x.usage.outputTokens }) : x)))
      const wrongUsage = yield* Contract.assemble(cacheAsInput)
      expect(() => Contract.checkAssembled(wrongUsage, want as Contract.Expected)).toThrow(/assembled usage/)
      const lengthAsStop = yield* brokenScripted(text, (c) => c.map((x) => (x.type === "finish" ? StreamChunk.finish({ kind: "max-tokens" }) : x)))
      const wrongFinish = yield* Contract.assemble(lengthAsStop)
      expect(() => Contract.checkAssembled(wrongFinish, want as Contract.Expected)).toThrow(/assembled finish/)
    })))

  it.live("AC-5 [C-6] a client that drops the user-agent, and a deployment that adds provider attribution headers", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ replies: [renderOpenAi(deepseekStyle)(Contract.scenarios.text)] })
      const stripping = yield* HttpClient.HttpClient.pipe(
        Effect.map(HttpClient.mapRequest(HttpClientRequest.setHeader("user-agent", "undici"))),
        Effect.flatMap((client) =>
          OpenAiCompatible.make({ profile: "deepseek", apiKey: key, baseUrl: fake.url }).pipe(
            Effect.provideService(HttpClient.HttpClient, client)
          )
        )
      )
      yield* Stream.runDrain(stripping.stream(Contract.request(deepseek)))
      expect(() => Contract.checkAttribution([])).toThrow(/\[C-6\] at least one request/)
      const stripped = yield* fake.requests
      expect(() => Contract.checkAttribution(stripped)).toThrow(/\[C-6\] user-agent of POST/)
      const referer = yield* FakeProvider.make({ replies: [FakeProvider.sse("data: [DONE]\n\n")] })
      const openrouter = yield* OpenAiCompatible.make({
        profile: "generic",
        baseUrl: referer.url,
        headers: { "HTTP-Referer": "https://example.com", "X-Title": "app" }
      })
      yield* Stream.runDrain(openrouter.stream(Contract.request(generic)))
      const withReferer = yield* referer.requests
      expect(() => Contract.checkAttribution(withReferer)).toThrow(/\[C-6\] no provider attribution headers/)
    })))

  it.live("[C-8] an adapter that keeps reading after its consumer is interrupted leaves the connection open; a stream that ignores interruption", () =>
    live(Effect.gen(function*() {
      const fake = yield* FakeProvider.make({ replies: [renderOpenAi(openaiStyle)(Contract.scenarios.stallMidStream)] })
      const adapter = yield* OpenAiCompatible.make({ profile: "openai", apiKey: key, baseUrl: fake.url })
      const leaky: LlmAdapter.LlmAdapter = {
        ...adapter,
        // the body is consumed by a detached fiber that outlives the consumer
        stream: (options) =>
          Stream.unwrap(Effect.gen(function*() {
            const queue = yield* Queue.unbounded<StreamChunk.StreamChunk>()
            yield* Effect.forkDetach(Stream.runForEach(adapter.stream(options), (c) => Queue.offer(queue, c)))
            return Stream.fromQueue(queue)
          }))
      }
      const run = yield* Contract.interruptAfterFirstDelta(leaky.stream(Contract.request(openai)))
      Contract.checkInterrupted(run) // the consumer side looks fine...
      const exit = yield* Effect.exit(Contract.checkClosed(fake, 0, "300 millis")) // ...but the socket stays open
      expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toMatch(/\[C-8\] the server did not see request 0's connection close/)
      const completed = yield* scriptedRun(Contract.scenarios.text)
      expect(() => Contract.checkInterrupted(completed)).toThrow(/\[C-8\] the consumer ends interrupted/)
    })))

  it.effect("wire-level checks: an HTTP adapter may not declare them not applicable; a scripted one must, with a reason", () =>
    Effect.sync(() => {
      for (const harness of [deepseek, openai, generic, anthropic, scripted]) expect(Contract.declarationProblem(harness)).toBeUndefined()
      expect(Contract.declarationProblem({ ...anthropic, notApplicable: { attribution: "no" } })).toMatch(/must run attribution/)
      expect(Contract.declarationProblem({ ...scripted, notApplicable: { "connection-close": "x", attribution: " " } })).toMatch(
        /cannot run attribution: declare/
      )
    }))
})
