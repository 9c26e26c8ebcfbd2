/**
 * Whether the loop's fibers run on its fair scheduler (`internal/Fairness`, decision 0021): tasks in
 * microtasks while a process-wide budget of a few milliseconds lasts, then a turn for the event loop's timers
 * and I/O. The scheduler is shared by the whole process, so it is opt-in: an embedder's agents run on
 * Effect's default scheduler unless {@link FairScheduler} is `true` where they are created (the `harness` CLI
 * turns it on for its whole program). The chunk consumer's per-batch yield to the event loop applies either
 * way.
 *
 * ```ts
 * program.pipe(Effect.provide(Scheduling.layer))   // agents created in `program` run on the fair scheduler
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * `true`: agents created under it (their creation, driver and every fiber those fork) run on the loop's fair
 * scheduler. Off by default.
 *
 * @since 0.1.0
 * @category references
 */
export const FairScheduler: Context.Reference<boolean> = Context.Reference<boolean>(
  "effect-harness/Loop/Scheduling/FairScheduler",
  { defaultValue: () => false }
)

/**
 * Turns {@link FairScheduler} on.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never> = Layer.succeed(FairScheduler, true)
