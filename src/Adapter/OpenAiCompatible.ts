/**
 * One adapter for every OpenAI-compatible chat-completions server (`POST <base>/chat/completions`,
 * streaming), with per-provider profiles (DEC-5, §5):
 *
 * - `deepseek`: P-1..P-10 exactly. Route `deepseek`, display name "DeepSeek", base URL explicit >
 *   env `DEEPSEEK_BASE_URL` > `https://api.deepseek.com`, key explicit > env `DEEPSEEK_API_KEY`
 *   (missing → startup failure), optional `thinking` (`enabled|disabled` → body `thinking: {type}`)
 *   and `reasoningEffort` (`high|max` → `reasoning_effort`), `x-deepseek-harness-session-id` when
 *   the request has a `sessionId`, advisory models `deepseek-v4-flash`, `deepseek-v4-pro`. Reads
 *   `delta.reasoning_content`; resends joined reasoning as `reasoning_content` on tool-call turns
 *   only (P-3: thinking mode requires it there and ignores it elsewhere).
 * - `openai`: route `openai`, base `https://api.openai.com/v1` (env `OPENAI_BASE_URL`), key
 *   `OPENAI_API_KEY`. [DECISION] The output cap is sent as `max_completion_tokens`: OpenAI
 *   deprecated `max_tokens` for chat completions and its reasoning models (o-series, gpt-5) reject
 *   it ("Unsupported parameter: 'max_tokens' … Use 'max_completion_tokens' instead"), while every
 *   current model accepts `max_completion_tokens`. No `reasoning_content` is sent (OpenAI rejects
 *   unknown message fields); `reasoningEffort` is forwarded as `reasoning_effort` verbatim.
 * - `generic`: any compatible server by base URL (vLLM, llama.cpp, Ollama, OpenRouter, Groq,
 *   gateways). Route defaults to `openai-compatible`; key optional (local servers), from
 *   `OPENAI_COMPATIBLE_API_KEY`, base from `OPENAI_COMPATIBLE_BASE_URL` (required). Sends
 *   `max_tokens` (what these servers accept). Reads reasoning from `delta.reasoning_content` or,
 *   when absent, `delta.reasoning` (OpenRouter, Groq, newer vLLM; fixtures
 *   `openai/openrouter-comments-reasoning-inband-error`, `openai/groq-error-event-mid-stream`);
 *   `sendReasoningContent` opts into the DeepSeek-style resend for servers that want it.
 *
 * Response translation (P-5..P-8), shared by all profiles:
 * - at most one text block and one reasoning block per response (the text block is reused even
 *   after tool calls); one tool-call block per wire `tool_calls[].index` — never keyed by chunk
 *   `id` (relays splice chunks with other ids, fixture `openai/length-cutoff`) and never assuming
 *   indexes start at 0 (fixture `openai/gateway-tool-call-index-starts-at-1`);
 * - tool-call identity without `index` (Gemini's OpenAI-compatible endpoint and several proxies
 *   send one complete call per chunk with no `index`): a fragment whose `id` is new opens a new
 *   call, one whose `id` was seen continues that call, and one with neither `index` nor `id`
 *   continues the last call a fragment touched (or opens one when there is none). Indexed and
 *   unindexed fragments may mix: an indexed fragment is keyed by its index only, and it becomes the
 *   "last call" an id-less unindexed fragment continues;
 * - harness indexes are allocated in opening order across kinds; per chunk and choice: reasoning,
 *   content, tool calls, finish reason; empty/null/absent text opens nothing; each tool fragment
 *   yields a `tool-call-delta` (even an empty one) with the latest known id (`""` if none), the
 *   name once known (the first non-empty name sticks) and the fragment;
 * - on `[DONE]`: `block-end` for every block in opening order, `usage` if any was seen (last wins:
 *   finish chunk and/or a trailing `choices: []` chunk), then `finish` (last finish reason seen,
 *   default stop). A later chunk without `finish_reason` never erases it (fixture
 *   `openai/relay-parallel-tool-calls-nonempty-usage-choices`);
 * - finish: `stop`→stop, `tool_calls`→tool-calls, `length`→max-tokens, else
 *   `{kind: "error", message: "model stopped: <reason>", code: <REASON>}` — [DECISION] except
 *   that a reason the E-4 detector recognises as context overflow gets `CONTEXT_WINDOW_EXCEEDED`
 *   (C-5: one canonical code on either path);
 * - usage: `cacheRead = prompt_tokens_details.cached_tokens ?? prompt_cache_hit_tokens`,
 *   `input = prompt_tokens − cacheRead`, `output = completion_tokens`, `reasoning =
 *   completion_tokens_details.reasoning_tokens` when present; absent fields stay absent;
 * - in-band errors (a top-level `error` object in a data payload, or an SSE `event: error`) are
 *   classified by the one shared vocabulary (`LlmError.classifyProviderError`, E-2): an overflow
 *   message → `CONTEXT_WINDOW_EXCEEDED` (C-5), a numeric code is a status (`"429"` → `RATE_LIMIT`),
 *   known codes/types (`rate_limit_exceeded`, `server_error`, `tool_use_failed`, …) → their class,
 *   else the upper-cased raw code; the raw code (else type) is kept as `providerCode` and the
 *   provider's message as `message`. [DECISION] Like Anthropic's `error` event: before any chunk was
 *   emitted the error FAILS the stream (so the retry policy treats it like the same HTTP error);
 *   after chunks it ends the stream at once, in-band: `block-end`s, the usage carried so far
 *   (including on the error payload), then `finish {kind: "error", message, code, providerCode}`;
 * - events with another name (not `message`/`error`) are skipped, never fatal; a data payload that
 *   is not JSON fails the stream with `MALFORMED_RESPONSE`; JSON without `choices` is legal.
 * - No replay state is emitted (P-9).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as LlmAdapter from "../Llm/LlmAdapter.js"
import * as LlmError from "../Llm/LlmError.js"
import type * as Message from "../Llm/Message.js"
import * as StreamChunk from "../Llm/StreamChunk.js"
import * as DefaultHttpClient from "./DefaultHttpClient.js"
import * as HttpEdge from "./HttpEdge.js"
import * as Sse from "./Sse.js"
import { isRecord } from "../Llm/internal/Unknown.js"

// ---------------------------------------------------------------------------------------------
// Profiles and options

/**
 * The built-in profiles.
 *
 * @since 0.1.0
 * @category models
 */
export type ProfileName =
  | "deepseek"
  | "openai"
  | "generic"
  | "gemini"
  | "openrouter"
  | "groq"
  | "together"
  | "azure"
  | "ollama"
  | "vllm"
  | "llamacpp"
  | "lmstudio"

/**
 * What distinguishes one compatible provider from another. A provider quirk lives here, with the
 * reason in the module doc.
 *
 * @since 0.1.0
 * @category models
 */
export interface Profile {
  readonly name: ProfileName
  /** default route id */
  readonly route: string
  /** default display name */
  readonly displayName: string
  /** default base URL (`undefined`: must be configured) */
  readonly baseUrl: string | undefined
  /** prefix of the `<PREFIX>_API_KEY` / `<PREFIX>_BASE_URL` environment configuration */
  readonly envPrefix: string
  readonly keyRequired: boolean
  readonly models: ReadonlyArray<ModelEntry>
  /** body field of the output cap */
  readonly maxTokensField: "max_tokens" | "max_completion_tokens"
  /** response delta fields read as reasoning, first non-empty wins */
  readonly reasoningFields: ReadonlyArray<string>
  /** resend joined reasoning as `reasoning_content` on tool-call turns (P-3) */
  readonly sendReasoningContent: boolean
  /** request header carrying the session id, if any */
  readonly sessionHeader: string | undefined
  /** accepts `thinking` */
  readonly thinking: boolean
  /** how the key travels: `authorization: Bearer` or Azure's `api-key` header */
  readonly keyPlacement: "bearer" | "api-key"
  /** allowed `reasoningEffort` values (`undefined`: any non-empty string) */
  readonly reasoningEfforts: ReadonlyArray<string> | undefined
  /**
   * sends `prompt_cache_key` = the session id (DEC-17): OpenAI routes requests with the same key to the same
   * cache; providers that reject unknown fields (or cache by prefix alone, like DeepSeek) do not get it
   */
  readonly promptCacheKey: boolean
}

/**
 * An advisory catalog entry (C-9): `name` defaults to `id`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelEntry {
  readonly id: string
  readonly name?: string | undefined
}

// a gateway or local server: `max_tokens`, reasoning from `reasoning_content` or `reasoning`, no
// resend, no session header, any effort string
function gateway(
  name: ProfileName,
  route: string,
  displayName: string,
  baseUrl: string | undefined,
  envPrefix: string,
  keyRequired: boolean
): Profile {
  return {
    name,
    route,
    displayName,
    baseUrl,
    envPrefix,
    keyRequired,
    models: [],
    maxTokensField: "max_tokens",
    reasoningFields: ["reasoning_content", "reasoning"],
    sendReasoningContent: false,
    sessionHeader: undefined,
    thinking: false,
    keyPlacement: "bearer",
    reasoningEfforts: undefined,
    promptCacheKey: false
  }
}

/**
 * The built-in profiles. Gateway and local-server profiles (issue 11, P-11), each with its quirks:
 *
 * - `gemini` (route `gemini`, `https://generativelanguage.googleapis.com/v1beta/openai`, key
 *   `GEMINI_API_KEY` as Bearer): streams each tool call complete in one chunk WITHOUT `index`
 *   (identity by `id`, see the tool-call rule); `reasoning_effort` forwarded verbatim;
 * - `openrouter` (`https://openrouter.ai/api/v1`, `OPENROUTER_API_KEY`): `: OPENROUTER PROCESSING`
 *   comments while queued (byte timers count them), reasoning in `delta.reasoning`, in-band
 *   errors with numeric codes (`{"error":{"code":429,…}}`, mapped as statuses); no
 *   `HTTP-Referer`/`X-Title` attribution headers are ever sent (C-6);
 * - `groq` (`https://api.groq.com/openai/v1`, `GROQ_API_KEY`): reasoning in `delta.reasoning`,
 *   mid-stream `event: error` (`tool_use_failed`), usage on the last chunk under `x_groq.usage`
 *   (read when no top-level `usage` came);
 * - `together` (`https://api.together.xyz/v1`, `TOGETHER_API_KEY`): usage on the finish chunk,
 *   reasoning models stream `delta.reasoning`;
 * - `azure` (route `azure-openai`; base `https://<resource>.openai.azure.com` from
 *   `AZURE_OPENAI_BASE_URL`, required; key `AZURE_OPENAI_API_KEY`): the key goes in the `api-key`
 *   header (not Bearer), the URL is `<base>/openai/deployments/<deployment>/chat/completions?api-version=<v>`
 *   (`deployment` option required, `apiVersion` default {@link defaultAzureApiVersion}), the cap
 *   is `max_completion_tokens`;
 * - local servers `ollama` (`http://localhost:11434/v1`), `vllm` (`http://localhost:8000/v1`),
 *   `llamacpp` (`http://localhost:8080/v1`), `lmstudio` (`http://localhost:1234/v1`): no key
 *   needed (one is sent when configured), reasoning in `delta.reasoning_content` or
 *   `delta.reasoning`.
 *
 * @since 0.1.0
 * @category profiles
 */
export const profiles: { readonly [K in ProfileName]: Profile } = {
  deepseek: {
    name: "deepseek",
    route: "deepseek",
    displayName: "DeepSeek",
    baseUrl: "https://api.deepseek.com",
    envPrefix: "DEEPSEEK",
    keyRequired: true,
    models: [{ id: "deepseek-v4-flash" }, { id: "deepseek-v4-pro" }],
    maxTokensField: "max_tokens",
    reasoningFields: ["reasoning_content"],
    sendReasoningContent: true,
    sessionHeader: "x-deepseek-harness-session-id",
    thinking: true,
    keyPlacement: "bearer",
    reasoningEfforts: ["high", "max"],
    promptCacheKey: false
  },
  openai: {
    name: "openai",
    route: "openai",
    displayName: "OpenAI",
    baseUrl: "https://api.openai.com/v1",
    envPrefix: "OPENAI",
    keyRequired: true,
    models: [],
    maxTokensField: "max_completion_tokens",
    reasoningFields: ["reasoning_content", "reasoning"],
    sendReasoningContent: false,
    sessionHeader: undefined,
    thinking: false,
    keyPlacement: "bearer",
    reasoningEfforts: undefined,
    promptCacheKey: true
  },
  generic: {
    name: "generic",
    route: "openai-compatible",
    displayName: "OpenAI-compatible",
    baseUrl: undefined,
    envPrefix: "OPENAI_COMPATIBLE",
    keyRequired: false,
    models: [],
    maxTokensField: "max_tokens",
    reasoningFields: ["reasoning_content", "reasoning"],
    sendReasoningContent: false,
    sessionHeader: undefined,
    thinking: false,
    keyPlacement: "bearer",
    reasoningEfforts: undefined,
    promptCacheKey: false
  },
  gemini: gateway("gemini", "gemini", "Gemini (OpenAI-compatible)", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI", true),
  openrouter: gateway("openrouter", "openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER", true),
  groq: gateway("groq", "groq", "Groq", "https://api.groq.com/openai/v1", "GROQ", true),
  together: gateway("together", "together", "Together AI", "https://api.together.xyz/v1", "TOGETHER", true),
  azure: {
    ...gateway("azure", "azure-openai", "Azure OpenAI", undefined, "AZURE_OPENAI", true),
    maxTokensField: "max_completion_tokens",
    keyPlacement: "api-key"
  },
  ollama: gateway("ollama", "ollama", "Ollama", "http://localhost:11434/v1", "OLLAMA", false),
  vllm: gateway("vllm", "vllm", "vLLM", "http://localhost:8000/v1", "VLLM", false),
  llamacpp: gateway("llamacpp", "llamacpp", "llama.cpp server", "http://localhost:8080/v1", "LLAMACPP", false),
  lmstudio: gateway("lmstudio", "lmstudio", "LM Studio", "http://localhost:1234/v1", "LMSTUDIO", false)
}

/**
 * Adapter configuration. Only `profile` is required; everything else defaults from the profile.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly profile: ProfileName
  /** the API key (required by `deepseek` and `openai`; an explicitly empty key is invalid) */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly baseUrl?: string | undefined
  /** route id (provider key); default from the profile */
  readonly provider?: string | undefined
  readonly displayName?: string | undefined
  /** advisory catalog; default from the profile; `[]` allowed */
  readonly models?: ReadonlyArray<ModelEntry> | undefined
  /** DeepSeek thinking mode */
  readonly thinking?: "enabled" | "disabled" | undefined
  /** DeepSeek `high|max`; OpenAI/generic: forwarded verbatim */
  readonly reasoningEffort?: string | undefined
  /** deployment headers; the attribution `user-agent` wins over them (C-6) */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** header names whose values are secrets (redacted from errors, logs, spans); default `HttpEdge.defaultSecretHeaders` */
  readonly secretHeaders?: ReadonlyArray<string> | undefined
  /** substitute attribution identity (never suppressed); default `HttpEdge.userAgent` */
  readonly userAgent?: string | undefined
  /** Azure: the deployment name (required by the `azure` profile) */
  readonly deployment?: string | undefined
  /** Azure: the `api-version` query value; default {@link defaultAzureApiVersion} */
  readonly apiVersion?: string | undefined
  /** override the profile's `reasoning_content` resend (generic servers that want it) */
  readonly sendReasoningContent?: boolean | undefined
  /** override the profile's `prompt_cache_key` quirk (a compatible server that accepts the field) */
  readonly promptCacheKey?: boolean | undefined
}

/**
 * Options after defaults and validation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly profile: Profile
  readonly provider: string
  readonly displayName: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly models: ReadonlyArray<LlmAdapter.ModelInfo>
  readonly thinking: "enabled" | "disabled" | undefined
  readonly reasoningEffort: string | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly userAgent: string
  readonly sendReasoningContent: boolean
  readonly promptCacheKey: boolean
}

/**
 * The Azure OpenAI `api-version` used when none is configured (a GA version with streaming usage).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultAzureApiVersion = "2024-10-21"

/**
 * The chat-completions URL of a resolved configuration (Azure: deployment path and `api-version`
 * query; everyone else: `<base>/chat/completions`).
 *
 * @since 0.1.0
 * @category request
 */
export const endpoint = (resolved: Resolved, options: Pick<Options, "deployment" | "apiVersion">): string =>
  resolved.profile.name === "azure"
    ? `${HttpEdge.joinUrl(resolved.baseUrl, `openai/deployments/${encodeURIComponent(options.deployment ?? "")}/chat/completions`)}?api-version=${
      encodeURIComponent(options.apiVersion ?? defaultAzureApiVersion)
    }`
    : HttpEdge.joinUrl(resolved.baseUrl, "chat/completions")

/**
 * Applies profile defaults and validates (P-1, C-9): a required key present and non-empty, a valid
 * http(s) base URL, a non-empty route, models with non-empty unique ids, profile-specific knobs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (options: Options): Effect.Effect<Resolved, Config.ConfigError> =>
  Effect.suspend(() => {
    const profile = profiles[options.profile]
    if (profile === undefined) {
      return Effect.fail(HttpEdge.invalidConfig(`unknown profile "${String(options.profile)}"`))
    }
    const prefix = profile.envPrefix
    const baseUrl = options.baseUrl ?? profile.baseUrl
    if (baseUrl === undefined) {
      return Effect.fail(HttpEdge.missingConfig(`${prefix}_BASE_URL`, `the ${profile.name} profile needs a base URL`))
    }
    if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
      return Effect.fail(HttpEdge.invalidConfig(`invalid base URL "${baseUrl}"`))
    }
    if (options.apiKey === undefined && profile.keyRequired) {
      return Effect.fail(HttpEdge.missingConfig(`${prefix}_API_KEY`, `the ${profile.name} profile needs an API key`))
    }
    if (options.apiKey !== undefined && HttpEdge.isEmptySecret(options.apiKey)) {
      return Effect.fail(HttpEdge.invalidConfig("the API key is empty"))
    }
    if (profile.name === "azure" && (options.deployment === undefined || options.deployment === "")) {
      return Effect.fail(HttpEdge.invalidConfig("the azure profile needs a deployment name"))
    }
    const provider = options.provider ?? profile.route
    if (provider === "") return Effect.fail(HttpEdge.invalidConfig("the route id is empty"))
    const displayName = options.displayName === undefined || options.displayName === ""
      ? (options.provider === undefined ? profile.displayName : provider)
      : options.displayName
    if (options.thinking !== undefined && !profile.thinking) {
      return Effect.fail(HttpEdge.invalidConfig(`the ${profile.name} profile has no thinking option`))
    }
    if (options.reasoningEffort !== undefined) {
      const allowed = profile.reasoningEfforts
      if (options.reasoningEffort === "" || (allowed !== undefined && !allowed.includes(options.reasoningEffort))) {
        return Effect.fail(
          HttpEdge.invalidConfig(`unsupported reasoning effort "${options.reasoningEffort}"`)
        )
      }
    }
    if (options.userAgent !== undefined && options.userAgent.trim() === "") {
      return Effect.fail(HttpEdge.invalidConfig("the attribution identity may be substituted, never suppressed (C-6)"))
    }
    const entries = options.models ?? profile.models
    const seen = new Set<string>()
    const models: Array<LlmAdapter.ModelInfo> = []
    for (const entry of entries) {
      const name = entry.name ?? entry.id
      if (entry.id === "" || name === "") return Effect.fail(HttpEdge.invalidConfig("a model id or name is empty"))
      if (seen.has(entry.id)) return Effect.fail(HttpEdge.invalidConfig(`duplicate model id "${entry.id}"`))
      seen.add(entry.id)
      models.push({ provider, id: entry.id, name })
    }
    return Effect.succeed({
      profile,
      provider,
      displayName,
      baseUrl,
      apiKey: options.apiKey,
      models,
      thinking: options.thinking,
      reasoningEffort: options.reasoningEffort,
      headers: options.headers ?? {},
      userAgent: options.userAgent ?? HttpEdge.userAgent,
      sendReasoningContent: options.sendReasoningContent ?? profile.sendReasoningContent,
      promptCacheKey: options.promptCacheKey ?? profile.promptCacheKey
    })
  })

// ---------------------------------------------------------------------------------------------
// Request (P-1..P-3)

type JsonRecord = Record<string, unknown>

const joinReasoning = (blocks: ReadonlyArray<ContentBlock.ContentBlock>): string => {
  let out = ""
  for (const b of blocks) if (b.type === "reasoning") out += b.text
  return out
}

/**
 * Maps the provider-neutral messages to chat-completions messages (P-3).
 *
 * @since 0.1.0
 * @category request
 */
export const toWireMessages = (
  options: Pick<Message.GenerateOptions, "messages" | "system">,
  sendReasoningContent: boolean
): Array<JsonRecord> => {
  const out: Array<JsonRecord> = []
  if (options.system !== undefined && options.system !== "") out.push({ role: "system", content: options.system })
  for (const message of options.messages) {
    switch (message.role) {
      case "system": {
        out.push({ role: "system", content: ContentBlock.flattenText(message.content) })
        break
      }
      case "assistant": {
        const text = ContentBlock.flattenText(message.content)
        const calls: Array<JsonRecord> = []
        for (const b of message.content) {
          if (b.type === "tool-call") {
            calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: b.arguments } })
          }
        }
        const wire: JsonRecord = {
          role: "assistant",
          content: text !== "" ? text : calls.length > 0 ? "" : null
        }
        if (calls.length > 0) {
          wire["tool_calls"] = calls
          if (sendReasoningContent) {
            const reasoning = joinReasoning(message.content)
            if (reasoning !== "") wire["reasoning_content"] = reasoning
          }
        }
        out.push(wire)
        break
      }
      case "user": {
        const text = ContentBlock.flattenText(message.content)
        const results: Array<ContentBlock.ToolResultBlock> = []
        for (const b of message.content) if (b.type === "tool-result") results.push(b)
        if (text !== "" || results.length === 0) out.push({ role: "user", content: text })
        for (const r of results) {
          const content = ContentBlock.flattenText(r.content)
          out.push({ role: "tool", tool_call_id: r.toolCallId, content: content === "" ? "(no output)" : content })
        }
        break
      }
    }
  }
  return out
}

/**
 * Builds the request body (P-2): `model`, `messages`, `stream`, `stream_options`, then only when
 * set `thinking`, `reasoning_effort`, `tools` (non-empty), `temperature`, the output cap, `stop`, and
 * `prompt_cache_key` = the session id where the profile accepts it (DEC-17). Never a `null` for an absent option.
 *
 * @since 0.1.0
 * @category request
 */
export const buildBody = (resolved: Resolved, options: Message.GenerateOptions): JsonRecord => {
  const body: JsonRecord = {
    model: options.model,
    messages: toWireMessages(options, resolved.sendReasoningContent),
    stream: true,
    stream_options: { include_usage: true }
  }
  if (resolved.thinking !== undefined) body["thinking"] = { type: resolved.thinking }
  if (resolved.reasoningEffort !== undefined) body["reasoning_effort"] = resolved.reasoningEffort
  if (options.tools !== undefined && options.tools.length > 0) {
    body["tools"] = options.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters }
    }))
  }
  if (options.temperature !== undefined) body["temperature"] = options.temperature
  if (options.maxTokens !== undefined) body[resolved.profile.maxTokensField] = options.maxTokens
  if (options.stop !== undefined) body["stop"] = options.stop
  if (resolved.promptCacheKey && options.sessionId !== undefined) body["prompt_cache_key"] = options.sessionId
  return body
}

/**
 * The non-secret request headers (P-1): JSON in, SSE out, the session header when the request has
 * a `sessionId`, deployment headers, and the attribution `user-agent` last.
 *
 * @since 0.1.0
 * @category request
 */
export const buildHeaders = (resolved: Resolved, options: Message.GenerateOptions): Record<string, string> => {
  const session = resolved.profile.sessionHeader !== undefined && options.sessionId !== undefined
    ? { [resolved.profile.sessionHeader]: options.sessionId }
    : undefined
  return HttpEdge.mergeHeaders(
    [{ "content-type": "application/json", accept: "text/event-stream" }, session, resolved.headers],
    resolved.userAgent
  )
}

// ---------------------------------------------------------------------------------------------
// Response (P-4..P-8)

const count = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isFinite(u) && u >= 0 ? Math.trunc(u) : undefined

/**
 * Maps a wire `usage` object (P-8); `undefined` when it reports neither prompt nor completion
 * tokens.
 *
 * @since 0.1.0
 * @category response
 */
export const mapUsage = (u: JsonRecord): Message.TokenUsage | undefined => {
  const prompt = count(u["prompt_tokens"])
  const completion = count(u["completion_tokens"])
  if (prompt === undefined && completion === undefined) return undefined
  const promptDetails = u["prompt_tokens_details"]
  const completionDetails = u["completion_tokens_details"]
  const cacheRead = (isRecord(promptDetails) ? count(promptDetails["cached_tokens"]) : undefined) ??
    count(u["prompt_cache_hit_tokens"])
  const reasoning = isRecord(completionDetails) ? count(completionDetails["reasoning_tokens"]) : undefined
  const usage: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; reasoningTokens?: number } = {
    inputTokens: Math.max(0, (prompt ?? 0) - (cacheRead ?? 0)),
    outputTokens: completion ?? 0
  }
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead
  if (reasoning !== undefined) usage.reasoningTokens = reasoning
  return usage
}

/**
 * Maps a wire finish reason (P-7).
 *
 * @since 0.1.0
 * @category response
 */
export const mapFinishReason = (reason: string): Message.FinishReason => {
  switch (reason) {
    case "stop":
      return { kind: "stop" }
    case "tool_calls":
      return { kind: "tool-calls" }
    case "length":
      return { kind: "max-tokens" }
    default:
      return {
        kind: "error",
        message: `model stopped: ${reason}`,
        code: LlmError.isContextOverflow(reason) ? "CONTEXT_WINDOW_EXCEEDED" : reason.toUpperCase()
      }
  }
}

interface InBandError {
  readonly message: string
  readonly code: LlmError.ProviderErrorCode
  readonly providerCode: string | undefined
}

const inBandError = (error: unknown, fallbackMessage: string): InBandError => {
  const e = isRecord(error) ? error : {}
  const str = (v: unknown): string | undefined =>
    typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined
  const message = str(e["message"]) ?? fallbackMessage
  const code = str(e["code"])
  const type = str(e["type"])
  return {
    message,
    code: LlmError.classifyProviderError({ code, type, message }),
    providerCode: code ?? type
  }
}

interface ToolState {
  readonly index: number
  id: string
  name: string
  args: string
}

type Opened =
  | { readonly kind: "text"; readonly index: number }
  | { readonly kind: "reasoning"; readonly index: number }
  | { readonly kind: "tool"; readonly state: ToolState }

/**
 * The P-5/P-6 translator for one response (mutable state owned by one stream run).
 *
 * @since 0.1.0
 * @category response
 */
export const makeTranslator = (
  reasoningFields: ReadonlyArray<string>,
  provider: string
): Sse.Translator => {
  let next = 0
  let textIndex = -1
  let text = ""
  let reasoningIndex = -1
  let reasoning = ""
  const tools = new Map<number, ToolState>()
  const byId = new Map<string, ToolState>()
  let lastTool: ToolState | undefined = undefined
  const opened: Array<Opened> = []
  let usage: Message.TokenUsage | undefined = undefined
  let finishReason: string | undefined = undefined

  const close = (out: Array<StreamChunk.StreamChunk>, finish: Message.FinishReason) => {
    for (const o of opened) {
      switch (o.kind) {
        case "text":
          out.push(StreamChunk.blockEnd(o.index, ContentBlock.text(text)))
          break
        case "reasoning":
          out.push(StreamChunk.blockEnd(o.index, ContentBlock.reasoning(reasoning)))
          break
        case "tool":
          out.push(
            StreamChunk.blockEnd(
              o.state.index,
              ContentBlock.toolCall(o.state.id === "" ? `call-${o.state.index}` : o.state.id, o.state.name, o.state.args)
            )
          )
          break
      }
    }
    if (usage !== undefined) out.push(StreamChunk.usage(usage))
    out.push(StreamChunk.finish(finish))
  }

  const choice = (c: JsonRecord, out: Array<StreamChunk.StreamChunk>) => {
    const delta = c["delta"]
    if (isRecord(delta)) {
      for (const field of reasoningFields) {
        const r = delta[field]
        if (typeof r === "string" && r !== "") {
          if (reasoningIndex < 0) {
            reasoningIndex = next++
            opened.push({ kind: "reasoning", index: reasoningIndex })
            out.push(StreamChunk.blockStart(reasoningIndex, "reasoning"))
          }
          reasoning += r
          out.push(StreamChunk.reasoningDelta(reasoningIndex, r))
          break
        }
      }
      const content = delta["content"]
      if (typeof content === "string" && content !== "") {
        if (textIndex < 0) {
          textIndex = next++
          opened.push({ kind: "text", index: textIndex })
          out.push(StreamChunk.blockStart(textIndex, "text"))
        }
        text += content
        out.push(StreamChunk.textDelta(textIndex, content))
      }
      const calls = delta["tool_calls"]
      if (Array.isArray(calls)) {
        for (const call of calls as ReadonlyArray<unknown>) {
          if (!isRecord(call)) continue
          const rawId = call["id"]
          const id = typeof rawId === "string" && rawId !== "" ? rawId : undefined
          const wireIndex = call["index"]
          let state: ToolState | undefined
          if (typeof wireIndex === "number") {
            state = tools.get(wireIndex)
          } else if (id !== undefined) {
            // no index: a new id opens a new call, a known id continues its call
            state = byId.get(id)
          } else {
            // no index, no id: continues the last open call
            state = lastTool
          }
          if (state === undefined) {
            state = { index: next++, id: "", name: "", args: "" }
            if (typeof wireIndex === "number") tools.set(wireIndex, state)
            opened.push({ kind: "tool", state })
            out.push(StreamChunk.blockStart(state.index, "tool-call"))
          }
          lastTool = state
          if (id !== undefined) {
            state.id = id
            byId.set(id, state)
          }
          const fn = call["function"]
          let fragment = ""
          if (isRecord(fn)) {
            const name = fn["name"]
            if (state.name === "" && typeof name === "string" && name !== "") state.name = name
            const args = fn["arguments"]
            if (typeof args === "string") fragment = args
          }
          state.args += fragment
          out.push(
            StreamChunk.toolCallDelta(state.index, state.id, fragment, state.name === "" ? undefined : state.name)
          )
        }
      }
    }
    const reason = c["finish_reason"]
    if (typeof reason === "string" && reason !== "") finishReason = reason
  }

  const malformed = () =>
    LlmError.providerError("MALFORMED_RESPONSE", "invalid JSON in SSE data line", { provider })

  // before any chunk was emitted an in-band error fails the stream (the retry policy may retry
  // it, as Anthropic's error event and an HTTP error); after chunks it ends the response in-band
  let emitted = false
  const fail = (error: InBandError, out: Array<StreamChunk.StreamChunk>): "done" | LlmError.ProviderError => {
    const raw = error.providerCode === undefined ? {} : { providerCode: error.providerCode }
    if (!emitted && out.length === 0) return LlmError.providerError(error.code, error.message, { provider, ...raw })
    close(out, { kind: "error", message: error.message, code: error.code, ...raw })
    return "done"
  }

  const translate = (event: Sse.Event, out: Array<StreamChunk.StreamChunk>): "more" | "done" | LlmError.ProviderError => {
    const isError = event.event === "error"
    if (!isError && event.event !== "message") return "more"
    let payload: unknown
    try {
      payload = JSON.parse(event.data)
    } catch {
      if (isError) {
        return fail({
          message: event.data === "" ? "provider reported an error" : event.data,
          code: LlmError.classifyProviderError({ message: event.data }),
          providerCode: undefined
        }, out)
      }
      return malformed()
    }
    if (!isRecord(payload)) {
      if (isError) return fail(inBandError(undefined, "provider reported an error"), out)
      return "more"
    }
    const choices = payload["choices"]
    if (Array.isArray(choices)) {
      for (const c of choices) if (isRecord(c)) choice(c, out)
    }
    const groq = payload["x_groq"]
    const u = isRecord(payload["usage"]) ? payload["usage"] : isRecord(groq) ? groq["usage"] : undefined
    if (isRecord(u)) {
      const mapped = mapUsage(u)
      if (mapped !== undefined) usage = mapped
    }
    const error = payload["error"]
    if (isRecord(error) || isError) {
      return fail(inBandError(isRecord(error) ? error : payload, "provider reported an error"), out)
    }
    return "more"
  }

  return {
    event: (event, out) => {
      const before = out.length
      const result = translate(event, out)
      if (out.length > before) emitted = true
      return result
    },
    end: (out) => {
      close(out, finishReason === undefined ? { kind: "stop" } : mapFinishReason(finishReason))
      return undefined
    }
  }
}

/**
 * Decodes a chat-completions SSE body into chunks (P-4..P-8).
 *
 * @since 0.1.0
 * @category response
 */
export const decodeResponse = (reasoningFields: ReadonlyArray<string>, provider: string) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamChunk.StreamChunk, E | LlmError.ProviderError, R> =>
  Sse.decodeTranslate({ provider }, () => makeTranslator(reasoningFields, provider))(bytes)

// ---------------------------------------------------------------------------------------------
// Adapter and layers

/**
 * Builds the adapter value (register it with the `Llm` service, or provide it via {@link layer}).
 * Fails at startup on invalid configuration (missing key, bad URL, …).
 *
 * HTTP client: the one in the context if the caller provides one (the caller keeps it alive),
 * else the process-wide undici client of `DefaultHttpClient` (never destroyed early).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<LlmAdapter.LlmAdapter, Config.ConfigError> =>
  Effect.gen(function*() {
    const resolved = yield* resolve(options)
    const client = yield* DefaultHttpClient.forAdapter
    const url = endpoint(resolved, options)
    const auth: HttpEdge.Auth | undefined = resolved.apiKey === undefined
      ? undefined
      : resolved.profile.keyPlacement === "api-key"
      ? { scheme: "header", header: "api-key", key: resolved.apiKey }
      : { scheme: "bearer", key: resolved.apiKey }
    const decoder = decodeResponse(resolved.profile.reasoningFields, resolved.provider)
    return {
      providers: [{ id: resolved.provider, name: resolved.displayName }],
      models: resolved.models,
      stream: (request) =>
        Stream.suspend(() =>
          HttpEdge.stream(client, {
            provider: resolved.provider,
            url,
            headers: buildHeaders(resolved, request),
            auth,
            body: buildBody(resolved, request),
            secretHeaders: options.secretHeaders
          }).pipe(decoder)
        )
    } satisfies LlmAdapter.LlmAdapter
  })

/**
 * Reads the configuration of a profile: explicit overrides > environment (`<PREFIX>_API_KEY` via
 * `Config.redacted`, `<PREFIX>_BASE_URL`) > profile defaults (P-1). Validation happens in
 * {@link make}.
 *
 * @since 0.1.0
 * @category config
 */
export const config = (
  profile: ProfileName,
  overrides: Omit<Options, "profile"> = {}
): Config.Config<Options> => {
  const prefix = profiles[profile].envPrefix
  return Config.all({
    apiKey: Config.option(Config.Redacted(`${prefix}_API_KEY`)),
    baseUrl: Config.option(Config.String(`${prefix}_BASE_URL`))
  }).pipe(
    Config.map(({ apiKey, baseUrl }) => ({
      ...overrides,
      profile,
      apiKey: overrides.apiKey ?? Option.getOrUndefined(apiKey),
      baseUrl: overrides.baseUrl ?? Option.getOrUndefined(baseUrl)
    }))
  )
}

/**
 * The adapter as a Layer from explicit options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<LlmAdapter.Adapter, Config.ConfigError> =>
  Layer.effect(LlmAdapter.Adapter, make(options))

/**
 * The adapter as a Layer from the environment (see {@link config}), e.g.
 * `layerConfig("deepseek")` reads `DEEPSEEK_API_KEY` and `DEEPSEEK_BASE_URL`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  profile: ProfileName,
  overrides: Omit<Options, "profile"> = {}
): Layer.Layer<LlmAdapter.Adapter, Config.ConfigError> =>
  Layer.effect(LlmAdapter.Adapter, Effect.flatMap(config(profile, overrides), make))
