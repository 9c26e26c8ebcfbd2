/**
 * How the coding agent's library parts say one line to the user (a sandbox that is unavailable, a rule
 * that is not understood, a hook that failed, a decision that could not be logged). Library modules never
 * print: they read this reference when their layer is built and call it. The default logs the line as a
 * warning (`Effect.logWarning`), which suits a headless embedder; the CLI provides one that writes
 * `effect-harness: <line>` to stderr, neutralised for a terminal.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Says one line to the user.
 *
 * @since 0.1.0
 * @category models
 */
export type Say = (line: string) => Effect.Effect<void>

/**
 * The host's notice channel (default: a warning log).
 *
 * @since 0.1.0
 * @category tags
 */
export const Notice: Context.Reference<Say> = Context.Reference<Say>("effect-harness/Tools/Notice", {
  defaultValue: () => (line) => Effect.logWarning(line)
})

/**
 * Provides `say` as the notice channel.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (say: Say): Layer.Layer<never> => Layer.succeed(Notice, say)
