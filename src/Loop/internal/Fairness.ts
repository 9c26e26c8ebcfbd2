/**
 * Event-loop fairness while streaming (issue 20). A model stream that delivers chunks as fast as they can be
 * handled keeps the loop's fiber busy in microtasks: Node's timers and I/O of everything else in the process (an
 * HTTP server, heartbeats, other agents' sockets) would wait until the stream ends. The loop therefore yields to
 * the Node event loop (a macrotask, `setImmediate`) when {@link budgetMs} passed since the process last got one,
 * checked once per chunk batch: one `performance.now()` per batch when nothing is due. The clock is shared by
 * every stream in the process, so with many agents streaming at once they all park together and the event loop
 * turns (a per-stream clock lets the others keep it busy).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"

/**
 * Streaming time after which the loop lets the event loop run (milliseconds).
 *
 * @since 0.2.0
 * @category constants
 */
export const budgetMs = 8

/** When the event loop last got a turn, as far as the streams know (shared by every stream in the process). */
let lastTurn = performance.now()

/** Resumes on the next event-loop turn (after timers and I/O callbacks get their chance). */
const macrotask: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => {
    lastTurn = performance.now()
    resume(Effect.void)
  })
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * `true` when {@link budgetMs} passed since the event loop last got a turn: the caller should yield
 * ({@link yieldNow}). One `performance.now()`; synchronous, so a hot loop pays no effect for it.
 *
 * @since 0.2.0
 * @category utils
 */
export const due = (): boolean => performance.now() - lastTurn >= budgetMs

/**
 * Resumes on the next event-loop turn (after timers and I/O callbacks get their chance).
 *
 * @since 0.2.0
 * @category utils
 */
export const yieldNow: Effect.Effect<void> = macrotask
