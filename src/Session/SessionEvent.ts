/**
 * The session event vocabulary (S-1, S-2): the envelope `{type, seq, time, data}` plus, on surface
 * types only, `surfaceOp` and `sourceEventSeqs`; the merge-extensible {@link SessionEventMap} of
 * core event payloads; the open `TurnTrigger` and `TurnEndReason` unions; the request header.
 *
 * Extending: declare a new event type by merging into {@link SessionEventMap}
 *
 * ```ts
 * declare module "effect-harness/Session/SessionEvent" {
 *   interface SessionEventMap { "compact/start": { readonly turn: number } }
 * }
 * ```
 *
 * Unknown types load, persist and round-trip verbatim (any lossless-JSON `data`); projection
 * yields nothing for them.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import * as Message from "../Llm/Message.js"
import * as StreamChunk from "../Llm/StreamChunk.js"

/**
 * What opened a turn (open union, keyed by `kind`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnTriggerMap {
  readonly message: { readonly kind: "message"; readonly source: Message.MessageSource }
  readonly injection: { readonly kind: "injection"; readonly source: Message.MessageSource }
  /** a manual compaction requested while idle opens its own turn (K-10) */
  readonly compaction: { readonly kind: "compaction"; readonly source: Message.MessageSource }
  /** an interrupted turn continued under its own number (DEC-16, issue 29) */
  readonly resume: { readonly kind: "resume"; readonly source: Message.MessageSource }
}

/**
 * @since 0.1.0
 * @category models
 */
export type TurnTrigger = TurnTriggerMap[keyof TurnTriggerMap]

/**
 * Why a turn ended (L-29; open union, keyed by `kind`). Exactly one per turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnEndReasonMap {
  readonly completed: { readonly kind: "completed" }
  readonly "max-tokens": { readonly kind: "max-tokens" }
  readonly aborted: { readonly kind: "aborted"; readonly reason?: string }
  readonly error: { readonly kind: "error"; readonly step: number; readonly message: string; readonly code?: string }
  readonly disposed: { readonly kind: "disposed" }
  readonly rejected: { readonly kind: "rejected"; readonly reason: string }
  readonly interrupted: { readonly kind: "interrupted" }
  /** the per-turn step budget ran out (`--max-steps`); the next prompt continues the session */
  readonly "max-steps": { readonly kind: "max-steps"; readonly steps: number }
}

/**
 * @since 0.1.0
 * @category models
 */
export type TurnEndReason = TurnEndReasonMap[keyof TurnEndReasonMap]

/**
 * The full request header snapshot logged in `request/header` (S-18..S-20).
 *
 * @since 0.1.0
 * @category models
 */
export interface EpochHeader {
  readonly config: Message.LlmCallConfig
  readonly system?: string
  readonly tools?: ReadonlyArray<Message.ToolSchema>
  readonly messagePrefix?: ReadonlyArray<Message.Message>
}

/**
 * A structured error attached to a tool result (`{name, code}`; model-hidden).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResultError {
  readonly name: string
  readonly code: string
}

/**
 * What started a compaction (K-3).
 *
 * @since 0.1.0
 * @category models
 */
export type CompactTrigger = "threshold" | "overflow" | "manual"

/**
 * Core event payloads keyed by event type (S-1). Merge-extensible.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionEventMap {
  readonly "turn/start": { readonly turn: number; readonly trigger: TurnTrigger }
  readonly "turn/end": { readonly turn: number; readonly reason: TurnEndReason }
  readonly "step/start": { readonly turn: number; readonly step: number }
  readonly "step/end": { readonly turn: number; readonly step: number }
  readonly "user/message": {
    readonly content: ReadonlyArray<ContentBlock.ContentBlock>
    readonly source: Message.MessageSource
  }
  readonly "prompt/blocked": {
    readonly content: ReadonlyArray<ContentBlock.ContentBlock>
    readonly source: Message.MessageSource
    readonly reason: string
  }
  readonly "context/message": {
    readonly content: ReadonlyArray<ContentBlock.ContentBlock>
    readonly source: Message.MessageSource
    readonly meta?: Json.Json
  }
  readonly "assistant/chunk": { readonly turn: number; readonly step: number; readonly chunk: StreamChunk.StreamChunk }
  readonly "assistant/message": {
    readonly turn: number
    readonly step: number
    readonly content: ReadonlyArray<ContentBlock.ContentBlock>
    readonly provenance: Message.Provenance
    readonly usage?: Message.TokenUsage
    /** the request's cost in USD at the model catalog's prices, when priced (issue 19; absent in older logs) */
    readonly cost?: number
  }
  readonly "tool/call": {
    readonly turn: number
    readonly step: number
    readonly callId: ContentBlock.CallId
    readonly name: string
    readonly arguments: string
  }
  readonly "tool/result": {
    readonly turn: number
    readonly step: number
    readonly callId: ContentBlock.CallId
    readonly content: ReadonlyArray<ContentBlock.ContentBlock>
    readonly isError: boolean
    readonly error?: ToolResultError
    readonly meta?: Json.Json
  }
  readonly "steering/message": {
    readonly turn: number
    readonly content: ReadonlyArray<ContentBlock.ContentBlock>
    readonly source: Message.MessageSource
  }
  readonly "request/header": { readonly header: EpochHeader; readonly reason: "initial" | "resume" | "change" }
  readonly "todo/write": {
    readonly todos: ReadonlyArray<{ readonly content: string; readonly status: "pending" | "in_progress" | "completed" }>
  }
  /** a compaction begins (K-10) */
  readonly "compact/start": {
    readonly turn: number
    readonly trigger: CompactTrigger
    readonly pressureTokens: number
    readonly contextWindow: number
  }
  /**
   * the summary request and its answer (K-7, K-8, K-10); `range` = the first and last shadowed
   * surface node (the replace's `start`/`end`), `shadowedSeqs` = the event seqs the summary covers
   */
  readonly "compact/summary": {
    readonly turn: number
    readonly provider: string
    readonly model: string
    readonly maxTokens: number
    readonly instruction: string
    readonly shadowedSeqs: readonly [number, number]
    readonly range: { readonly start: number; readonly end: number }
    readonly shadowedTokens: number
    readonly summary: string
    readonly rawOutput: string
    readonly usage?: Message.TokenUsage
    /** the summary request's cost in USD, when priced (issue 19; absent in older logs) */
    readonly cost?: number
    readonly droppedCitations: number
  }
  /** a compaction ends (K-10, K-11, K-12); `error` when it failed or was interrupted */
  readonly "compact/end": {
    readonly turn: number
    readonly pressureBefore: number
    readonly pressureAfter: number
    readonly error?: { readonly code: string; readonly message: string }
  }
  /** a one-time notice about the model (K-1: an unknown model runs on the default window) */
  readonly "model/notice": {
    readonly provider: string
    readonly model: string
    readonly contextWindow: number
    readonly message: string
  }
  /**
   * where the session runs (DEC-16): logged right after `turn/start` when it differs from the last
   * logged one; resume, continue, fork and the resume hint restore it (`store` and `baseUrl` as the
   * embedder names them; the CLI logs `jsonl`/`sqlite` and the provider's URL)
   */
  readonly "session/route": {
    readonly provider: string
    readonly model: string
    readonly baseUrl?: string
    readonly store?: string
    readonly cwd?: string
  }
  /**
   * an interrupted turn continues (DEC-16): the steps before `fromStep` are kept; `superseded` names
   * the step whose partial answer (its logged chunks, no `assistant/message`) is requested again
   */
  readonly "turn/resume": {
    readonly turn: number
    readonly fromStep: number
    readonly superseded?: { readonly step: number; readonly chunks: number }
  }
  /**
   * the decision about one tool call of a resumed turn that has no real logged result (DEC-16):
   * `rerun` runs it again (its new result replaces the synthetic one on the surface), `report` keeps
   * the result saying its effect is unknown; `by` says who decided
   */
  readonly "tool/in-doubt": {
    readonly turn: number
    readonly step: number
    readonly callId: ContentBlock.CallId
    readonly name: string
    readonly decision: "rerun" | "report"
    readonly by: "not-started" | "read-only" | "policy" | "user"
  }
  /**
   * The user answered an approval question (issue 34): which call, the answer, who gave it, the
   * rule an "always" answer saved and where, and how long the call waited for the answer.
   */
  readonly "approval/answer": {
    readonly callId: string
    readonly tool: string
    readonly answer: "yes" | "no" | "always-session" | "always-project" | "cancelled"
    readonly by: string
    readonly rule?: string
    readonly waitMs: number
  }
}

/**
 * Where a session runs, as `session/route` logs it (DEC-16).
 *
 * @since 0.1.0
 * @category models
 */
export type SessionRoute = SessionEventMap["session/route"]

/**
 * An event type name (core or declared by merging).
 *
 * @since 0.1.0
 * @category models
 */
export type EventType = keyof SessionEventMap & string

/**
 * The surface types (S-2): exactly these may carry surface metadata.
 *
 * @since 0.1.0
 * @category models
 */
export type SurfaceType = "user/message" | "assistant/message" | "tool/result" | "context/message" | "steering/message"

/**
 * The surface types as a set.
 *
 * @since 0.1.0
 * @category models
 */
export const surfaceTypes: ReadonlySet<string> = new Set<SurfaceType>([
  "user/message",
  "assistant/message",
  "tool/result",
  "context/message",
  "steering/message"
])

/**
 * How a surface event enters the surface (S-6): appended, or replacing the nodes from `start` to
 * `end` (inclusive, by position).
 *
 * @since 0.1.0
 * @category models
 */
export type SurfaceOp = "append" | { readonly op: "replace"; readonly start: number; readonly end: number }

/**
 * One logged event of type `T`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Envelope<T extends string, D> {
  readonly type: T
  readonly seq: number
  readonly time: number
  readonly data: D
  readonly surfaceOp?: SurfaceOp
  readonly sourceEventSeqs?: ReadonlyArray<number>
}

/**
 * `true` when `value` has an event's envelope: an object with a non-empty string `type`, numeric `seq`
 * and `time`, and a `data` key. The one narrowing from a checked record to {@link SessionEvent}:
 * `Validate` and the stores' record checks call it after they validated payload and surface rules.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEnvelope = (value: unknown): value is SessionEvent =>
  typeof value === "object" && value !== null &&
  "type" in value && typeof value.type === "string" && value.type.length > 0 &&
  "seq" in value && typeof value.seq === "number" &&
  "time" in value && typeof value.time === "number" &&
  "data" in value

/**
 * A session event of a known (core or merged) type. Unknown types exist at run time too and are
 * passed through verbatim (V-2); treat `type` as open when switching.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionEvent = { readonly [K in EventType]: Envelope<K, SessionEventMap[K]> }[EventType]

/**
 * An event of a given type.
 *
 * @since 0.1.0
 * @category models
 */
export type EventOf<K extends EventType> = Envelope<K, SessionEventMap[K]>

/**
 * What a caller hands to `Session.append`: the envelope minus `seq` and `time` (assigned).
 *
 * @since 0.1.0
 * @category models
 */
export type AppendInput = {
  readonly [K in EventType]: {
    readonly type: K
    readonly data: SessionEventMap[K]
    readonly surfaceOp?: SurfaceOp
    readonly sourceEventSeqs?: ReadonlyArray<number>
  }
}[EventType]

/**
 * The session header (S-12): outside the log, never model-visible, immutable.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionHeader {
  readonly version: 0
  readonly id: Message.SessionId
  readonly createdAt: number
  readonly cwd?: string
  readonly parentSession?: Message.SessionId
  readonly seedLength?: number
}

/**
 * The on-disk format version (S-12, D-4).
 *
 * @since 0.1.0
 * @category constants
 */
export const FORMAT_VERSION = 0 as const

/**
 * Narrowing helper: `true` when the event has the given type.
 *
 * @since 0.1.0
 * @category guards
 */
export const is = <K extends EventType>(type: K) => (event: { readonly type: string }): event is EventOf<K> =>
  event.type === type

// ---------------------------------------------------------------------------------------------
// Schemas (S-1). Built from the `src/Llm` schemas. Known payloads are validated structurally
// (every declared field and its type; undeclared extra keys are kept verbatim); open unions
// (`TurnTrigger`, `TurnEndReason`, content blocks, sources) accept unknown members that are
// lossless JSON. Unknown event types are not described here: any lossless-JSON `data` is
// accepted for them (see `Validate`).

const NonNegativeInt = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
const NonEmpty = Schema.String.check(Schema.isMinLength(1))

const openMember = <A>(known: ReadonlySet<string>, identifier: string): Schema.Codec<A> =>
  Schema.declare(
    (u: unknown): u is A =>
      typeof u === "object" && u !== null && !Array.isArray(u) &&
      typeof (u as Record<string, unknown>)["kind"] === "string" &&
      !known.has((u as Record<string, string>)["kind"] as string) && Json.isJson(u),
    { identifier }
  )

/**
 * Schema of {@link TurnTrigger} (open: an unknown `kind` passes through when lossless JSON).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnTriggerSchema: Schema.Codec<TurnTrigger> = Schema.Union([
  Schema.Struct({ kind: Schema.Literals(["message", "injection"]), source: Message.MessageSource }),
  openMember<TurnTrigger>(new Set(["message", "injection"]), "ExtensionTurnTrigger")
]).annotate({ identifier: "TurnTrigger" })

/**
 * Schema of {@link TurnEndReason} (open).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnEndReasonSchema: Schema.Codec<TurnEndReason> = Schema.Union([
  Schema.Struct({ kind: Schema.Literals(["completed", "max-tokens", "disposed", "interrupted"]) }),
  Schema.Struct({ kind: Schema.Literal("aborted"), reason: Schema.optionalKey(Schema.String) }),
  Schema.Struct({
    kind: Schema.Literal("error"),
    step: NonNegativeInt,
    message: Schema.String,
    code: Schema.optionalKey(Schema.String)
  }),
  Schema.Struct({ kind: Schema.Literal("rejected"), reason: Schema.String }),
  openMember<TurnEndReason>(
    new Set(["completed", "max-tokens", "disposed", "interrupted", "aborted", "error", "rejected"]),
    "ExtensionTurnEndReason"
  )]).annotate({ identifier: "TurnEndReason" })

/**
 * Schema of the call config inside a logged header: `provider` and `model` must be non-empty (S-11).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HeaderConfigSchema: Schema.Codec<Message.LlmCallConfig> = Schema.Struct({
  provider: NonEmpty,
  model: NonEmpty,
  temperature: Schema.optionalKey(Schema.Number.check(Schema.isFinite())),
  maxTokens: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0))),
  stop: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * Schema of {@link EpochHeader}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EpochHeaderSchema = Schema.Struct({
  config: HeaderConfigSchema,
  system: Schema.optionalKey(Schema.String),
  tools: Schema.optionalKey(Schema.Array(Message.ToolSchema)),
  messagePrefix: Schema.optionalKey(Schema.Array(Message.Message))
}).annotate({ identifier: "EpochHeader" })

/**
 * Schema of assistant provenance inside the log: `provider` and `model` must be non-empty (S-11).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LoggedProvenanceSchema: Schema.Codec<Message.Provenance> = Schema.Struct({
  provider: NonEmpty,
  model: NonEmpty,
  replayState: Schema.optionalKey(Json.Json)
})

const Blocks = Schema.Array(ContentBlock.ContentBlock)
/** a cost in USD: finite, not negative */
const Cost = Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0))
const Source = Message.MessageSource

/**
 * Payload schemas of the core event types (S-1), keyed by type.
 *
 * @since 0.1.0
 * @category schemas
 */
export const payloadSchemas = {
  "turn/start": Schema.Struct({ turn: NonNegativeInt, trigger: TurnTriggerSchema }),
  "turn/end": Schema.Struct({ turn: NonNegativeInt, reason: TurnEndReasonSchema }),
  "step/start": Schema.Struct({ turn: NonNegativeInt, step: NonNegativeInt }),
  "step/end": Schema.Struct({ turn: NonNegativeInt, step: NonNegativeInt }),
  "user/message": Schema.Struct({ content: Blocks, source: Source }),
  "prompt/blocked": Schema.Struct({ content: Blocks, source: Source, reason: Schema.String }),
  "context/message": Schema.Struct({
    content: Blocks,
    source: Source,
    meta: Schema.optionalKey(Json.Json)
  }),
  "assistant/chunk": Schema.Struct({ turn: NonNegativeInt, step: NonNegativeInt, chunk: StreamChunk.StreamChunk }),
  "assistant/message": Schema.Struct({
    turn: NonNegativeInt,
    step: NonNegativeInt,
    content: Blocks,
    provenance: LoggedProvenanceSchema,
    usage: Schema.optionalKey(Message.TokenUsage),
    cost: Schema.optionalKey(Cost)
  }),
  "tool/call": Schema.Struct({
    turn: NonNegativeInt,
    step: NonNegativeInt,
    callId: ContentBlock.CallId,
    name: Schema.String,
    arguments: Schema.String
  }),
  "tool/result": Schema.Struct({
    turn: NonNegativeInt,
    step: NonNegativeInt,
    callId: ContentBlock.CallId,
    content: Blocks,
    isError: Schema.Boolean,
    error: Schema.optionalKey(Schema.Struct({ name: Schema.String, code: Schema.String })),
    meta: Schema.optionalKey(Json.Json)
  }),
  "steering/message": Schema.Struct({ turn: NonNegativeInt, content: Blocks, source: Source }),
  "request/header": Schema.Struct({
    header: EpochHeaderSchema,
    reason: Schema.Literals(["initial", "resume", "change"])
  }),
  "todo/write": Schema.Struct({
    todos: Schema.Array(Schema.Struct({
      content: Schema.String,
      status: Schema.Literals(["pending", "in_progress", "completed"])
    }))
  }),
  "compact/start": Schema.Struct({
    turn: NonNegativeInt,
    trigger: Schema.Literals(["threshold", "overflow", "manual"]),
    pressureTokens: NonNegativeInt,
    contextWindow: NonNegativeInt
  }),
  "compact/summary": Schema.Struct({
    turn: NonNegativeInt,
    provider: Schema.String,
    model: Schema.String,
    maxTokens: NonNegativeInt,
    instruction: Schema.String,
    shadowedSeqs: Schema.Tuple([NonNegativeInt, NonNegativeInt]),
    range: Schema.Struct({ start: NonNegativeInt, end: NonNegativeInt }),
    shadowedTokens: NonNegativeInt,
    summary: Schema.String,
    rawOutput: Schema.String,
    usage: Schema.optionalKey(Message.TokenUsage),
    cost: Schema.optionalKey(Cost),
    droppedCitations: NonNegativeInt
  }),
  "compact/end": Schema.Struct({
    turn: NonNegativeInt,
    pressureBefore: NonNegativeInt,
    pressureAfter: NonNegativeInt,
    error: Schema.optionalKey(Schema.Struct({ code: Schema.String, message: Schema.String }))
  }),
  "model/notice": Schema.Struct({
    provider: Schema.String,
    model: Schema.String,
    contextWindow: NonNegativeInt,
    message: Schema.String
  }),
  "session/route": Schema.Struct({
    provider: NonEmpty,
    model: NonEmpty,
    baseUrl: Schema.optionalKey(Schema.String),
    store: Schema.optionalKey(Schema.String),
    cwd: Schema.optionalKey(Schema.String)
  }),
  "turn/resume": Schema.Struct({
    turn: NonNegativeInt,
    fromStep: NonNegativeInt,
    superseded: Schema.optionalKey(Schema.Struct({ step: NonNegativeInt, chunks: NonNegativeInt }))
  }),
  "tool/in-doubt": Schema.Struct({
    turn: NonNegativeInt,
    step: NonNegativeInt,
    callId: ContentBlock.CallId,
    name: Schema.String,
    decision: Schema.Literals(["rerun", "report"]),
    by: Schema.Literals(["not-started", "read-only", "policy", "user"])
  }),
  "approval/answer": Schema.Struct({
    callId: Schema.String,
    tool: Schema.String,
    answer: Schema.Literals(["yes", "no", "always-session", "always-project", "cancelled"]),
    by: Schema.String,
    rule: Schema.optionalKey(Schema.String),
    waitMs: NonNegativeInt
  })
} as const

/**
 * The core event type names (S-1).
 *
 * @since 0.1.0
 * @category models
 */
export type CoreType = keyof typeof payloadSchemas

/**
 * `true` for a core event type (one with a payload schema).
 *
 * @since 0.1.0
 * @category guards
 */
export const isCoreType = (type: string): type is CoreType => Object.prototype.hasOwnProperty.call(payloadSchemas, type)

/**
 * Schema of {@link SurfaceOp}. (Exact-key checking is done by `Validate`.)
 *
 * @since 0.1.0
 * @category schemas
 */
export const SurfaceOpSchema: Schema.Codec<SurfaceOp> = Schema.Union([
  Schema.Literal("append"),
  Schema.Struct({ op: Schema.Literal("replace"), start: NonNegativeInt, end: NonNegativeInt })
])

/**
 * Schema of a stored event envelope, with the payload as an arbitrary lossless-JSON value (the persisted unit,
 * DEC-9). Full semantic validation of a log is `Validate.seed`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EnvelopeSchema = Schema.Struct({
  type: Schema.String,
  seq: NonNegativeInt,
  time: NonNegativeInt,
  data: Json.Json,
  surfaceOp: Schema.optionalKey(SurfaceOpSchema),
  sourceEventSeqs: Schema.optionalKey(Schema.Array(NonNegativeInt))
}).annotate({ identifier: "SessionEvent" })

/**
 * Schema of {@link SessionHeader} (S-12): version `0`, `cwd` absolute, `seedLength` a
 * non-negative integer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SessionHeaderSchema = Schema.Struct({
  version: Schema.Literal(0),
  id: Message.SessionId,
  createdAt: NonNegativeInt,
  cwd: Schema.optionalKey(
    Schema.String.check(Schema.makeFilter((s: string) => s.startsWith("/") || /^[A-Za-z]:[\\/]/.test(s) ? undefined : "cwd must be an absolute path"))
  ),
  parentSession: Schema.optionalKey(Message.SessionId),
  seedLength: Schema.optionalKey(NonNegativeInt)
}).annotate({ identifier: "SessionHeader" })
