/**
 * Per-id serialization for persistence backends (D-8: operations on one session id are
 * serialized; different ids run concurrently).
 *
 * A permit exists only while some operation of its id runs or waits: the last one out removes it,
 * so ids that come and go (sessions created and disposed) leave nothing behind.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"

interface Slot {
  readonly semaphore: Semaphore.Semaphore
  /** operations of the id running or waiting */
  users: number
}

/**
 * A per-id serializer: `serialized(id)(effect)` runs `effect` holding the id's one permit;
 * `size()` is the number of ids with an operation running or waiting.
 *
 * @since 0.1.0
 * @category models
 */
export interface Serializer {
  (id: string): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly size: () => number
  /** `true` while an operation of the id runs or waits */
  readonly busy: (id: string) => boolean
}

/**
 * Returns a fresh {@link Serializer}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSerializer = (): Serializer => {
  const slots = new Map<string, Slot>()
  const serialized = (id: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        let slot = slots.get(id)
        if (slot === undefined) {
          slot = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
          slots.set(id, slot)
        }
        slot.users++
        return slot
      }),
      (slot) => slot.semaphore.withPermits(1)(effect),
      (slot) =>
        Effect.sync(() => {
          if (--slot.users === 0 && slots.get(id) === slot) slots.delete(id)
        })
    )
  return Object.assign(serialized, { size: () => slots.size, busy: (id: string) => slots.has(id) })
}
