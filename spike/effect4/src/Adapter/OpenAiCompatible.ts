/**
 * The OpenAI-compatible adapter, Effect 4 port of `src/Adapter/OpenAiCompatible.ts` (spike, issue 27):
 * the request body and headers, the translator (unchanged, pure) and `decodeResponse`. Cut for the
 * spike: the profiles table and their `Config` resolution (a `Resolved` is given), the Layers.
 */
import type * as HttpClient from "effect/http/HttpClient"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as LlmError from "../Llm/LlmError.js"
import type * as Message from "../Llm/Message.js"
import * as StreamChunk from "../Llm/StreamChunk.js"
import * as HttpEdge from "./HttpEdge.js"
import * as Sse from "./Sse.js"

/** What the v3 `resolve` makes of a profile and its options (the fields the hot path reads). */
export interface Resolved {
  readonly provider: string
  readonly url: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly reasoningFields: ReadonlyArray<string>
  readonly sendReasoningContent: boolean
  readonly thinking?: string | undefined
  readonly reasoningEffort?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly userAgent?: string | undefined
  readonly profile: { readonly maxTokensField: string; readonly sessionHeader?: string | undefined }
}

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
 * set `thinking`, `reasoning_effort`, `tools` (non-empty), `temperature`, the output cap, `stop`.
 * Never a `null` for an absent option.
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
    resolved.userAgent ?? HttpEdge.userAgent
  )
}

// ---------------------------------------------------------------------------------------------
// Response (P-4..P-8)

const isRecord = (u: unknown): u is JsonRecord => typeof u === "object" && u !== null && !Array.isArray(u)

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
// Adapter

/** The adapter's streaming entry point (the v3 `LlmAdapter.stream`). */
export interface Adapter {
  readonly stream: (request: Message.GenerateOptions) => Stream.Stream<StreamChunk.StreamChunk, LlmError.ProviderError>
}

/** The adapter over an HTTP client (undici in the benches, as the v3 default client). */
export const make = (resolved: Resolved, client: HttpClient.HttpClient): Adapter => {
  const auth: HttpEdge.Auth | undefined = resolved.apiKey === undefined
    ? undefined
    : { scheme: "bearer", key: resolved.apiKey }
  const decoder = decodeResponse(resolved.reasoningFields, resolved.provider)
  return {
    stream: (request) =>
      Stream.suspend(() =>
        HttpEdge.stream(client, {
          provider: resolved.provider,
          url: resolved.url,
          headers: buildHeaders(resolved, request),
          auth,
          body: buildBody(resolved, request)
        }).pipe(decoder)
      )
  }
}
