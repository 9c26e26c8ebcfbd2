/**
 * The abort channel of one step (DEC-1): `cancel(reason)` / disposal fire it, and every piece of
 * active work run through {@link interruptible} (the model stream, tool bodies, hooks) is
 * interrupted. The loop's own bookkeeping is not interrupted: it observes the signal and closes the
 * log (synthetic results, `step/end`, `turn/end aborted`) after started work reached quiescence.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * Why a step was aborted: a cancellation with its reason, or disposal of the agent.
 *
 * @since 0.1.0
 * @category models
 */
export type AbortReason =
  | { readonly _tag: "Cancelled"; readonly reason: string }
  | { readonly _tag: "Disposed" }

/**
 * A one-shot abort signal.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepSignal {
  /** completes once with the first abort reason */
  readonly deferred: Deferred.Deferred<AbortReason>
}

/**
 * Creates an un-fired signal.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<StepSignal> = Effect.map(Deferred.make<AbortReason>(), (deferred) => ({ deferred }))

/**
 * Fires the signal (first reason wins); `true` when this call fired it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const abort = (signal: StepSignal, reason: AbortReason): Effect.Effect<boolean> =>
  Deferred.succeed(signal.deferred, reason)

/**
 * The abort reason, if fired.
 *
 * @since 0.1.0
 * @category accessors
 */
export const reason = (signal: StepSignal): Effect.Effect<Option.Option<AbortReason>> =>
  Effect.flatMap(
    Deferred.poll(signal.deferred),
    Option.match({ onNone: () => Effect.succeedNone, onSome: (fired) => Effect.asSome(fired) })
  )

/**
 * `true` once the signal fired.
 *
 * @since 0.1.0
 * @category accessors
 */
export const isAborted = (signal: StepSignal): Effect.Effect<boolean> => Deferred.isDone(signal.deferred)

/**
 * Waits for the signal.
 *
 * @since 0.1.0
 * @category accessors
 */
export const await_ = (signal: StepSignal): Effect.Effect<AbortReason> => Deferred.await(signal.deferred)

/**
 * Runs `effect`, interrupting it when the signal fires. Succeeds with `Option.none()` when it was
 * interrupted by the signal (after its finalizers ran), `Option.some(a)` otherwise.
 *
 * @since 0.1.0
 * @category combinators
 */
export const interruptible = <A, E, R>(
  signal: StepSignal,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.raceFirst(
    Effect.map(effect, Option.some),
    Effect.as(Deferred.await(signal.deferred), Option.none<A>())
  )
