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
import type * as ContentBlock from "../Llm/ContentBlock.js"
import type * as Json from "../Llm/Json.js"
import type * as Message from "../Llm/Message.js"
import type * as StreamChunk from "../Llm/StreamChunk.js"

/**
 * What opened a turn (open union, keyed by `kind`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnTriggerMap {
  readonly message: { readonly kind: "message"; readonly source: Message.MessageSource }
  readonly injection: { readonly kind: "injection"; readonly source: Message.MessageSource }
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
}

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
