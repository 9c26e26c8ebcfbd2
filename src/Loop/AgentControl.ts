/**
 * The control surface of an agent (L-1..L-5) as seen by tools, hooks and embedders. The full
 * `Agent` handle (in `Agent.ts`) extends it with status, session and disposal.
 *
 * Every verb validates its input synchronously as lossless JSON (a failure is an
 * {@link AgentError} and nothing is queued or logged), then returns. None waits for the turn.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import type { Json } from "../Llm/Json.js"
import type { MessageSource, SessionId } from "../Llm/Message.js"

/**
 * Agent verb failures: `INVALID_INPUT` (not lossless JSON, L-1), `DISPOSED` (L-8).
 *
 * @since 0.1.0
 * @category errors
 */
export class AgentError extends Schema.TaggedError<AgentError>()("AgentError", {
  code: Schema.Literals(["INVALID_INPUT", "DISPOSED"]),
  message: Schema.String
}) {}

/**
 * Options of `send` and `steer`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SendOptions {
  readonly source?: MessageSource
}

/**
 * Options of `inject`.
 *
 * @since 0.1.0
 * @category models
 */
export interface InjectOptions {
  readonly source?: MessageSource
  /** durable, model-hidden state carried on the `context/message` event */
  readonly meta?: Json
}

/**
 * The verbs of an agent.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentControl {
  readonly id: SessionId
  /** queue a prompt (L-1) */
  readonly send: (content: ReadonlyArray<ContentBlock>, options?: SendOptions) => Effect.Effect<void, AgentError>
  /** steer the running turn, or `send` when not running (L-2) */
  readonly steer: (content: ReadonlyArray<ContentBlock>, options?: SendOptions) => Effect.Effect<void, AgentError>
  /** add model-visible context without running the model (L-3) */
  readonly inject: (content: ReadonlyArray<ContentBlock>, options?: InjectOptions) => Effect.Effect<void, AgentError>
  /** cancel the running work and queued input (L-4); reason defaults to "cancelled" */
  readonly cancel: (reason?: string) => Effect.Effect<void>
}
