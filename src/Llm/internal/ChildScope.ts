/**
 * Running an effect in its own child of the caller's scope (the one copy; the session store and the agent
 * factory use it).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

/**
 * Runs `body` in a child of the caller's scope that is closed at once when `body` fails or is interrupted
 * (so what it acquired before the failure is released), else when the caller's scope closes.
 *
 * @since 0.1.0
 * @category scoping
 */
export const inChildScope = <A, E, R>(
  body: Effect.Effect<A, E, R>
): Effect.Effect<A, E, Exclude<R, Scope.Scope> | Scope.Scope> =>
  Effect.flatMap(Effect.scope, (parent) =>
    Effect.flatMap(Scope.fork(parent, "sequential"), (child) =>
      Effect.onError(Scope.provide(body, child), (cause) => Scope.close(child, Exit.failCause(cause)))))
