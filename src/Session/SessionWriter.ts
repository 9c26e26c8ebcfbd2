/**
 * The durable write path of one live session (DEC-11 write-through; `SessionStore` module doc):
 * the buffer every committed event goes into at commit, and the drains that write it through the
 * `SessionPersistence` backend. The writer exists before its session and hands the session its
 * hooks (`onCommit`, `persist`, `persistNow`, `stored`), so nothing points back from the writer to
 * the session: one path, commit → buffer → drain.
 *
 * - `drain(sync)` writes the buffer with one `persistence.append` (fsynced when `sync` or the batch
 *   holds a `step/end` or `turn/end`); an empty buffer at a flush point (`sync`) asks the backend
 *   to fsync. A failed write keeps the events buffered; drains are serialized.
 * - `drainNow()` is its synchronous form (issue 20): it writes in the caller's step when nothing
 *   else drains, the buffer holds only committed events and the backend can (`append.now`); else
 *   `"later"`.
 * - A batch made only of the session's own commits is handed over vouched for
 *   (`Validate.committedBatch`); an initial buffer (a fork seed) is validated as usual.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { SessionId } from "../Llm/Message.js"
import type * as Session from "./Session.js"
import type { SessionError } from "./SessionError.js"
import type { SessionEvent } from "./SessionEvent.js"
import type { AppendNow, Service as Persistence } from "./SessionPersistence.js"
import * as Validate from "./Validate.js"

/**
 * The write path of one live session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Writer {
  /** the hooks the session is made with: every commit is buffered, every append drains */
  readonly hooks: Pick<Session.MakeOptions, "onCommit" | "persist" | "persistNow" | "stored">
  /** writes the buffer; with `sync` it also fsyncs earlier unsynced writes */
  readonly drain: (sync: boolean) => Effect.Effect<void, SessionError>
  /** the synchronous drain (`append.now`), else `"later"` */
  readonly drainNow: () => AppendNow
  /** how many events are buffered and not yet written */
  readonly pending: () => number
}

/** a batch holding one of these is fsynced with it (step end, turn end) */
const isSyncPoint = (event: SessionEvent): boolean => event.type === "step/end" || event.type === "turn/end"

/**
 * The writer of session `id` over `persistence`; `initialBuffer` (a fork seed) is written first,
 * validated by the backend.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  persistence: Persistence,
  id: SessionId,
  initialBuffer: ReadonlyArray<SessionEvent>
): Effect.Effect<Writer> =>
  Effect.gen(function*() {
    const appendNow = persistence.append.now
    const buffer: Array<SessionEvent> = [...initialBuffer]
    const flushLock = yield* Semaphore.make(1)
    /** drains running or waiting for `flushLock` (a synchronous write must not overtake them) */
    let draining = 0
    /** how many events at the head of `buffer` did not come from the session's commits (a fork seed) */
    let untrusted = initialBuffer.length

    const drainLocked = (sync: boolean): Effect.Effect<void, SessionError> =>
      flushLock.withPermits(1)(Effect.suspend(() => {
        if (buffer.length === 0) {
          // a flush point always asks the backend (it knows best whether anything is unsynced)
          return sync ? persistence.sync(id) : Effect.void
        }
        // committed events are vouched for (the backend skips re-validating them); a fork seed is not
        const batch = untrusted > 0 ? buffer.slice() : Validate.committedBatch(buffer)
        const durable = sync || batch.some(isSyncPoint)
        return Effect.tap(
          persistence.append(id, batch, { sync: durable }),
          () =>
            Effect.sync(() => {
              buffer.splice(0, batch.length)
              untrusted = Math.max(0, untrusted - batch.length)
            })
        )
      }))

    const drain = (sync: boolean): Effect.Effect<void, SessionError> =>
      Effect.suspend(() => {
        draining++
        return Effect.ensuring(drainLocked(sync), Effect.sync(() => draining--))
      })

    const drainNow = (): AppendNow => {
      if (buffer.length === 0) return "written"
      if (draining > 0 || untrusted > 0 || appendNow === undefined) return "later"
      const batch = Validate.committedBatch(buffer)
      const done = appendNow(id, batch, { sync: batch.some(isSyncPoint) })
      if (done === "written") buffer.length = 0
      return done
    }

    return {
      hooks: {
        onCommit: (event) => {
          buffer.push(event)
        },
        persist: Effect.suspend(() => drain(false)),
        persistNow: drainNow,
        // the stored log, read back for the chunk events the session dropped from memory (0017)
        stored: Effect.map(persistence.snapshot(id), (loaded) => loaded.events)
      },
      drain,
      drainNow,
      pending: () => buffer.length
    }
  })
