// vitest project: integration
/**
 * Gateway and local-server profiles (issue 11 item 8), each over the fake provider with a stream
 * written from the provider's published documentation (this project's own fixtures, in this
 * file): text, reasoning where the provider streams it, two tool calls, usage; one error response;
 * and the key placement (header, query, path) checked at the fake server.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import * as FakeProvider from "../support/FakeProvider.js"

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`
const chunk = (model: string, delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  data({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1735689600, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })
const done = "data: [DONE]\n\n"

const weather = { id: "call_w", name: "get_weather", args: "{\"location\":\"Sydney\"}" }
const time = { id: "call_t", name: "get_time", args: "{\"tz\":\"UTC\"}" }

/** Indexed, streamed tool calls (OpenAI style): id+name first, then argument fragments. */
const indexedCalls = (model: string) => [
  chunk(model, { tool_calls: [{ index: 0, id: weather.id, type: "function", function: { name: weather.name, arguments: "" } }] }),
  chunk(model, { tool_calls: [{ index: 0, function: { arguments: weather.args.slice(0, 9) } }] }),
  chunk(model, { tool_calls: [{ index: 0, function: { arguments: weather.args.slice(9) } }] }),
  chunk(model, { tool_calls: [{ index: 1, id: time.id, type: "function", function: { name: time.name, arguments: time.args } }] })
]

interface Case {
  readonly profile: OpenAiCompatible.ProfileName
  /** path under the fake server's URL used as base URL */
  readonly basePath: string
  readonly keyed: boolean
  readonly extra?: Partial<OpenAiCompatible.Options>
  readonly model: string
  readonly stream: string
  readonly reasoning: string | undefined
  readonly usage: Message.TokenUsage
  readonly error: { readonly reply: FakeProvider.Reply; readonly code: string; readonly message: string }
  /** request path and key placement seen by the server */
  readonly path: string
  readonly keyHeader: "authorization" | "api-key" | undefined
}

const openAiUsage = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 }
const plainUsage: Message.TokenUsage = { inputTokens: 50, outputTokens: 20 }

const cases: ReadonlyArray<Case> = [
  {
    profile: "gemini",
    basePath: "/v1beta/openai",
    keyed: true,
    model: "gemini-2.5-flash",
    // ai.google.dev/gemini-api/docs/openai: tool calls arrive complete, one per chunk, with no index
    stream: [
      data({ choices: [{ delta: { content: "Checking both.", role: "assistant" }, index: 0 }], created: 1, model: "gemini-2.5-flash", object: "chat.completion.chunk" }),
      data({ choices: [{ delta: { role: "assistant", tool_calls: [{ function: { arguments: weather.args, name: weather.name }, id: weather.id, type: "function" }] }, index: 0 }], object: "chat.completion.chunk" }),
      data({ choices: [{ delta: { role: "assistant", tool_calls: [{ function: { arguments: time.args, name: time.name }, id: time.id, type: "function" }] }, index: 0 }], object: "chat.completion.chunk" }),
      data({ choices: [{ delta: { role: "assistant" }, finish_reason: "tool_calls", index: 0 }], object: "chat.completion.chunk", usage: openAiUsage }),
      done
    ].join(""),
    reasoning: undefined,
    usage: plainUsage,
    error: {
      reply: FakeProvider.status(400, { body: JSON.stringify([{ error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" } }]) }),
      code: "INVALID_REQUEST",
      message: "API key not valid. Please pass a valid API key."
    },
    path: "/v1beta/openai/chat/completions",
    keyHeader: "authorization"
  },
  {
    profile: "openrouter",
    basePath: "/api/v1",
    keyed: true,
    model: "openai/gpt-oss-120b",
    // openrouter.ai/docs: ": OPENROUTER PROCESSING" comments, delta.reasoning, usage on a final chunk
    stream: [
      ": OPENROUTER PROCESSING\n\n",
      ": OPENROUTER PROCESSING\n\n",
      chunk("openai/gpt-oss-120b", { role: "assistant", content: "", reasoning: "Two lookups." }),
      chunk("openai/gpt-oss-120b", { content: "Checking both." }),
      ...indexedCalls("openai/gpt-oss-120b"),
      chunk("openai/gpt-oss-120b", {}, "tool_calls"),
      data({ id: "gen-1", object: "chat.completion.chunk", choices: [], usage: { ...openAiUsage, prompt_tokens_details: { cached_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 4 } } }),
      done
    ].join(""),
    reasoning: "Two lookups.",
    usage: { inputTokens: 40, outputTokens: 20, cacheReadTokens: 10, reasoningTokens: 4 },
    error: {
      reply: FakeProvider.status(402, { body: JSON.stringify({ error: { code: 402, message: "Insufficient credits" } }) }),
      code: "HTTP_402",
      message: "Insufficient credits"
    },
    path: "/api/v1/chat/completions",
    keyHeader: "authorization"
  },
  {
    profile: "groq",
    basePath: "/openai/v1",
    keyed: true,
    model: "qwen/qwen3-32b",
    // console.groq.com/docs: delta.reasoning, usage under x_groq on the last chunk
    stream: [
      chunk("qwen/qwen3-32b", { role: "assistant", content: "" }, null, { x_groq: { id: "req_1" } }),
      chunk("qwen/qwen3-32b", { reasoning: "Two lookups." }),
      chunk("qwen/qwen3-32b", { content: "Checking both." }),
      ...indexedCalls("qwen/qwen3-32b"),
      chunk("qwen/qwen3-32b", {}, "tool_calls", { x_groq: { id: "req_1", usage: { queue_time: 0.01, ...openAiUsage } } }),
      done
    ].join(""),
    reasoning: "Two lookups.",
    usage: plainUsage,
    error: {
      reply: FakeProvider.status(429, { retryAfter: "1", body: JSON.stringify({ error: { message: "Rate limit reached for model `qwen/qwen3-32b`", type: "tokens", code: "rate_limit_exceeded" } }) }),
      code: "RATE_LIMIT",
      message: "Rate limit reached for model `qwen/qwen3-32b`"
    },
    path: "/openai/v1/chat/completions",
    keyHeader: "authorization"
  },
  {
    profile: "together",
    basePath: "/v1",
    keyed: true,
    model: "deepseek-ai/DeepSeek-R1",
    // docs.together.ai: reasoning in delta.reasoning, usage on the finish chunk
    stream: [
      chunk("deepseek-ai/DeepSeek-R1", { role: "assistant", reasoning: "Two lookups." }),
      chunk("deepseek-ai/DeepSeek-R1", { content: "Checking both." }),
      ...indexedCalls("deepseek-ai/DeepSeek-R1"),
      chunk("deepseek-ai/DeepSeek-R1", {}, "tool_calls", { usage: openAiUsage }),
      done
    ].join(""),
    reasoning: "Two lookups.",
    usage: plainUsage,
    error: {
      reply: FakeProvider.status(401, { body: JSON.stringify({ id: "x", error: { message: "Invalid API key provided", type: "invalid_request_error", param: null, code: "invalid_api_key" } }) }),
      code: "AUTH",
      message: "Invalid API key provided"
    },
    path: "/v1/chat/completions",
    keyHeader: "authorization"
  },
  {
    profile: "azure",
    basePath: "",
    keyed: true,
    extra: { deployment: "gpt4o-prod", apiVersion: "2024-10-21" },
    model: "gpt-4o",
    // learn.microsoft.com (Azure OpenAI): a first chunk with empty choices and prompt_filter_results
    stream: [
      data({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] }),
      chunk("gpt-4o", { role: "assistant", content: "Checking both." }),
      ...indexedCalls("gpt-4o"),
      chunk("gpt-4o", {}, "tool_calls"),
      data({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: openAiUsage }),
      done
    ].join(""),
    reasoning: undefined,
    usage: plainUsage,
    error: {
      reply: FakeProvider.status(404, { body: JSON.stringify({ error: { code: "DeploymentNotFound", message: "The API deployment for this resource does not exist." } }) }),
      code: "HTTP_404",
      message: "The API deployment for this resource does not exist."
    },
    path: "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21",
    keyHeader: "api-key"
  },
  ...(["ollama", "vllm", "llamacpp", "lmstudio"] as const).map((profile): Case => ({
    profile,
    basePath: "/v1",
    keyed: false,
    model: "qwen3:8b",
    stream: [
      chunk("qwen3:8b", { role: "assistant", content: "", ...(profile === "ollama" || profile === "lmstudio" ? { reasoning: "Two lookups." } : { reasoning_content: "Two lookups." }) }),
      chunk("qwen3:8b", { content: "Checking both." }),
      ...indexedCalls("qwen3:8b"),
      chunk("qwen3:8b", {}, "tool_calls", profile === "llamacpp" ? { usage: openAiUsage, timings: { predicted_ms: 1 } } : {}),
      ...(profile === "llamacpp" ? [] : [data({ id: "c", object: "chat.completion.chunk", choices: [], usage: openAiUsage })]),
      done
    ].join(""),
    reasoning: "Two lookups.",
    usage: plainUsage,
    error: profile === "ollama"
      ? {
        reply: FakeProvider.status(404, { body: JSON.stringify({ error: { message: "model \"qwen9\" not found, try pulling it first", type: "api_error", param: null, code: null } }) }),
        code: "UNKNOWN_MODEL",
        message: "model \"qwen9\" not found, try pulling it first"
      }
      : profile === "vllm"
      ? {
        reply: FakeProvider.status(400, { body: JSON.stringify({ object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", type: "BadRequestError", param: null, code: 400 }) }),
        code: "CONTEXT_WINDOW_EXCEEDED",
        message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
      }
      : profile === "llamacpp"
      ? {
        reply: FakeProvider.status(400, { body: JSON.stringify({ error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error" } }) }),
        code: "CONTEXT_WINDOW_EXCEEDED",
        message: "the request exceeds the available context size, try increasing it"
      }
      : {
        reply: FakeProvider.status(404, { body: JSON.stringify({ error: "Model not found: qwen9" }) }),
        code: "UNKNOWN_MODEL",
        message: "Model not found: qwen9"
      },
    path: "/v1/chat/completions",
    keyHeader: undefined
  }))
]

const key = "sk-gateway-secret-123"

describe("gateway and local-server profiles (issue 11)", () => {
  for (const c of cases) {
    it.live(`[P-11, DEC-5] ${c.profile}: text${c.reasoning === undefined ? "" : ", reasoning"}, two tool calls, usage; error ${c.error.code}; key placement`, () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(c.stream, { maxPiece: 23 }), c.error.reply] })
        const adapter = yield* OpenAiCompatible.make({
          profile: c.profile,
          baseUrl: `${fake.url}${c.basePath}`,
          ...(c.keyed ? { apiKey: Redacted.make(key) } : {}),
          ...c.extra
        })
        const profile = OpenAiCompatible.profiles[c.profile]
        expect(adapter.providers).toEqual([{ id: profile.route, name: profile.displayName }])
        const request = { provider: profile.route, model: c.model, messages: [Message.user("weather and time?")] }
        const assembled = yield* Stream.run(adapter.stream(request), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([
          ...(c.reasoning === undefined ? [] : [ContentBlock.reasoning(c.reasoning)]),
          ContentBlock.text("Checking both."),
          ContentBlock.toolCall(weather.id, weather.name, weather.args),
          ContentBlock.toolCall(time.id, time.name, time.args)
        ])
        expect(assembled.usage).toEqual(c.usage)
        expect(assembled.finish).toEqual({ kind: "tool-calls" })
        const error = yield* Effect.flip(Stream.runDrain(adapter.stream(request)))
        expect(error).toMatchObject({ _tag: "ProviderError", code: c.error.code, message: c.error.message, provider: profile.route })
        const [sent] = yield* fake.requests
        expect(sent?.path).toBe(c.path)
        expect(sent?.headers["authorization"]).toBe(c.keyHeader === "authorization" ? `Bearer ${key}` : undefined)
        expect(sent?.headers["api-key"]).toBe(c.keyHeader === "api-key" ? key : undefined)
        expect(sent?.headers["http-referer"]).toBeUndefined()
        expect((sent?.body as Record<string, unknown>)["model"]).toBe(c.model)
      }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
  }

  it.effect("[P-11] local servers default to localhost and need no key; gateways need one; azure needs a deployment", () =>
    Effect.gen(function*() {
      for (const p of ["ollama", "vllm", "llamacpp", "lmstudio"] as const) {
        const resolved = yield* OpenAiCompatible.resolve({ profile: p })
        expect(new URL(resolved.baseUrl).hostname).toBe("localhost")
        expect(resolved.apiKey).toBeUndefined()
      }
      for (const p of ["gemini", "openrouter", "groq", "together"] as const) {
        const error = yield* Effect.flip(OpenAiCompatible.resolve({ profile: p }))
        expect(String(error)).toMatch(/_API_KEY/)
      }
      const noDeployment = yield* Effect.flip(OpenAiCompatible.resolve({ profile: "azure", apiKey: Redacted.make("k"), baseUrl: "https://r.openai.azure.com" }))
      expect(String(noDeployment)).toMatch(/deployment/)
    }))
})
