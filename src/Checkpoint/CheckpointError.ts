/**
 * The typed failures of checkpoints and rewind, one class per canonical code:
 *
 * | class | code | when |
 * |---|---|---|
 * | {@link CheckpointIoError} | `CHECKPOINT_IO` | the journal, its store or the workspace cannot be read or written |
 * | {@link RewindConflictError} | `REWIND_CONFLICT` | files changed outside the agent since the checkpoint (or cannot be restored) |
 * | {@link RewindTargetError} | `REWIND_TARGET` | the turn to rewind to does not exist or has not ended |
 *
 * `message` is one line in the user's words.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A file of the journal, its store or the workspace could not be read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointIoError extends Schema.TaggedError<CheckpointIoError>()("CheckpointIoError", {
  message: Schema.String,
  path: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /** Stable code. */
  readonly code = "CHECKPOINT_IO" as const
}

/**
 * Restoring would overwrite files changed outside the agent since the checkpoint, or needs a
 * pre-image that was too large to keep. `paths` lists them (workspace-relative).
 *
 * @since 0.1.0
 * @category errors
 */
export class RewindConflictError extends Schema.TaggedError<RewindConflictError>()("RewindConflictError", {
  message: Schema.String,
  changed: Schema.Array(Schema.String),
  unrecorded: Schema.Array(Schema.String)
}) {
  /** Stable code. */
  readonly code = "REWIND_CONFLICT" as const
}

/**
 * The turn to rewind to does not exist or has not ended.
 *
 * @since 0.1.0
 * @category errors
 */
export class RewindTargetError extends Schema.TaggedError<RewindTargetError>()("RewindTargetError", {
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "REWIND_TARGET" as const
}

/**
 * Any checkpoint or rewind failure.
 *
 * @since 0.1.0
 * @category errors
 */
export type CheckpointError = CheckpointIoError | RewindConflictError | RewindTargetError

/**
 * Wraps a thrown file-system error as {@link CheckpointIoError}, in the user's words.
 *
 * @since 0.1.0
 * @category constructors
 */
export const io = (what: string, path: string) => (cause: unknown): CheckpointIoError =>
  new CheckpointIoError({
    message: `cannot ${what} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
    path,
    cause
  })
