/**
 * Publication to a live session's observers (S-10): each observer runs in registration order with
 * its failure contained (logged), inside a publication token that detects re-entrant appends.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import type { SessionEvent } from "../SessionEvent.js"
import { publishing } from "./State.js"
import type { ObserverEntry, Publication, State } from "./State.js"


/** The `notify` of a session: `owner` marks its publications, `id` is named in the log. */
export const make = (state: State, owner: object, id: string) => {
  const contained = (entry: ObserverEntry, event: SessionEvent): Effect.Effect<void> =>
    Effect.catchCause(
      Effect.suspend(() => entry.observer(event)),
      (cause) => Effect.logWarning(`session ${id}: observer failed on ${event.type} #${event.seq} (contained)`, cause)
    )

  const runObservers = (observers: ReadonlyArray<ObserverEntry>, event: SessionEvent, from: number): Effect.Effect<void> =>
    from === observers.length - 1
      ? contained(observers[from] as ObserverEntry, event)
      : Effect.andThen(
        contained(observers[from] as ObserverEntry, event),
        Effect.suspend(() => runObservers(observers, event, from + 1))
      )

  const notify = (event: SessionEvent): Effect.Effect<void> => {
    const observers = state.observers
    if (observers.length === 0) return Effect.void
    const token: Publication = { owner, active: true }
    state.activePublications++
    // the publication's token is in the observers' context (read-only, inherited by their forks)
    return Effect.ensuring(
      Effect.updateService(runObservers(observers, event, 0), publishing, (tokens) => [...tokens, token]),
      Effect.sync(() => {
        token.active = false
        state.activePublications--
      })
    )
  }

  return notify
}
