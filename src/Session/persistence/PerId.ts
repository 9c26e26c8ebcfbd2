/**
 * Per-id serialization for persistence backends (D-8: operations on one session id are
 * serialized; different ids run concurrently).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

/**
 * Returns `serialized(id)(effect)`: runs `effect` holding the id's one permit.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSerializer = () => {
  const semaphores = new Map<string, Effect.Semaphore>()
  return (id: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let sem = semaphores.get(id)
      if (sem === undefined) {
        sem = Effect.unsafeMakeSemaphore(1)
        semaphores.set(id, sem)
      }
      return sem.withPermits(1)(effect)
    })
}
