/**
 * The raw chunk protocol (§2): the CLOSED union every adapter emits and the one
 * {@link BlockAssembler} folds.
 *
 * Adapter contract (C-1..C-11):
 * - C-1 `index` ties chunks to one block; indexes are allocated in first-seen order and reused for
 *   every delta of that block; blocks may interleave. `block-end` carries the complete,
 *   authoritative block.
 * - C-2 `usage` (if any) precedes `finish`; nothing follows `finish`. Adapters buffer both until the
 *   provider's end-of-stream marker.
 * - C-3 tool arguments stay raw JSON text; a parsed object from a library is re-stringified at
 *   `block-end`.
 * - C-4 two failure paths, handled identically by consumers: the stream fails (its typed error
 *   channel: transport, HTTP, protocol) or ends with `finish {kind: "error" | "aborted"}`.
 * - C-5 context overflow has one canonical code, `CONTEXT_WINDOW_EXCEEDED`, on either path.
 * - C-6 every provider HTTP request carries the attribution `user-agent` (see `Adapter/HttpEdge`).
 * - C-7 a successful `finish` may carry adapter-private lossless-JSON `replayState`; the `Llm`
 *   service forwards it back only to the same adapter instance.
 * - C-8 cancellation is interruption of the consuming fiber (DEC-1); an option the provider cannot
 *   honour fails loudly (`UNSUPPORTED_OPTION`).
 * - C-9..C-11 routing by provider, lazy lookup, failure provenance: see `Llm`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ContentBlock from "./ContentBlock.js"
import * as Json from "./Json.js"
import * as Message from "./Message.js"

/**
 * Opens a block at `index` with its kind.
 *
 * @since 0.1.0
 * @category models
 */
export interface BlockStart {
  readonly type: "block-start"
  readonly index: number
  readonly blockType: ContentBlock.ContentBlock["type"]
}

/**
 * Appends text to a text block.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextDelta {
  readonly type: "text-delta"
  readonly index: number
  readonly text: string
}

/**
 * Appends text to a reasoning block.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReasoningDelta {
  readonly type: "reasoning-delta"
  readonly index: number
  readonly text: string
}

/**
 * A tool-call fragment: the latest id (`""` when not yet known), the name once known, and a
 * fragment of the raw argument text.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallDelta {
  readonly type: "tool-call-delta"
  readonly index: number
  readonly id: ContentBlock.CallId
  readonly name?: string
  readonly argumentsDelta: string
}

/**
 * Closes the block at `index` with its complete, authoritative content.
 *
 * @since 0.1.0
 * @category models
 */
export interface BlockEnd {
  readonly type: "block-end"
  readonly index: number
  readonly block: ContentBlock.ContentBlock
}

/**
 * Token usage for the response; precedes `finish`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly type: "usage"
  readonly usage: Message.TokenUsage
}

/**
 * The last chunk of a response.
 *
 * @since 0.1.0
 * @category models
 */
export interface Finish {
  readonly type: "finish"
  readonly reason: Message.FinishReason
  readonly replayState?: Json.Json
}

/**
 * The closed chunk union (V-3): matched exhaustively; an unknown tag at run time is a defect.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamChunk = BlockStart | TextDelta | ReasoningDelta | ToolCallDelta | BlockEnd | Usage | Finish

const Index = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/**
 * Schema of {@link StreamChunk} (for logged chunks and wire decoding).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamChunk = Schema.Union([  Schema.Struct({ type: Schema.Literal("block-start"), index: Index, blockType: Schema.String }),
  Schema.Struct({ type: Schema.Literal("text-delta"), index: Index, text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("reasoning-delta"), index: Index, text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("tool-call-delta"),
    index: Index,
    id: ContentBlock.CallId,
    name: Schema.optionalKey(Schema.String),
    argumentsDelta: Schema.String
  }),
  Schema.Struct({ type: Schema.Literal("block-end"), index: Index, block: ContentBlock.ContentBlock }),
  Schema.Struct({ type: Schema.Literal("usage"), usage: Message.TokenUsage }),
  Schema.Struct({
    type: Schema.Literal("finish"),
    reason: Message.FinishReason,
    replayState: Schema.optionalKey(Json.Json)
  })]).annotate({ identifier: "StreamChunk" })

/**
 * Constructors for chunks, handy in adapters, scripts and tests.
 *
 * @since 0.1.0
 * @category constructors
 */
export const blockStart = (index: number, blockType: ContentBlock.ContentBlock["type"]): StreamChunk => ({
  type: "block-start",
  index,
  blockType
})

/** @since 0.1.0 @category constructors */
export const textDelta = (index: number, text: string): StreamChunk => ({ type: "text-delta", index, text })

/** @since 0.1.0 @category constructors */
export const reasoningDelta = (index: number, text: string): StreamChunk => ({
  type: "reasoning-delta",
  index,
  text
})

/** @since 0.1.0 @category constructors */
export const toolCallDelta = (index: number, id: string, argumentsDelta: string, name?: string): StreamChunk =>
  name === undefined
    ? { type: "tool-call-delta", index, id: ContentBlock.callId(id), argumentsDelta }
    : { type: "tool-call-delta", index, id: ContentBlock.callId(id), name, argumentsDelta }

/** @since 0.1.0 @category constructors */
export const blockEnd = (index: number, block: ContentBlock.ContentBlock): StreamChunk => ({
  type: "block-end",
  index,
  block
})

/** @since 0.1.0 @category constructors */
export const usage = (usage: Message.TokenUsage): StreamChunk => ({ type: "usage", usage })

/** @since 0.1.0 @category constructors */
export const finish = (reason: Message.FinishReason, replayState?: Json.Json): StreamChunk =>
  replayState === undefined ? { type: "finish", reason } : { type: "finish", reason, replayState }
