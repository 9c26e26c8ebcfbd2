/**
 * The read side of a live session: its events (read back from the stored log when chunks were
 * dropped), the surface, the derived messages (cached per node), the request header and observers.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import type { Message } from "../../Llm/Message.js"
import * as Projection from "../Projection.js"
import type { SessionError } from "../SessionError.js"
import type { SessionEvent } from "../SessionEvent.js"
import type { Observer, ObserverEntry, State } from "./State.js"


const projected = new WeakMap<SessionEvent, Message | null>()

const project = (event: SessionEvent): Message | undefined => {
  const cached = projected.get(event)
  if (cached !== undefined) return cached ?? undefined
  const m = Projection.deriveEventMessage(event)
  projected.set(event, m ?? null)
  return m
}

/** The read side of a session; `readBack` returns every event when some were dropped from memory. */
export const make = (
  state: State,
  stored: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError> | undefined,
  readBack: (read: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>) => Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>
) => ({
  events: Effect.suspend(() =>
    (state.dropped === 0 && state.slimmed === 0) || stored === undefined
      ? Effect.succeed(state.eventsSnapshot ??= Object.freeze(state.log.slice()))
      : readBack(stored)
  ),
  // the same cached snapshot `events` uses while nothing is dropped (a drop invalidates it)
  heldEvents: Effect.sync(() => state.eventsSnapshot ??= Object.freeze(state.log.slice())),
  nextSeq: Effect.sync(() => state.length),
  nextTurn: Effect.sync(() => state.nextTurn),
  surface: Effect.sync(() =>
    state.surfaceSnapshot ??= Object.freeze({
      nodes: Object.freeze(state.surface.nodes.slice()),
      replaceGeneration: state.surface.replaceGeneration
    })
  ),
  deriveMessages: Effect.sync(() => {
    const s = state.surface
    if (state.derivedGeneration !== s.replaceGeneration) {
      state.derived = []
      state.derivedNodes = 0
      state.derivedGeneration = s.replaceGeneration
    }
    const nodes = s.nodes
    for (let i = state.derivedNodes; i < nodes.length; i++) {
      const m = project(nodes[i] as SessionEvent)
      if (m !== undefined) state.derived.push(m)
    }
    state.derivedNodes = nodes.length
    return state.derived.slice()
  }),
  requestHeader: Effect.sync(() => state.requestHeader),
  observe: (observer: Observer) =>
    Effect.asVoid(Effect.acquireRelease(
      Effect.sync(() => {
        const entry: ObserverEntry = { observer }
        state.observers = [...state.observers, entry]
        return entry
      }),
      (entry) => Effect.sync(() => {
        state.observers = state.observers.filter((e) => e !== entry)
      })
    )),
})
