/**
 * SIGINT as an Effect queue for the scope's lifetime (the CLI edge owns the process signals).
 * Every Ctrl-C offers one element; the handler is removed when the scope closes.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * A queue receiving one element per SIGINT while the scope is open.
 *
 * @since 0.1.0
 * @category constructors
 */
export const interrupts: Effect.Effect<Queue.Dequeue<void>, never, Scope.Scope> = Effect.gen(function*() {
  const queue = yield* Queue.unbounded<void>()
  const handler = () => {
    Queue.unsafeOffer(queue, undefined)
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => process.on("SIGINT", handler)),
    () => Effect.sync(() => process.off("SIGINT", handler))
  )
  return queue
})
