/**
 * Coalesced write-through (`Jsonl` module doc, Writes): appends of a held, stored session that
 * arrive while a write of it is in flight go out together in the next write (one `write`, at most
 * one fsync); a batch that fails validation fails alone.
 *
 * @since 0.1.0
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as SessionError from "../../SessionError.js"
import type { SessionEvent } from "../../SessionEvent.js"
import * as Records from "../Records.js"
import { notFound } from "./Store.js"
import type { Entry, Pending, Store } from "./Store.js"


/** The coalesced appends of an instance, written by `appendWrite`. */
export const make = (
  store: Store,
  appendWrite: (entry: Entry, events: ReadonlyArray<SessionEvent>, sync: boolean) => Effect.Effect<void, SessionError.SessionError>
) => {
  const { entries, serialized, queues } = store

  /**
   * Writes the queued batches of a held, stored session as one group: each batch is validated in
   * order (one that fails gets its own error and is left out, as if appended alone), the valid
   * ones go out in one `write`, fsynced when any of them asked for it, and all of them share the
   * outcome. Runs under the id's serializer.
   */
  const writeGroup = (id: string, group: ReadonlyArray<Pending>) =>
    Effect.gen(function*() {
      const entry = entries.get(id)
      const accepted: Array<Pending> = []
      const events: Array<SessionEvent> = []
      let sync = false
      for (const p of group) {
        const valid = entry === undefined
          ? Result.fail(notFound(id))
          : Records.validateBatch(id, p.events, entry.nextSeq + events.length)
        if (Result.isFailure(valid)) {
          yield* Deferred.fail(p.done, valid.failure)
          continue
        }
        accepted.push(p)
        for (const e of valid.success) events.push(e)
        sync ||= p.sync
      }
      if (entry === undefined || accepted.length === 0) return
      const exit = yield* Effect.exit(appendWrite(entry, events, sync))
      for (const p of accepted) yield* Deferred.done(p.done, exit)
    })

  /**
   * Appends of a held, stored session: a batch that arrives while a write of the session is in
   * flight waits in the queue and goes out with the others in the next write (one `write`, at
   * most one fsync), in arrival order. The first append of a burst writes until the queue is
   * empty; the write is uninterruptible, so queued callers always get their outcome.
   */
  const appendCoalesced = (id: string, events: ReadonlyArray<SessionEvent>, sync: boolean) =>
    Effect.flatMap(Deferred.make<void, SessionError.SessionError>(), (done) =>
      Effect.suspend(() => {
        const queue = queues.get(id)
        if (queue !== undefined) {
          queue.push({ events, sync, done })
          return Deferred.await(done)
        }
        const mine: Array<Pending> = [{ events, sync, done }]
        queues.set(id, [])
        const drain = (group: Array<Pending>): Effect.Effect<void> =>
          Effect.flatMap(serialized(id)(writeGroup(id, group)), () => {
            const next = queues.get(id)!
            if (next.length === 0) {
              queues.delete(id)
              return Effect.void
            }
            queues.set(id, [])
            return drain(next)
          })
        // a defect in a write must not strand the callers queued behind it
        const strand = (cause: Cause.Cause<never>) =>
          Effect.suspend(() => {
            const left = queues.get(id) ?? []
            queues.delete(id)
            return Effect.forEach([...mine, ...left], (p) => Deferred.failCause(p.done, cause), { discard: true })
          })
        return Effect.andThen(
          Effect.uninterruptible(Effect.onError(drain(mine), strand)),
          Deferred.await(done)
        )
      }))

  return { appendCoalesced }
}
