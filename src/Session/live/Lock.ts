/**
 * The append lock of a live session: a FIFO mutex whose uncontended acquisition is synchronous
 * (`state.holding` flips in place). Releasing hands the lock straight to the oldest waiter.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import type { State } from "./State.js"


/** The lock over `state.holding`. */
export const make = (state: State) => {
  // The append lock: a FIFO mutex whose uncontended acquisition is synchronous (`state.holding`
  // flips in place). Releasing hands the lock straight to the oldest waiter (it stays held).
  const waiters: Array<() => void> = []
  const release = (): void => {
    const next = waiters.shift()
    if (next === undefined) state.holding = false
    else next()
  }
  // Waits for the lock (interruptible); an interrupted waiter that was already handed the lock
  // passes it on.
  const waitForLock: Effect.Effect<void> = Effect.callback<void>((resume) => {
    const wake = () => resume(Effect.void)
    waiters.push(wake)
    return Effect.sync(() => {
      const i = waiters.indexOf(wake)
      if (i >= 0) waiters.splice(i, 1)
      else release()
    })
  })
  const releaseLock = Effect.sync(release)

  return { release, waitForLock, releaseLock }
}
