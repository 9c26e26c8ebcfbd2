/**
 * The optional approval service (T-3): a pre-execute `Ask` is put to it; only `"allow-once"`
 * lets the call proceed. `"reject"`, `"cancelled"`, `"unavailable"`, a failing service or no
 * service at all are denials, each with its own reason (see `ToolPipeline`).
 *
 * The service is optional: `ToolRuntime.layer` picks it up when an `Approval` is in its context
 * (e.g. `ToolRuntime.layer(...).pipe(Layer.provide(Approval.layer(ask)))`). A "remember my
 * answer" policy belongs to the service: it answers `"allow-once"` for calls it already approved.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { CallId } from "../Llm/ContentBlock.js"
import type { Json } from "../Llm/Json.js"
import type { SessionId } from "../Llm/Message.js"

/**
 * What the user is asked about.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalRequest {
  readonly agentId: SessionId
  readonly turn: number
  readonly step: number
  readonly callId: CallId
  readonly name: string
  /** the frozen arguments */
  readonly arguments: Json
  /** the `Ask` decision's reason */
  readonly reason?: string
}

/**
 * The answer.
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalDecision = "allow-once" | "reject" | "cancelled" | "unavailable"

/**
 * The approval service could not answer.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalError extends Schema.TaggedError<ApprovalError>()("ApprovalError", {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /** Stable code. */
  readonly code = "APPROVAL_FAILED" as const
}

/**
 * The service interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly ask: (request: ApprovalRequest) => Effect.Effect<ApprovalDecision, ApprovalError>
}

/**
 * The approval service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Approval extends Context.Service<Approval, Service>()("effect-harness/Loop/Approval") {}

/**
 * A layer answering with `ask`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (ask: Service["ask"]): Layer.Layer<Approval> => Layer.succeed(Approval, Approval.of({ ask }))
