/**
 * Typed LLM errors with canonical codes (§4, E-1..E-4), the HTTP status mapping shared by every
 * adapter, the `Retry-After` parser and the context-overflow detector.
 *
 * Every error carries a stable `code` distinct from its `message` (E-1). Callers route on `code`
 * (or `_tag`), never on message text.
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"
import * as Schema from "effect/Schema"

/**
 * The canonical codes of model-request failures (E-2), a closed set:
 * - `AUTH`, `RATE_LIMIT`, `SERVER`, `CONTEXT_WINDOW_EXCEEDED`, `INVALID_REQUEST`: HTTP status or
 *   provider error classes, on either failure path (C-4);
 * - `EMPTY_RESPONSE`, `STREAM_CLOSED`, `MALFORMED_RESPONSE`, `TIMEOUT`, `TRANSPORT`: the wire;
 * - `UNKNOWN_MODEL` (a provider's 404 / `not_found` about the model), `UNSUPPORTED_OPTION` (an option
 *   a profile cannot send, C-8), `INVALID_REPLAY_STATE` (C-7);
 * - `ABORTED` (loop side), `UNKNOWN` (a non-Error value was thrown), `SCRIPT_EXHAUSTED` (the
 *   scripted adapter ran out of replies), `OUTPUT_LIMIT` (loop side: one step streamed more than
 *   the agent's `maxOutputBytes`; the stream was cut).
 *
 * [DECISION] There is no `MISSING_API_KEY` code: a missing key is configuration, not a model
 * request. It fails the adapter's layer construction with `ConfigError.MissingData` naming the
 * variable to set (`DEEPSEEK_API_KEY`, …), before any request exists, and the CLI reports it as a
 * usage error naming that variable.
 *
 * @since 0.1.0
 * @category models
 */
export const canonicalCodes = [
  "AUTH",
  "RATE_LIMIT",
  "SERVER",
  "CONTEXT_WINDOW_EXCEEDED",
  "INVALID_REQUEST",
  "EMPTY_RESPONSE",
  "STREAM_CLOSED",
  "MALFORMED_RESPONSE",
  "TIMEOUT",
  "TRANSPORT",
  "UNKNOWN_MODEL",
  "UNSUPPORTED_OPTION",
  "INVALID_REPLAY_STATE",
  "ABORTED",
  "UNKNOWN",
  "SCRIPT_EXHAUSTED",
  "OUTPUT_LIMIT"
] as const

/**
 * One of {@link canonicalCodes}.
 *
 * @since 0.1.0
 * @category models
 */
export type CanonicalCode = typeof canonicalCodes[number]

/**
 * `HTTP_<status>`: any other non-2xx status (E-2).
 *
 * @since 0.1.0
 * @category models
 */
export type HttpStatusCode = `HTTP_${number}`

/**
 * The documented open fallback: an unknown provider error code or class, upper-cased with every
 * character outside `[A-Z0-9_]` replaced by `_` (e.g. `mystery_error` → `MYSTERY_ERROR`), as E-2
 * does for unknown finish reasons. Only {@link providerCode} makes one, so a misspelled canonical
 * code does not compile.
 *
 * @since 0.1.0
 * @category models
 */
export type ProviderCode = string & Brand.Brand<"ProviderCode">

/**
 * The code of a {@link ProviderError}: canonical, `HTTP_<status>`, or the provider-code fallback.
 *
 * @since 0.1.0
 * @category models
 */
export type ProviderErrorCode = CanonicalCode | HttpStatusCode | ProviderCode

const ProviderCodeSchema = Schema.String.check(Schema.isPattern(/^[A-Z][A-Z0-9_]*$/)).pipe(Schema.brand("ProviderCode"))

/**
 * Schema of {@link ProviderErrorCode}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProviderErrorCode: Schema.Codec<ProviderErrorCode, string> = Schema.Union([
  Schema.Literals(canonicalCodes),
  Schema.TemplateLiteral(["HTTP_", Schema.Number]),
  ProviderCodeSchema
])

const canonicalSet: ReadonlySet<string> = new Set(canonicalCodes)

/**
 * The fallback code for an unknown provider code (see {@link ProviderCode}); an empty or
 * symbol-only value gives `PROVIDER_ERROR`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const providerCode = (raw: string): ProviderCode => {
  const upper = raw.trim().toUpperCase().replace(/[^A-Z0-9_]/g, "_").replace(/^[^A-Z]+/, "")
  return (upper === "" ? "PROVIDER_ERROR" : upper) as ProviderCode
}

/**
 * Reads any string as a {@link ProviderErrorCode}: a canonical code or `HTTP_<status>` as itself,
 * anything else through {@link providerCode}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toCode = (raw: string): ProviderErrorCode => {
  if (canonicalSet.has(raw)) return raw as CanonicalCode
  if (/^HTTP_\d+$/.test(raw)) return raw as HttpStatusCode
  return providerCode(raw)
}

/**
 * A failure at the adapter boundary: HTTP status, transport, protocol or provider-reported error.
 * This is a *model-request failure* (C-11): request recovery (L-20) may act on it. `providerCode`
 * keeps the provider's own error code (or class) verbatim when the failure came from one; the
 * `message` is the provider's message.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  code: ProviderErrorCode,
  message: Schema.String,
  provider: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.Number),
  providerCode: Schema.optionalKey(Schema.String),
  retryAfterMillis: Schema.optionalKey(Schema.Number),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * Registry codes (C-9, C-10).
 *
 * @since 0.1.0
 * @category models
 */
export type RegistryErrorCode = "NO_ADAPTER" | "DUPLICATE_ADAPTER" | "INVALID_ADAPTER" | "INVALID_CATALOG"

/**
 * A routing failure: registration rejected or no adapter for a provider. `NO_ADAPTER` during a
 * stream is a model-request failure (C-11).
 *
 * @since 0.1.0
 * @category errors
 */
export class RegistryError extends Schema.TaggedError<RegistryError>()("RegistryError", {
  code: Schema.Literals(["NO_ADAPTER", "DUPLICATE_ADAPTER", "INVALID_ADAPTER", "INVALID_CATALOG"]),
  message: Schema.String
}) {}

/**
 * The assembled stream cannot be read (A-8: an open block of a kind the deltas cannot build).
 *
 * @since 0.1.0
 * @category errors
 */
export class AssemblyError extends Schema.TaggedError<AssemblyError>()("AssemblyError", {
  code: Schema.Literal("UNASSEMBLABLE_BLOCK"),
  index: Schema.Number,
  kind: Schema.String,
  message: Schema.String
}) {}

/**
 * What a model stream may fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type LlmError = ProviderError | RegistryError

/**
 * Schema of {@link LlmError} (for logging and RPC).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LlmError = Schema.Union([ProviderError, RegistryError])

/**
 * Renders any failure value as a message (T-6): `error.message`, a thrown object's string
 * `message`, or `String(value)`; `<unprintable thrown value>` when none can be read (a hostile
 * proxy or a throwing `toString`).
 *
 * @since 0.1.0
 * @category utils
 */
export const messageOf = (value: unknown): string => {
  try {
    if (value instanceof Error) return value.message
    if (typeof value === "object" && value !== null && "message" in value) {
      const m = (value as { message: unknown }).message
      if (typeof m === "string") return m
    }
    return String(value)
  } catch {
    return "<unprintable thrown value>"
  }
}

/**
 * Builds a {@link ProviderError}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const providerError = (
  code: ProviderErrorCode,
  message: string,
  extra: {
    readonly provider?: string
    readonly status?: number
    readonly providerCode?: string
    readonly retryAfterMillis?: number
    readonly cause?: unknown
  } = {}
): ProviderError => new ProviderError({ code, message, ...extra })

// ---------------------------------------------------------------------------------------------
// Context-overflow detector (E-4)

const GAP = "[^]{0,40}?"
const overflowPatterns: ReadonlyArray<RegExp> = [
  /context[_\- ]length[_\- ]exceeded/i,
  /context[_\- ]window[_\- ](?:overflowed|overflow|exceeded)/i,
  /context[_\- ]window[_\- ]limit[_\- ]exceeded/i,
  /\bmax(?:imum)?\s+(?:(?:allowed|supported)\s+)?context\s+(?:length|window)\b/i,
  /\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+for\s+(?:(?:the|this)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b/i,
  /\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+(?:the|this)\s+model\b/i,
  new RegExp(
    `\\b(?:input|prompt|request|messages?)\\b${GAP}\\b(?:exceeds|exceeded|overflows|is\\s+larger\\s+than)\\b${GAP}(?:the\\s+)?(?:model(?:'s)?\\s+)?context\\s*(?:length|window)\\b`,
    "i"
  ),
  // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum" (fixture anthropic/error-400-prompt-too-long)
  /\bprompt\s+is\s+too\s+long:\s*\d+\s+tokens\s*>\s*\d+\s+maximum\b/i,
  // llama.cpp-family servers: "Requested tokens (9000) exceed context window of 8192",
  // "the request exceeds the available context size, try increasing it"
  new RegExp(
    `\\b(?:requested\\s+tokens|request|prompt|input)\\b${GAP}\\bexceeds?\\b${GAP}\\b(?:available\\s+)?context\\s+(?:window|size|length)\\b`,
    "i"
  )
]

/**
 * `true` when the text reports an excess tied to the model's *context* bound (E-4). Generic limits
 * ("temperature exceeds maximum allowed value", "context window size must be positive") are false.
 *
 * @since 0.1.0
 * @category utils
 */
export const isContextOverflow = (text: string): boolean => overflowPatterns.some((re) => re.test(text))

// ---------------------------------------------------------------------------------------------
// HTTP mapping (E-2, E-3)

/**
 * The fields of a provider's JSON error body that classification reads.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorBodyDetail {
  readonly message?: string
  readonly type?: string
  readonly code?: string
}

/**
 * Reads `{error: {message?, type?, code?}}` (OpenAI, DeepSeek, Anthropic, OpenRouter) from a body
 * text, also `[{error: {…, status}}]` (Gemini), `{error: "<message>"}` (LM Studio) and a top-level
 * `{object: "error", message, type, code}` (vLLM); `undefined` when the body is not JSON or has
 * none of these.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseErrorBody = (body: string): ErrorBodyDetail | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  // Gemini wraps its error body in a one-element array
  if (Array.isArray(parsed)) parsed = parsed[0]
  if (typeof parsed !== "object" || parsed === null) return undefined
  const top = parsed as Record<string, unknown>
  const str = (v: unknown): string | undefined =>
    typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined
  let e: Record<string, unknown>
  if (typeof top["error"] === "object" && top["error"] !== null) e = top["error"] as Record<string, unknown>
  else if (typeof top["error"] === "string") e = { message: top["error"] } // LM Studio, some proxies
  else if (top["object"] === "error") e = top // vLLM: the error fields at the top level
  else return undefined
  const out: { message?: string; type?: string; code?: string } = {}
  const message = str(e["message"])
  const type = str(e["type"]) ?? str(e["status"])
  const code = str(e["code"])
  if (message !== undefined && message !== "") out.message = message
  if (type !== undefined) out.type = type
  if (code !== undefined) out.code = code
  return out
}

/**
 * The canonical code for a non-2xx status (E-2). Only 400 consults the overflow detector.
 *
 * @since 0.1.0
 * @category utils
 */
export const codeForStatus = (status: number, detail: ErrorBodyDetail | undefined): ProviderErrorCode => {
  if (status === 401 || status === 403) return "AUTH"
  if (status === 429) return "RATE_LIMIT"
  if (status >= 500) return "SERVER"
  const text = [detail?.code, detail?.type, detail?.message].filter((s) => s !== undefined).join(" ")
  if (status === 400) return isContextOverflow(text) ? "CONTEXT_WINDOW_EXCEEDED" : "INVALID_REQUEST"
  if (status === 404 && isUnknownModel(text)) return "UNKNOWN_MODEL"
  return `HTTP_${status}`
}

/**
 * `true` when a not-found text is about the model (`model_not_found`, "The model `x` does not
 * exist", "model not found"): a 404 about the model is `UNKNOWN_MODEL`, any other 404 `HTTP_404`.
 *
 * @since 0.1.0
 * @category utils
 */
export const isUnknownModel = (text: string): boolean =>
  /model[_\- ]not[_\- ]found/i.test(text) ||
  /\bmodel\b[^]{0,80}?\b(?:does not exist|not found|is not (?:available|supported)|unknown)\b/i.test(text) ||
  /\b(?:unknown|invalid|no such)\s+model\b/i.test(text)

const classes: ReadonlyArray<readonly [CanonicalCode, ReadonlySet<string>]> = [
  ["RATE_LIMIT", new Set(["rate_limit_exceeded", "rate_limit_error", "rate_limited", "rate_limit", "too_many_requests", "insufficient_quota", "quota_exceeded", "resource_exhausted"])],
  ["SERVER", new Set(["server_error", "api_error", "internal_error", "internal_server_error", "overloaded_error", "overloaded", "service_unavailable", "service_unavailable_error", "unavailable", "timeout_error", "timeout", "bad_gateway", "upstream_error", "provider_error"])],
  ["AUTH", new Set(["authentication_error", "permission_error", "invalid_api_key", "unauthorized", "forbidden", "permission_denied", "unauthenticated"])],
  ["INVALID_REQUEST", new Set(["invalid_request_error", "invalid_request", "bad_request", "tool_use_failed", "invalid_argument", "invalid_prompt", "invalid_value", "context_length_exceeded"])],
  ["UNKNOWN_MODEL", new Set(["model_not_found"])]
]

const classOf = (raw: string | undefined, text: string): ProviderErrorCode | undefined => {
  if (raw === undefined || raw === "") return undefined
  if (/^\d{3}$/.test(raw)) return codeForStatus(Number(raw), { message: text })
  const key = raw.toLowerCase()
  for (const [code, names] of classes) if (names.has(key)) return code
  if (key === "not_found_error" || key === "not_found") return isUnknownModel(text) ? "UNKNOWN_MODEL" : "HTTP_404"
  if (key === "request_too_large") return "HTTP_413"
  return undefined
}

/**
 * The canonical code of a provider-reported error (one vocabulary for every adapter, E-2): an
 * in-band error payload or event (OpenAI-compatible `{"error":{code, type, message}}`, Anthropic
 * `{"type":"error","error":{type, message}}`) or a 200 body that is an error. In order: the E-4
 * overflow detector over code, type and message (C-5) → `CONTEXT_WINDOW_EXCEEDED`; a numeric code
 * is an HTTP status (`"429"` → `RATE_LIMIT`, `"503"` → `SERVER`, …); a known code, then a known
 * type (rate-limit, server/overloaded, auth, invalid-request, not-found classes); else the
 * {@link providerCode} fallback of the raw code (or type).
 *
 * @since 0.1.0
 * @category utils
 */
export const classifyProviderError = (detail: {
  readonly code?: string | undefined
  readonly type?: string | undefined
  readonly message?: string | undefined
}): ProviderErrorCode => {
  const text = [detail.code, detail.type, detail.message].filter((s) => s !== undefined).join(" ")
  if (isContextOverflow(text)) return "CONTEXT_WINDOW_EXCEEDED"
  const message = detail.message ?? ""
  return classOf(detail.code, message) ?? classOf(detail.type, message) ??
    providerCode(detail.code ?? detail.type ?? "PROVIDER_ERROR")
}

/**
 * Parses a `Retry-After` value (delta seconds or an HTTP date) into milliseconds from `now`.
 * Also understands `retry-after-ms`-style millisecond values when `unit` is `"ms"`.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseRetryAfter = (
  value: string | undefined,
  now: number,
  unit: "s" | "ms" = "s"
): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (trimmed === "") return undefined
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const n = Number(trimmed)
    return Math.round(unit === "s" ? n * 1000 : n)
  }
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now)
}

/**
 * Classifies a non-2xx provider response (E-2, E-3): the message is the body's `error.message`
 * when it has one, else `API error (HTTP <status>)`; a non-JSON or message-less body never masks
 * the status-derived code.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromHttpResponse = (options: {
  readonly status: number
  readonly body: string
  readonly provider?: string
  readonly retryAfterMillis?: number | undefined
}): ProviderError => {
  const detail = parseErrorBody(options.body)
  const code = codeForStatus(options.status, detail)
  const message = detail?.message ?? `API error (HTTP ${options.status})`
  return new ProviderError({
    code,
    message,
    status: options.status,
    ...(options.provider === undefined ? {} : { provider: options.provider }),
    ...(options.retryAfterMillis === undefined ? {} : { retryAfterMillis: options.retryAfterMillis })
  })
}

/**
 * Codes that may be retried while no chunk of the attempt has been emitted (E-6, DEC-3).
 *
 * @since 0.1.0
 * @category utils
 */
export const isRetryable = (error: LlmError): boolean =>
  error._tag === "ProviderError" &&
  (error.code === "RATE_LIMIT" || error.code === "SERVER" || error.code === "TRANSPORT" ||
    error.code === "STREAM_CLOSED" || error.code === "TIMEOUT")
