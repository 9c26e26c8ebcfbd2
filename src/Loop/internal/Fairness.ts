/**
 * Event-loop fairness while streaming (issue 20). A model stream that delivers chunks as fast as they can be
 * handled keeps the loop's fiber busy in microtasks: Node's timers and I/O of everything else in the process (an
 * HTTP server, heartbeats, other agents' sockets) would wait until the stream ends. The loop therefore yields to
 * the Node event loop (a macrotask, `setImmediate`) once per {@link budgetMs} of streaming, checked once per chunk
 * batch: one `performance.now()` per batch when nothing is due.
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

/** Resumes on the next event-loop turn (after timers and I/O callbacks get their chance). */
const macrotask: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * A per-stream pacer: `tick` yields to the event loop when {@link budgetMs} passed since the last yield, else
 * does nothing.
 *
 * @since 0.2.0
 * @category constructors
 */
export const pacer = (): { readonly tick: Effect.Effect<void> } => {
  let last = performance.now()
  const tick = Effect.suspend(() => {
    const now = performance.now()
    if (now - last < budgetMs) return Effect.void
    return Effect.zipRight(macrotask, Effect.sync(() => {
      last = performance.now()
    }))
  })
  return { tick }
}
