/**
 * Messages and the request vocabulary (V-4..V-9): `Message` with assistant `provenance`, the open
 * `MessageSource` and `FinishReason` unions, disjoint `TokenUsage`, `ToolSchema`, `LlmCallConfig`
 * and `GenerateOptions`, and the branded `SessionId`.
 *
 * Open unions follow the pattern of {@link ContentBlock.ContentBlockMap}: a merge-extensible
 * `…Map` interface for types, a schema that validates known members strictly and passes any other
 * lossless-JSON member through verbatim.
 *
 * There is no `signal` field: cancellation is interruption of the fiber consuming the stream (DEC-1).
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"
import * as Schema from "effect/Schema"
import * as ContentBlock from "./ContentBlock.js"
import * as Json from "./Json.js"

/**
 * A session (and agent) id. A plain string at run time (V-10).
 *
 * @since 0.1.0
 * @category models
 */
export type SessionId = string & Brand.Brand<"SessionId">

/**
 * Schema of {@link SessionId}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SessionId = Schema.String.pipe(Schema.brand("SessionId"))

/**
 * Brands a plain string as a {@link SessionId} without validation.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sessionId = (id: string): SessionId => id as SessionId

const openMember = <A>(discriminant: "type" | "kind", known: ReadonlySet<string>, identifier: string) =>
  Schema.declare(
    (u: unknown): u is A =>
      typeof u === "object" && u !== null && !Array.isArray(u) &&
      typeof (u as Record<string, unknown>)[discriminant] === "string" &&
      !known.has((u as Record<string, string>)[discriminant] as string) && Json.isJson(u),
    { identifier }
  )

// ---------------------------------------------------------------------------------------------
// MessageSource

/**
 * The merge-extensible map of message sources, keyed by `kind` (V-5).
 *
 * @since 0.1.0
 * @category models
 */
export interface MessageSourceMap {
  readonly user: { readonly kind: "user" }
  readonly plugin: { readonly kind: "plugin"; readonly plugin: string }
}

/**
 * Who produced a piece of content. Omitted means `{kind: "user"}` (V-5).
 *
 * @since 0.1.0
 * @category models
 */
export type MessageSource = MessageSourceMap[keyof MessageSourceMap]

/**
 * Schema of {@link MessageSource} (open).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageSource: Schema.Codec<MessageSource> = Schema.Union([  Schema.Struct({ kind: Schema.Literal("user") }),
  Schema.Struct({ kind: Schema.Literal("plugin"), plugin: Schema.String }),
  openMember<MessageSource>("kind", new Set(["user", "plugin"]), "ExtensionMessageSource")]).annotate({ identifier: "MessageSource" })

/**
 * The default source, `{kind: "user"}`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const userSource: MessageSource = Object.freeze({ kind: "user" as const })

/**
 * A plugin source `{kind: "plugin", plugin}`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pluginSource = (plugin: string): MessageSource => ({ kind: "plugin", plugin })

// ---------------------------------------------------------------------------------------------
// FinishReason

/**
 * The merge-extensible map of finish reasons, keyed by `kind`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FinishReasonMap {
  readonly stop: { readonly kind: "stop" }
  readonly "tool-calls": { readonly kind: "tool-calls" }
  readonly "max-tokens": { readonly kind: "max-tokens" }
  readonly aborted: { readonly kind: "aborted" }
  readonly error: {
    readonly kind: "error"
    readonly message: string
    readonly code?: string
    /** the provider's own error code or class, verbatim, when a provider error ended the response */
    readonly providerCode?: string
  }
}

/**
 * Why a model response ended. An unknown kind is treated as success by the loop (V-2).
 *
 * @since 0.1.0
 * @category models
 */
export type FinishReason = FinishReasonMap[keyof FinishReasonMap]

/**
 * Schema of {@link FinishReason} (open).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason: Schema.Codec<FinishReason> = Schema.Union([  Schema.Struct({ kind: Schema.Literals(["stop", "tool-calls", "max-tokens", "aborted"]) }),
  Schema.Struct({
    kind: Schema.Literal("error"),
    message: Schema.String,
    code: Schema.optionalKey(Schema.String),
    providerCode: Schema.optionalKey(Schema.String)
  }),
  openMember<FinishReason>(
    "kind",
    new Set(["stop", "tool-calls", "max-tokens", "aborted", "error"]),
    "ExtensionFinishReason"
  )]).annotate({ identifier: "FinishReason" })

// ---------------------------------------------------------------------------------------------
// TokenUsage

/**
 * Disjoint token counts (V-6): `inputTokens` excludes cached input; billed input is
 * input + cacheRead + cacheWrite; `reasoningTokens` is a subset of `outputTokens`.
 * A count the provider did not report is absent, never 0.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
}

const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/**
 * Schema of {@link TokenUsage}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TokenUsage: Schema.Codec<TokenUsage> = Schema.Struct({
  inputTokens: Count,
  outputTokens: Count,
  cacheReadTokens: Schema.optionalKey(Count),
  cacheWriteTokens: Schema.optionalKey(Count),
  reasoningTokens: Schema.optionalKey(Count)
})

// ---------------------------------------------------------------------------------------------
// Message

/**
 * Where an assistant message came from (V-4): the provider route and model of the call, plus the
 * adapter-private `replayState` needed to send it back natively (C-7).
 *
 * @since 0.1.0
 * @category models
 */
export interface Provenance {
  readonly provider: string
  readonly model: string
  readonly replayState?: Json.Json
}

/**
 * Schema of {@link Provenance}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Provenance: Schema.Codec<Provenance> = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  replayState: Schema.optionalKey(Json.Json)
})

/**
 * Message roles. There is no `tool` role (V-1).
 *
 * @since 0.1.0
 * @category models
 */
export type Role = "system" | "user" | "assistant"

/**
 * A chat message: a role and content blocks; `provenance` only on routed assistant messages.
 *
 * @since 0.1.0
 * @category models
 */
export interface Message {
  readonly role: Role
  readonly content: ReadonlyArray<ContentBlock.ContentBlock>
  readonly provenance?: Provenance
}

/**
 * Encoded form of a {@link Message}.
 *
 * @since 0.1.0
 * @category models
 */
export interface MessageEncoded {
  readonly role: Role
  readonly content: ReadonlyArray<ContentBlock.ContentBlockEncoded>
  readonly provenance?: Provenance
}

/**
 * Schema of {@link Message}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message: Schema.Codec<Message, MessageEncoded> = Schema.Struct({
  role: Schema.Literals(["system", "user", "assistant"]),
  content: Schema.Array(ContentBlock.ContentBlock),
  provenance: Schema.optionalKey(Provenance)
})

/**
 * A user message.
 *
 * @since 0.1.0
 * @category constructors
 */
export const user = (content: ReadonlyArray<ContentBlock.ContentBlock> | string): Message => ({
  role: "user",
  content: typeof content === "string" ? [ContentBlock.text(content)] : content
})

/**
 * An assistant message, with provenance when given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const assistant = (
  content: ReadonlyArray<ContentBlock.ContentBlock> | string,
  provenance?: Provenance
): Message => {
  const blocks = typeof content === "string" ? [ContentBlock.text(content)] : content
  return provenance === undefined ? { role: "assistant", content: blocks } : { role: "assistant", content: blocks, provenance }
}

// ---------------------------------------------------------------------------------------------
// Tools and call configuration

/**
 * The model-facing description of a tool (V-7): name, description and a JSON Schema object for
 * its parameters. Host-only tool metadata never appears here.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSchema {
  readonly name: string
  readonly description: string
  readonly parameters: Json.JsonObject
}

/**
 * Schema of {@link ToolSchema}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolSchema: Schema.Codec<ToolSchema> = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  parameters: Json.JsonObject
})

/**
 * The routing and sampling part of a request.
 *
 * @since 0.1.0
 * @category models
 */
export interface LlmCallConfig {
  readonly provider: string
  readonly model: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly stop?: ReadonlyArray<string>
}

/**
 * Schema of {@link LlmCallConfig}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LlmCallConfig: Schema.Codec<LlmCallConfig> = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  temperature: Schema.optionalKey(Schema.Number.check(Schema.isFinite())),
  maxTokens: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0))),
  stop: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * Field-wise call-config equality (V-9): `stop` compares element-wise, and an absent `stop`
 * differs from any present list, including `[]`.
 *
 * @since 0.1.0
 * @category utils
 */
export const configEquals = (a: LlmCallConfig, b: LlmCallConfig): boolean => {
  if (a.provider !== b.provider || a.model !== b.model) return false
  if (a.temperature !== b.temperature || a.maxTokens !== b.maxTokens) return false
  if (a.stop === undefined || b.stop === undefined) return a.stop === b.stop
  return a.stop.length === b.stop.length && a.stop.every((s, i) => s === b.stop?.[i])
}

/**
 * A complete model request. No `signal`: interrupt the consuming fiber to cancel (DEC-1).
 * `sessionId` is a routing hint stamped by the loop; adapters may forward it (V-8).
 *
 * @since 0.1.0
 * @category models
 */
export interface GenerateOptions extends LlmCallConfig {
  readonly messages: ReadonlyArray<Message>
  readonly system?: string
  readonly tools?: ReadonlyArray<ToolSchema>
  readonly sessionId?: SessionId
}

/**
 * Schema of {@link GenerateOptions}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GenerateOptions: Schema.Codec<GenerateOptions, Omit<GenerateOptions, "messages" | "sessionId"> & {
  readonly messages: ReadonlyArray<MessageEncoded>
  readonly sessionId?: string
}> = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  temperature: Schema.optionalKey(Schema.Number.check(Schema.isFinite())),
  maxTokens: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0))),
  stop: Schema.optionalKey(Schema.Array(Schema.String)),
  messages: Schema.Array(Message),
  system: Schema.optionalKey(Schema.String),
  tools: Schema.optionalKey(Schema.Array(ToolSchema)),
  sessionId: Schema.optionalKey(SessionId)
})
