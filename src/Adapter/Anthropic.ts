/**
 * The Anthropic Messages adapter (`POST <base>/v1/messages`, streaming; DEC-5).
 *
 * Request:
 * - headers: `x-api-key`, `anthropic-version: 2023-06-01` (configurable), optional `anthropic-beta`,
 *   JSON in / SSE out, deployment headers, the attribution `user-agent` last (C-6);
 * - body: `model`, `max_tokens`, `system` (the `system` option, when non-empty), `messages`,
 *   `tools` (non-empty; `{name, description, input_schema}`), `thinking` (adapter config
 *   `thinking.budgetTokens` → `{type: "enabled", budget_tokens}`), `temperature`,
 *   `stop_sequences`, `stream: true`; nothing absent is sent as `null`;
 * - prompt caching (DEC-17, issue 30): up to four `cache_control` breakpoints on the last tool, the
 *   system prompt (then sent as one text block), the previous request's tail and this request's tail
 *   ({@link cacheBreakpoints}); TTL five minutes unless `promptCache: {ttl: "1h"}` (which also sends
 *   the `anthropic-beta` {@link extendedCacheTtlBeta}); `promptCache: false` sends none;
 * - [DECISION] `max_tokens` is required by Anthropic: the request's `maxTokens`, else the adapter's
 *   `maxTokens` option, else 8192 (valid for every current Claude model; Anthropic's own examples
 *   use 1024, which is too small for an agent writing files). With thinking enabled the cap must
 *   exceed the budget; otherwise the request fails before I/O with `INVALID_REQUEST`;
 * - [DECISION] C-8: with thinking enabled Anthropic accepts no `temperature` but 1; another value
 *   fails the request before I/O with `UNSUPPORTED_OPTION` (never silently dropped);
 * - user messages: `tool_result` blocks first (Anthropic requires them first), then text; all
 *   tool results of one user message (and of consecutive user messages) go in ONE user turn;
 *   result content = flattened text or `(no output)`, `is_error: true` only for errors; empty and
 *   whitespace-only text blocks are dropped, an empty user turn is omitted;
 * - [DECISION] whitespace-only text is never sent, in user or assistant turns, with or without
 *   replay state: Anthropic rejects it ("text content blocks must contain non-whitespace text",
 *   HTTP 400), and since the block stays in the session log every later request of the session
 *   would fail the same way. Adaptive thinking emits such a block (`"\n\n"` before the thinking,
 *   fixture `anthropic/adaptive-thinking-text-before-thinking`); it carries nothing the model needs,
 *   and dropping it keeps the replayed thinking blocks and their signatures intact;
 * - [DECISION] history system messages become user text (Anthropic has no in-history system role;
 *   as in §5.7); the `system` option is the top-level `system`;
 * - assistant messages: text (non-empty), `tool_use` with `input` = the parsed raw arguments
 *   (`""`, invalid or non-object JSON → `{}`, as in §5.7); reasoning blocks need their replay
 *   state (C-7, below) — [DECISION] reasoning without replay state (foreign history, another
 *   model) is not sent, since Anthropic only accepts signed thinking; an empty assistant turn is
 *   omitted.
 *
 * Replay state (C-7): a successful finish (stop, tool-calls, max-tokens) carries lossless JSON
 * `{kind: "anthropic-messages", version: 1, model, id, blocks}` where `blocks` lists the response's
 * native content blocks in order: `{type: "thinking", signature}`, `{type: "redacted_thinking",
 * data}`, `{type: "text"}`, `{type: "tool_use"}` — each aligned with the next core block of the
 * assistant message — or `{type: "native", block}` for provider blocks that have no harness
 * equivalent (server tools and their results, kept verbatim and not shown as content). A later
 * request rebuilds the assistant turn from it: thinking text and signature byte-identical,
 * redacted data verbatim, native blocks in place. The state is used only when the message's
 * `provenance.model` equals the request's model ([DECISION] signatures are model-bound; another
 * model gets the foreign treatment). A state that does not match the message (wrong shape, count
 * or kinds of blocks) fails the request with `INVALID_REPLAY_STATE`.
 *
 * Response translation:
 * - `message_start` usage, then `message_delta` usage overrides it field by field (fixture
 *   `anthropic/compat-input-tokens-only-in-message-delta`); `inputTokens = input_tokens` (already
 *   excludes cache), `cacheReadTokens = cache_read_input_tokens`, `cacheWriteTokens =
 *   cache_creation_input_tokens`, `reasoningTokens = output_tokens_details.thinking_tokens`, each
 *   only when reported;
 * - content blocks map 1:1 to harness blocks (indexes in start order): `text` → text, `thinking`
 *   and `redacted_thinking` → reasoning (redacted: empty text), `tool_use` → tool-call (id and
 *   name on the first delta at block start; `input_json_delta` fragments as argument deltas; no
 *   fragments → the start block's `input` re-stringified when non-empty, else `{}`); a whitespace-
 *   only text block stays its own block (fixture `anthropic/adaptive-thinking-text-before-thinking`);
 *   `block-end` is emitted at `content_block_stop`; other block types are native (above);
 * - stop reasons: `end_turn`/`stop_sequence` → stop, `tool_use` → tool-calls, `max_tokens` →
 *   max-tokens, else `{kind: "error", message: "model stopped: <reason>", code: <REASON>}`
 *   (`CONTEXT_WINDOW_EXCEEDED` when the detector recognises the reason, C-5);
 * - `ping` and unknown event types are skipped; the stream ends at `message_stop` (missing →
 *   `STREAM_CLOSED`); bad event JSON → `MALFORMED_RESPONSE`; an event whose `event:` name is
 *   neither a Messages event nor the default `message` is skipped before its data is parsed, so an
 *   unknown event type is never fatal, whatever its payload (contract suite);
 * - an `error` event is classified by the shared `LlmError.classifyProviderError` (one vocabulary
 *   for every adapter): `overloaded_error`/`api_error`/`timeout_error` → `SERVER`,
 *   `rate_limit_error` → `RATE_LIMIT`, `authentication_error`/`permission_error` → `AUTH`,
 *   `invalid_request_error` → `INVALID_REQUEST` (or `CONTEXT_WINDOW_EXCEEDED` per E-4),
 *   `request_too_large` → `HTTP_413`, `not_found_error` → `UNKNOWN_MODEL` when about the model,
 *   else `HTTP_404`; else the type upper-cased; the raw type is kept as `providerCode`. Before any chunk was
 *   emitted it FAILS the stream (so the `Llm` retry policy may retry, like an HTTP 529); after
 *   chunks it ends the stream in-band: `block-end`s, usage, `finish {kind: "error", message,
 *   code}` (the partial content and usage stay visible; C-4 makes both paths equivalent).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import * as LlmAdapter from "../Llm/LlmAdapter.js"
import * as LlmError from "../Llm/LlmError.js"
import type * as Message from "../Llm/Message.js"
import * as StreamChunk from "../Llm/StreamChunk.js"
import * as DefaultHttpClient from "./DefaultHttpClient.js"
import * as HttpEdge from "./HttpEdge.js"
import * as Sse from "./Sse.js"
import { isRecord } from "../Llm/internal/Unknown.js"

// ---------------------------------------------------------------------------------------------
// Options

/**
 * Adapter configuration.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly apiKey: Redacted.Redacted<string>
  /** default `https://api.anthropic.com` (env `ANTHROPIC_BASE_URL`) */
  readonly baseUrl?: string | undefined
  /** route id; default `anthropic` */
  readonly provider?: string | undefined
  /** default "Anthropic" */
  readonly displayName?: string | undefined
  /** advisory catalog; `name` defaults to `id` */
  readonly models?: ReadonlyArray<{ readonly id: string; readonly name?: string | undefined }> | undefined
  /** default output cap when the request has none; default 8192 */
  readonly maxTokens?: number | undefined
  /** extended thinking with a token budget */
  readonly thinking?: { readonly budgetTokens: number } | undefined
  /** `anthropic-version` header; default `2023-06-01` */
  readonly anthropicVersion?: string | undefined
  /** `anthropic-beta` header values */
  readonly betas?: ReadonlyArray<string> | undefined
  /** deployment headers; the attribution `user-agent` wins (C-6) */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** header names whose values are secrets (redacted from errors, logs, spans); default `HttpEdge.defaultSecretHeaders` */
  readonly secretHeaders?: ReadonlyArray<string> | undefined
  /** substitute attribution identity; default `HttpEdge.userAgent` */
  readonly userAgent?: string | undefined
  /**
   * Prompt caching (DEC-17): `cache_control` breakpoints with this TTL (`"5m"` default, `"1h"`), or `false` to
   * send none. See {@link cacheBreakpoints}.
   */
  readonly promptCache?: false | { readonly ttl?: CacheTtl | undefined } | undefined
}

/**
 * The TTLs Anthropic accepts on `cache_control` (five minutes is the API's default and is sent without `ttl`).
 *
 * @since 0.1.0
 * @category models
 */
export type CacheTtl = "5m" | "1h"

/**
 * The `anthropic-beta` value sent with a one-hour cache TTL (the API first shipped the TTL behind it; it is
 * accepted, and ignored, now that the TTL is generally available).
 *
 * @since 0.1.0
 * @category constants
 */
export const extendedCacheTtlBeta = "extended-cache-ttl-2025-04-11"

/**
 * The default output cap (see the module doc).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxTokens = 8192

/**
 * The default `anthropic-version`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultVersion = "2023-06-01"

/**
 * Options after defaults and validation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly provider: string
  readonly displayName: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly models: ReadonlyArray<LlmAdapter.ModelInfo>
  readonly maxTokens: number
  readonly thinking: { readonly budgetTokens: number } | undefined
  readonly headers: Record<string, string>
  readonly userAgent: string
  /** the breakpoints' TTL, `undefined` when prompt caching is off */
  readonly cacheTtl: CacheTtl | undefined
}

const isPositiveInt = (n: number) => Number.isInteger(n) && n > 0

/**
 * Applies defaults and validates the options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (options: Options): Effect.Effect<Resolved, Config.ConfigError> =>
  Effect.suspend(() => {
    if (HttpEdge.isEmptySecret(options.apiKey)) {
      return Effect.fail(HttpEdge.invalidConfig("the API key is empty"))
    }
    const baseUrl = options.baseUrl ?? "https://api.anthropic.com"
    if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
      return Effect.fail(HttpEdge.invalidConfig(`invalid base URL "${baseUrl}"`))
    }
    const provider = options.provider ?? "anthropic"
    if (provider === "") return Effect.fail(HttpEdge.invalidConfig("the route id is empty"))
    const maxTokens = options.maxTokens ?? defaultMaxTokens
    if (!isPositiveInt(maxTokens)) return Effect.fail(HttpEdge.invalidConfig("maxTokens must be a positive integer"))
    if (options.thinking !== undefined && !isPositiveInt(options.thinking.budgetTokens)) {
      return Effect.fail(HttpEdge.invalidConfig("thinking.budgetTokens must be a positive integer"))
    }
    if (options.userAgent !== undefined && options.userAgent.trim() === "") {
      return Effect.fail(HttpEdge.invalidConfig("the attribution identity may be substituted, never suppressed (C-6)"))
    }
    const seen = new Set<string>()
    const models: Array<LlmAdapter.ModelInfo> = []
    for (const entry of options.models ?? []) {
      const name = entry.name ?? entry.id
      if (entry.id === "" || name === "") return Effect.fail(HttpEdge.invalidConfig("a model id or name is empty"))
      if (seen.has(entry.id)) return Effect.fail(HttpEdge.invalidConfig(`duplicate model id "${entry.id}"`))
      seen.add(entry.id)
      models.push({ provider, id: entry.id, name })
    }
    const fixed: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
      "anthropic-version": options.anthropicVersion ?? defaultVersion
    }
    const cacheTtl = options.promptCache === false ? undefined : options.promptCache?.ttl ?? "5m"
    if (cacheTtl !== undefined && cacheTtl !== "5m" && cacheTtl !== "1h") {
      return Effect.fail(HttpEdge.invalidConfig(`unsupported cache TTL "${String(cacheTtl)}" (5m or 1h)`))
    }
    const betas = [
      ...(options.betas ?? []),
      ...(cacheTtl === "1h" && !(options.betas ?? []).includes(extendedCacheTtlBeta) ? [extendedCacheTtlBeta] : [])
    ]
    if (betas.length > 0) fixed["anthropic-beta"] = betas.join(",")
    const userAgent = options.userAgent ?? HttpEdge.userAgent
    return Effect.succeed({
      provider,
      displayName: options.displayName === undefined || options.displayName === ""
        ? (options.provider === undefined ? "Anthropic" : provider)
        : options.displayName,
      baseUrl,
      apiKey: options.apiKey,
      models,
      maxTokens,
      thinking: options.thinking,
      headers: HttpEdge.mergeHeaders([fixed, options.headers], userAgent),
      userAgent,
      cacheTtl
    })
  })

// ---------------------------------------------------------------------------------------------
// Replay state (C-7)

/**
 * One native content block of a response, aligned with the assistant message's core blocks.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplayBlock =
  | { readonly type: "thinking"; readonly signature: string }
  | { readonly type: "redacted_thinking"; readonly data: string }
  | { readonly type: "text" }
  | { readonly type: "tool_use" }
  | { readonly type: "native"; readonly block: Json.JsonObject }

/**
 * The adapter-private replay state on a successful finish.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayState {
  readonly kind: "anthropic-messages"
  readonly version: 1
  readonly model: string
  readonly id: string
  readonly blocks: ReadonlyArray<ReplayBlock>
}

const parseReplayBlock = (u: unknown): ReplayBlock | undefined => {
  if (!isRecord(u)) return undefined
  switch (u["type"]) {
    case "thinking":
      return typeof u["signature"] === "string" ? { type: "thinking", signature: u["signature"] } : undefined
    case "redacted_thinking":
      return typeof u["data"] === "string" ? { type: "redacted_thinking", data: u["data"] } : undefined
    case "text":
      return { type: "text" }
    case "tool_use":
      return { type: "tool_use" }
    case "native":
      return isRecord(u["block"]) && Json.isJson(u["block"])
        ? { type: "native", block: u["block"] as Json.JsonObject }
        : undefined
    default:
      return undefined
  }
}

/**
 * Validates a replay state value; `undefined` when it is not this adapter's.
 *
 * @since 0.1.0
 * @category replay
 */
export const parseReplayState = (u: unknown): ReplayState | undefined => {
  if (!isRecord(u) || u["kind"] !== "anthropic-messages" || u["version"] !== 1) return undefined
  if (typeof u["model"] !== "string" || typeof u["id"] !== "string" || !Array.isArray(u["blocks"])) return undefined
  const blocks: Array<ReplayBlock> = []
  for (const b of u["blocks"]) {
    const parsed = parseReplayBlock(b)
    if (parsed === undefined) return undefined
    blocks.push(parsed)
  }
  return { kind: "anthropic-messages", version: 1, model: u["model"], id: u["id"], blocks }
}

// ---------------------------------------------------------------------------------------------
// Request

type Wire = Record<string, unknown>

const toolInput = (args: string): Record<string, unknown> => {
  if (args.trim() === "") return {}
  try {
    const parsed: unknown = JSON.parse(args)
    return isRecord(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

// Anthropic answers 400 "text content blocks must contain non-whitespace text" to a blank text
// block, on every later request of the session (see the module doc)
const isBlank = (text: string): boolean => text.trim() === ""

const replayMismatch = (reason: string) =>
  LlmError.providerError("INVALID_REPLAY_STATE", `Anthropic replay state does not match the message: ${reason}`)

const coreKinds: Record<string, ReplayBlock["type"] | undefined> = {
  reasoning: "thinking",
  text: "text",
  "tool-call": "tool_use"
}

const assistantContent = (
  message: Message.Message,
  model: string
): Result.Result<Array<Wire>, LlmError.ProviderError> => {
  const core = message.content.filter((b) => b.type === "text" || b.type === "reasoning" || b.type === "tool-call")
  const raw = message.provenance?.replayState
  const out: Array<Wire> = []
  const plain = (b: ContentBlock.ContentBlock) => {
    if (b.type === "text" && !isBlank(b.text)) out.push({ type: "text", text: b.text })
    else if (b.type === "tool-call") out.push({ type: "tool_use", id: b.id, name: b.name, input: toolInput(b.arguments) })
  }
  if (raw === undefined || message.provenance?.model !== model) {
    for (const b of core) plain(b)
    return Result.succeed(out)
  }
  const state = parseReplayState(raw)
  if (state === undefined) return Result.fail(replayMismatch("not an Anthropic replay state"))
  let i = 0
  for (const entry of state.blocks) {
    if (entry.type === "native") {
      out.push(entry.block)
      continue
    }
    const block = core[i++]
    if (block === undefined) return Result.fail(replayMismatch("more native blocks than content blocks"))
    const expected = coreKinds[block.type]
    const kind = entry.type === "redacted_thinking" ? "thinking" : entry.type
    if (expected !== kind) {
      return Result.fail(replayMismatch(`block ${i - 1} is ${block.type}, the state says ${entry.type}`))
    }
    if (entry.type === "thinking" && block.type === "reasoning") {
      out.push({ type: "thinking", thinking: block.text, signature: entry.signature })
    } else if (entry.type === "redacted_thinking") {
      out.push({ type: "redacted_thinking", data: entry.data })
    } else {
      plain(block)
    }
  }
  if (i !== core.length) return Result.fail(replayMismatch("fewer native blocks than content blocks"))
  return Result.succeed(out)
}

/**
 * Maps the provider-neutral messages to Anthropic `messages` (see the module doc).
 *
 * @since 0.1.0
 * @category request
 */
export const toWireMessages = (
  options: Pick<Message.GenerateOptions, "messages" | "model">
): Result.Result<Array<Wire>, LlmError.ProviderError> => {
  const out: Array<Wire> = []
  // the pending user turn: tool results first, then other content
  let results: Array<Wire> = []
  let others: Array<Wire> = []
  const flushUser = () => {
    if (results.length + others.length > 0) out.push({ role: "user", content: [...results, ...others] })
    results = []
    others = []
  }
  for (const message of options.messages) {
    if (message.role === "assistant") {
      const content = assistantContent(message, options.model)
      if (Result.isFailure(content)) return Result.fail(content.failure)
      if (content.success.length === 0) continue
      flushUser()
      out.push({ role: "assistant", content: content.success })
      continue
    }
    for (const b of message.content) {
      if (b.type === "text") {
        if (!isBlank(b.text)) others.push({ type: "text", text: b.text })
      } else if (b.type === "tool-result" && message.role === "user") {
        const text = ContentBlock.flattenText(b.content)
        const wire: Wire = { type: "tool_result", tool_use_id: b.toolCallId, content: text === "" ? "(no output)" : text }
        if (b.isError === true) wire["is_error"] = true
        results.push(wire)
      }
    }
  }
  flushUser()
  return Result.succeed(out)
}

/**
 * Builds the request body (see the module doc); fails before I/O on an invalid replay state or a
 * thinking budget that does not fit under the output cap.
 *
 * @since 0.1.0
 * @category request
 */
export const buildBody = (
  resolved: Resolved,
  options: Message.GenerateOptions
): Result.Result<Wire, LlmError.ProviderError> => {
  const messages = toWireMessages(options)
  if (Result.isFailure(messages)) {
    return Result.fail(
      LlmError.providerError(messages.failure.code, messages.failure.message, { provider: resolved.provider })
    )
  }
  const maxTokens = options.maxTokens ?? resolved.maxTokens
  const body: Wire = { model: options.model, max_tokens: maxTokens }
  if (options.system !== undefined && options.system !== "") body["system"] = options.system
  body["messages"] = messages.success
  if (options.tools !== undefined && options.tools.length > 0) {
    body["tools"] = options.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }))
  }
  if (resolved.thinking !== undefined) {
    if (resolved.thinking.budgetTokens >= maxTokens) {
      return Result.fail(
        LlmError.providerError(
          "INVALID_REQUEST",
          `max_tokens (${maxTokens}) must exceed the thinking budget (${resolved.thinking.budgetTokens})`,
          { provider: resolved.provider }
        )
      )
    }
    if (options.temperature !== undefined && options.temperature !== 1) {
      return Result.fail(
        LlmError.providerError(
          "UNSUPPORTED_OPTION",
          `temperature ${options.temperature} cannot be sent with extended thinking (Anthropic accepts only 1)`,
          { provider: resolved.provider }
        )
      )
    }
    body["thinking"] = { type: "enabled", budget_tokens: resolved.thinking.budgetTokens }
  }
  if (options.temperature !== undefined) body["temperature"] = options.temperature
  if (options.stop !== undefined) body["stop_sequences"] = options.stop
  body["stream"] = true
  return Result.succeed(resolved.cacheTtl === undefined ? body : cacheBreakpoints(body, resolved.cacheTtl))
}

// block types that cannot carry `cache_control` (thinking is cached as part of the turn it belongs to)
const uncacheable: ReadonlySet<unknown> = new Set(["thinking", "redacted_thinking"])

const withControl = (block: Wire, control: Wire): Wire => ({ ...block, cache_control: control })

/** the message with `cache_control` on its last cacheable block (unchanged when it has none) */
const markTail = (message: Wire, control: Wire): Wire => {
  const content = message["content"]
  if (!Array.isArray(content)) return message
  for (let i = content.length - 1; i >= 0; i--) {
    const block: unknown = content[i]
    if (!isRecord(block) || uncacheable.has(block["type"])) continue
    const copy = content.slice()
    copy[i] = withControl(block, control)
    return { ...message, content: copy }
  }
  return message
}

/**
 * Places at most four `cache_control` breakpoints on a request body (DEC-17), in Anthropic's prefix order
 * tools → system → messages, so that the next request of the session reuses what this one writes:
 * 1. the last tool definition (the tool list is cached on its own: a system prompt change keeps it);
 * 2. the system prompt (sent as one text block carrying the breakpoint);
 * 3. the last user turn before the last assistant turn: the tail of the previous request, so the
 *    conversation cached by the previous request is read even when more than the API's 20-block lookback
 *    was appended since;
 * 4. the last cacheable block of the last message: this request's tail, written for the next request.
 *
 * With `"1h"` every breakpoint carries `ttl: "1h"` (one TTL for all, so the API's "longer TTLs first" rule
 * holds); five minutes is the API default and is sent as a bare `{type: "ephemeral"}`.
 *
 * @since 0.1.0
 * @category request
 */
export const cacheBreakpoints = (body: Wire, ttl: CacheTtl): Wire => {
  const control: Wire = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" }
  const out: Wire = { ...body }
  const tools = body["tools"]
  if (Array.isArray(tools) && tools.length > 0) {
    const last: unknown = tools[tools.length - 1]
    if (isRecord(last)) out["tools"] = [...tools.slice(0, -1), withControl(last, control)]
  }
  const system = body["system"]
  if (typeof system === "string" && system !== "") out["system"] = [{ type: "text", text: system, cache_control: control }]
  const messages = body["messages"]
  if (Array.isArray(messages) && messages.length > 0) {
    const copy: Array<unknown> = messages.slice()
    let lastAssistant = -1
    for (let i = copy.length - 1; i >= 0; i--) {
      const m: unknown = copy[i]
      if (isRecord(m) && m["role"] === "assistant") {
        lastAssistant = i
        break
      }
    }
    const previousTail = lastAssistant - 1
    const previous: unknown = previousTail >= 0 ? copy[previousTail] : undefined
    if (isRecord(previous) && previous["role"] === "user") copy[previousTail] = markTail(previous, control)
    const tail: unknown = copy[copy.length - 1]
    if (isRecord(tail)) copy[copy.length - 1] = markTail(tail, control)
    out["messages"] = copy
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Response

const count = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isFinite(u) && u >= 0 ? Math.trunc(u) : undefined

/**
 * Maps a stop reason.
 *
 * @since 0.1.0
 * @category response
 */
export const mapStopReason = (reason: string): Message.FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return { kind: "stop" }
    case "tool_use":
      return { kind: "tool-calls" }
    case "max_tokens":
      return { kind: "max-tokens" }
    default:
      return {
        kind: "error",
        message: `model stopped: ${reason}`,
        code: LlmError.isContextOverflow(reason) ? "CONTEXT_WINDOW_EXCEEDED" : reason.toUpperCase()
      }
  }
}

/**
 * Maps an Anthropic error type (HTTP body or `error` event) to a canonical code, through the one
 * classifier every adapter shares (`LlmError.classifyProviderError`).
 *
 * @since 0.1.0
 * @category response
 */
export const codeForErrorType = (type: string, message: string): LlmError.ProviderErrorCode =>
  LlmError.classifyProviderError({ type, message })

type Slot =
  | { readonly kind: "text"; readonly index: number; text: string; closed: boolean }
  | { readonly kind: "thinking"; readonly index: number; text: string; signature: string; closed: boolean }
  | { readonly kind: "redacted"; readonly index: number; readonly data: string; closed: boolean }
  | {
    readonly kind: "tool"
    readonly index: number
    readonly id: string
    readonly name: string
    readonly startInput: unknown
    args: string
    closed: boolean
  }
  | { readonly kind: "native"; readonly block: Record<string, unknown>; args: string }

interface UsageState {
  input?: number
  output?: number
  cacheRead?: number
  cacheWrite?: number
  reasoning?: number
}

/**
 * `true` for the event that ends an Anthropic stream (`message_stop`, also when a compatible
 * server omits `event:` lines).
 *
 * @since 0.1.0
 * @category response
 */
export const isMessageStop = (event: Sse.Event): boolean =>
  event.event === "message_stop" ||
  (event.event === "message" && /"type"\s*:\s*"message_stop"/.test(event.data))

// the event names of the Messages stream; any other named event is skipped unparsed
const messagesEvents: ReadonlySet<string> = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error"
])

/**
 * The translator for one response (mutable state owned by one stream run).
 *
 * @since 0.1.0
 * @category response
 */
export const makeTranslator = (provider: string): Sse.Translator => {
  let next = 0
  const slots = new Map<number, Slot>()
  const order: Array<Slot> = []
  const usage: UsageState = {}
  let sawUsage = false
  let stopReason: string | undefined = undefined
  let model = ""
  let id = ""
  let emitted = false

  const readUsage = (u: unknown) => {
    if (!isRecord(u)) return
    const set = (key: keyof UsageState, value: unknown) => {
      const n = count(value)
      if (n !== undefined) {
        usage[key] = n
        sawUsage = true
      }
    }
    set("input", u["input_tokens"])
    set("output", u["output_tokens"])
    set("cacheRead", u["cache_read_input_tokens"])
    set("cacheWrite", u["cache_creation_input_tokens"])
    const details = u["output_tokens_details"]
    if (isRecord(details)) set("reasoning", details["thinking_tokens"])
  }

  const tokenUsage = (): Message.TokenUsage => {
    const out: {
      inputTokens: number
      outputTokens: number
      cacheReadTokens?: number
      cacheWriteTokens?: number
      reasoningTokens?: number
    } = { inputTokens: usage.input ?? 0, outputTokens: usage.output ?? 0 }
    if (usage.cacheRead !== undefined) out.cacheReadTokens = usage.cacheRead
    if (usage.cacheWrite !== undefined) out.cacheWriteTokens = usage.cacheWrite
    if (usage.reasoning !== undefined) out.reasoningTokens = usage.reasoning
    return out
  }

  const endBlock = (slot: Slot, out: Array<StreamChunk.StreamChunk>) => {
    switch (slot.kind) {
      case "text":
        if (!slot.closed) out.push(StreamChunk.blockEnd(slot.index, ContentBlock.text(slot.text)))
        slot.closed = true
        return
      case "thinking":
        if (!slot.closed) out.push(StreamChunk.blockEnd(slot.index, ContentBlock.reasoning(slot.text)))
        slot.closed = true
        return
      case "redacted":
        if (!slot.closed) out.push(StreamChunk.blockEnd(slot.index, ContentBlock.reasoning("")))
        slot.closed = true
        return
      case "tool": {
        if (!slot.closed) {
          const args = slot.args !== ""
            ? slot.args
            : isRecord(slot.startInput) && Object.keys(slot.startInput).length > 0
            ? JSON.stringify(slot.startInput)
            : "{}"
          out.push(StreamChunk.blockEnd(slot.index, ContentBlock.toolCall(slot.id, slot.name, args)))
        }
        slot.closed = true
        return
      }
      case "native": {
        if (slot.args !== "") {
          try {
            const input: unknown = JSON.parse(slot.args)
            slot.block["input"] = input
          } catch {
            // keep the start block's input: the native block is replayed as the provider sent it
          }
          slot.args = ""
        }
        return
      }
    }
  }

  const replayState = (): Json.Json | undefined => {
    const blocks: Array<unknown> = order.map((slot) => {
      switch (slot.kind) {
        case "text":
          return { type: "text" }
        case "thinking":
          return { type: "thinking", signature: slot.signature }
        case "redacted":
          return { type: "redacted_thinking", data: slot.data }
        case "tool":
          return { type: "tool_use" }
        case "native":
          return { type: "native", block: slot.block }
      }
    })
    const copied = Json.copyJson({ kind: "anthropic-messages", version: 1, model, id, blocks })
    return Result.isSuccess(copied) ? copied.success : undefined
  }

  const close = (out: Array<StreamChunk.StreamChunk>, reason: Message.FinishReason) => {
    for (const slot of order) endBlock(slot, out)
    if (sawUsage) out.push(StreamChunk.usage(tokenUsage()))
    const success = reason.kind === "stop" || reason.kind === "tool-calls" || reason.kind === "max-tokens"
    out.push(StreamChunk.finish(reason, success ? replayState() : undefined))
  }

  const open = (wireIndex: number, block: Record<string, unknown>, out: Array<StreamChunk.StreamChunk>) => {
    let slot: Slot
    switch (block["type"]) {
      case "text": {
        const text = typeof block["text"] === "string" ? block["text"] : ""
        slot = { kind: "text", index: next++, text, closed: false }
        out.push(StreamChunk.blockStart(slot.index, "text"))
        if (text !== "") out.push(StreamChunk.textDelta(slot.index, text))
        break
      }
      case "thinking": {
        const text = typeof block["thinking"] === "string" ? block["thinking"] : ""
        const signature = typeof block["signature"] === "string" ? block["signature"] : ""
        slot = { kind: "thinking", index: next++, text, signature, closed: false }
        out.push(StreamChunk.blockStart(slot.index, "reasoning"))
        if (text !== "") out.push(StreamChunk.reasoningDelta(slot.index, text))
        break
      }
      case "redacted_thinking": {
        slot = {
          kind: "redacted",
          index: next++,
          data: typeof block["data"] === "string" ? block["data"] : "",
          closed: false
        }
        out.push(StreamChunk.blockStart(slot.index, "reasoning"))
        break
      }
      case "tool_use": {
        const toolId = typeof block["id"] === "string" ? block["id"] : ""
        const name = typeof block["name"] === "string" ? block["name"] : ""
        slot = { kind: "tool", index: next++, id: toolId, name, startInput: block["input"], args: "", closed: false }
        out.push(StreamChunk.blockStart(slot.index, "tool-call"))
        out.push(StreamChunk.toolCallDelta(slot.index, toolId, "", name === "" ? undefined : name))
        break
      }
      default:
        slot = { kind: "native", block: { ...block }, args: "" }
    }
    slots.set(wireIndex, slot)
    order.push(slot)
  }

  const delta = (slot: Slot, d: Record<string, unknown>, out: Array<StreamChunk.StreamChunk>) => {
    switch (d["type"]) {
      case "text_delta": {
        const text = d["text"]
        if (slot.kind === "text" && !slot.closed && typeof text === "string" && text !== "") {
          slot.text += text
          out.push(StreamChunk.textDelta(slot.index, text))
        }
        return
      }
      case "thinking_delta": {
        const text = d["thinking"]
        if (slot.kind === "thinking" && !slot.closed && typeof text === "string" && text !== "") {
          slot.text += text
          out.push(StreamChunk.reasoningDelta(slot.index, text))
        }
        return
      }
      case "signature_delta": {
        const signature = d["signature"]
        if (slot.kind === "thinking" && typeof signature === "string") slot.signature += signature
        return
      }
      case "input_json_delta": {
        const partial = d["partial_json"]
        if (typeof partial !== "string" || partial === "") return
        if (slot.kind === "tool" && !slot.closed) {
          slot.args += partial
          out.push(StreamChunk.toolCallDelta(slot.index, slot.id, partial, slot.name === "" ? undefined : slot.name))
        } else if (slot.kind === "native") {
          slot.args += partial
        }
        return
      }
      default:
        return
    }
  }

  const malformed = () => LlmError.providerError("MALFORMED_RESPONSE", "invalid JSON in SSE data line", { provider })

  return {
    event: (event, out) => {
      if (event.event !== "message" && !messagesEvents.has(event.event)) return "more"
      let payload: unknown
      try {
        payload = JSON.parse(event.data)
      } catch {
        return malformed()
      }
      if (!isRecord(payload)) return "more"
      const type = typeof payload["type"] === "string" ? payload["type"] : event.event
      const before = out.length
      switch (type) {
        case "message_start": {
          const message = payload["message"]
          if (isRecord(message)) {
            if (typeof message["model"] === "string") model = message["model"]
            if (typeof message["id"] === "string") id = message["id"]
            readUsage(message["usage"])
          }
          break
        }
        case "content_block_start": {
          const index = payload["index"]
          const block = payload["content_block"]
          if (typeof index === "number" && isRecord(block) && !slots.has(index)) open(index, block, out)
          break
        }
        case "content_block_delta": {
          const index = payload["index"]
          const d = payload["delta"]
          const slot = typeof index === "number" ? slots.get(index) : undefined
          if (slot !== undefined && isRecord(d)) delta(slot, d, out)
          break
        }
        case "content_block_stop": {
          const index = payload["index"]
          const slot = typeof index === "number" ? slots.get(index) : undefined
          if (slot !== undefined) endBlock(slot, out)
          break
        }
        case "message_delta": {
          const d = payload["delta"]
          if (isRecord(d) && typeof d["stop_reason"] === "string") stopReason = d["stop_reason"]
          readUsage(payload["usage"])
          break
        }
        case "error": {
          const error = isRecord(payload["error"]) ? payload["error"] : payload
          const errorType = typeof error["type"] === "string" ? error["type"] : ""
          const message = typeof error["message"] === "string" && error["message"] !== ""
            ? error["message"]
            : "provider reported an error"
          const code = codeForErrorType(errorType, message)
          const raw = errorType === "" ? {} : { providerCode: errorType }
          if (!emitted) return LlmError.providerError(code, message, { provider, ...raw })
          close(out, { kind: "error", message, code, ...raw })
          return "done"
        }
        default:
          break
      }
      if (out.length > before) emitted = true
      return "more"
    },
    end: (out) => {
      close(out, stopReason === undefined ? { kind: "stop" } : mapStopReason(stopReason))
      return undefined
    }
  }
}

/**
 * Decodes a Messages SSE body into chunks.
 *
 * @since 0.1.0
 * @category response
 */
export const decodeResponse = (provider: string) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamChunk.StreamChunk, E | LlmError.ProviderError, R> =>
  Sse.decodeTranslate({ provider, isTerminal: isMessageStop, terminalName: "message_stop" }, () => makeTranslator(provider))(
    bytes
  )

// ---------------------------------------------------------------------------------------------
// Adapter and layers

/**
 * Builds the adapter value (register it with the `Llm` service, or provide it via {@link layer}).
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
    const url = HttpEdge.joinUrl(resolved.baseUrl, "v1/messages")
    const auth: HttpEdge.Auth = { scheme: "header", header: "x-api-key", key: resolved.apiKey }
    const decoder = decodeResponse(resolved.provider)
    return {
      providers: [{ id: resolved.provider, name: resolved.displayName }],
      models: resolved.models,
      stream: (request) =>
        Stream.suspend(() => {
          const body = buildBody(resolved, request)
          if (Result.isFailure(body)) return Stream.fail(body.failure)
          return HttpEdge.stream(client, {
            provider: resolved.provider,
            url,
            headers: resolved.headers,
            auth,
            body: body.success,
            secretHeaders: options.secretHeaders
          }).pipe(decoder)
        })
    } satisfies LlmAdapter.LlmAdapter
  })

/**
 * Reads the configuration from the environment: `ANTHROPIC_API_KEY` (`Config.redacted`,
 * required) and `ANTHROPIC_BASE_URL` (optional); explicit overrides win.
 *
 * @since 0.1.0
 * @category config
 */
export const config = (overrides: Partial<Options> = {}): Config.Config<Options> =>
  Config.all({
    apiKey: overrides.apiKey === undefined
      ? Config.Redacted("ANTHROPIC_API_KEY")
      : Config.succeed(overrides.apiKey),
    baseUrl: Config.option(Config.String("ANTHROPIC_BASE_URL"))
  }).pipe(
    Config.map(({ apiKey, baseUrl }) => ({
      ...overrides,
      apiKey,
      baseUrl: overrides.baseUrl ?? Option.getOrUndefined(baseUrl)
    }))
  )

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
 * The adapter as a Layer from the environment (see {@link config}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  overrides: Partial<Options> = {}
): Layer.Layer<LlmAdapter.Adapter, Config.ConfigError> =>
  Layer.effect(LlmAdapter.Adapter, Effect.flatMap(config(overrides), make))
