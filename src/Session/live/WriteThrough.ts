/**
 * The write-through path of a live session (`persist`): under the append lock, commit, persist,
 * then publish every committed event not yet published, in seq order; the synchronous variant
 * (`persistNow`, issue 20) persists and publishes in the committing step.
 *
 * @since 0.1.0
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import type { SessionError } from "../SessionError.js"
import type { SessionEvent } from "../SessionEvent.js"
import type { AppendNow } from "../SessionPersistence.js"
import type * as Lock from "./Lock.js"
import type { Batch, State } from "./State.js"


/** What the write-through path of a session works with. */
export interface Parts {
  readonly state: State
  readonly pubsub: PubSub.PubSub<SessionEvent>
  readonly persist: Effect.Effect<void, SessionError> | undefined
  readonly persistNow: (() => AppendNow) | undefined
  readonly notify: (event: SessionEvent) => Effect.Effect<void>
  readonly lock: ReturnType<typeof Lock.make>
  readonly dropPersistedChunks: () => void
}

/** The write-through path of a session. */
export const make = (parts: Parts) => {
  const { state, pubsub, persist, persistNow, notify, dropPersistedChunks } = parts
  const { release, releaseLock, waitForLock } = parts.lock

  // Write-through (under the lock, uninterruptible): persist what was committed, then publish
  // every committed event not yet published, in seq order.
  const publishBacklog = (): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (state.published >= state.length) return Effect.void
      // nothing at or above `published` was dropped (dropping follows publication)
      const event = state.log[state.published - state.dropped] as SessionEvent
      state.published++
      PubSub.publishUnsafe(pubsub, event)
      return Effect.andThen(notify(event), publishBacklog())
    })

  const persistAndPublish = (p: Effect.Effect<void, SessionError>): Effect.Effect<void, SessionError> =>
    Effect.andThen(p, Effect.andThen(publishBacklog(), Effect.sync(dropPersistedChunks)))

  /** Commits the batch in order up to its first invalid input (which fails it; earlier ones stay committed). */
  const commitAll = (batch: Batch, clock: Clock.Clock): { readonly out: Array<SessionEvent>; readonly failure: SessionError | undefined } => {
    const out: Array<SessionEvent> = []
    for (let i = 0; i < batch.length; i++) {
      const r = batch.commit(i, clock.currentTimeMillisUnsafe())
      if (Result.isFailure(r)) return { out, failure: r.failure }
      out.push(r.success)
    }
    return { out, failure: undefined }
  }

  /** After a synchronous write: offers every unpublished event to `changes` (no observer to run), drops persisted chunks. */
  const publishWritten = (): void => {
    while (state.published < state.length) PubSub.publishUnsafe(pubsub, state.log[state.published++ - state.dropped] as SessionEvent)
    dropPersistedChunks()
  }

  /** Under the lock (held on entry): commit each input, persist, publish; releases the lock. */
  const underLockThrough = (
    p: Effect.Effect<void, SessionError>,
    batch: Batch
  ): Effect.Effect<Array<SessionEvent>, SessionError> =>
    Effect.clockWith((clock) => {
      const { failure, out } = commitAll(batch, clock)
      if (out.length === 0 && state.published >= state.length) {
        release()
        return failure === undefined ? Effect.succeed(out) : Effect.fail(failure)
      }
      // the synchronous write-through (issue 20): persisted now, published in this same step
      // (no observer to run), the lock released before anything else can happen
      if (persistNow !== undefined && state.observers.length === 0) {
        const now = persistNow()
        if (now !== "later") {
          if (now === "written") publishWritten()
          release()
          if (now !== "written") return Effect.fail(now)
          return failure === undefined ? Effect.succeed(out) : Effect.fail(failure)
        }
      }
      const done = persistAndPublish(p)
      return Effect.ensuring(
        failure === undefined ? Effect.as(done, out) : Effect.andThen(done, Effect.fail(failure)),
        releaseLock
      )
    })

  const through = (
    p: Effect.Effect<void, SessionError>,
    batch: Batch
  ): Effect.Effect<Array<SessionEvent>, SessionError> =>
    Effect.uninterruptibleMask((restore) => {
      if (!state.holding) {
        state.holding = true
        return underLockThrough(p, batch)
      }
      return Effect.andThen(restore(waitForLock), underLockThrough(p, batch))
    })

  /**
   * The streaming hot path (issue 20): with nothing in the way (lock free, no publication, no
   * observer, no backlog) commit, persist through `persistNow` and publish in one synchronous
   * step, without taking the lock. When the backend answers "later" the committed events are a
   * backlog that an empty batch (a flush point) persists and publishes under the lock, in this
   * same call; if that is interrupted first, the next append or flush does it (nothing is lost,
   * observers still see seq order).
   */
  const nowOrBacklog = (batch: Batch): Effect.Effect<ReadonlyArray<SessionEvent>, SessionError> =>
    Effect.clockWith((clock) => {
      const { failure, out } = commitAll(batch, clock)
      const settled = failure === undefined ? Effect.succeed(out) : Effect.fail(failure)
      if (out.length === 0) return settled
      const now = (persistNow as () => AppendNow)()
      if (now === "written") {
        publishWritten()
        return settled
      }
      if (now === "later") return Effect.andThen(backlogThrough(persist as Effect.Effect<void, SessionError>), settled)
      return Effect.fail(now)
    })

  /** Takes the lock and persists then publishes the backlog (nothing to do when another append did). */
  const backlogThrough = (p: Effect.Effect<void, SessionError>): Effect.Effect<void, SessionError> =>
    Effect.uninterruptibleMask((restore) => {
      const run = Effect.ensuring(
        Effect.suspend(() => (state.published >= state.length ? Effect.void : persistAndPublish(p))),
        releaseLock
      )
      if (!state.holding) {
        state.holding = true
        return run
      }
      return Effect.andThen(restore(waitForLock), run)
    })

  return { through, nowOrBacklog }
}
