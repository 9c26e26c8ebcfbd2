/**
 * Fork (S-21): a new live child seeded with the events `0..boundary` of a live source.
 *
 * `boundary` is inclusive; the default is the source's last event; an empty source gives an empty
 * child. The child header is `{parentSession: source id, seedLength: boundary + 1, cwd: the
 * source's}`. Errors, checked in this order, and none creates a child:
 * 1. `SESSION_ALREADY_EXISTS`: the child id is already live;
 * 2. `SESSION_NOT_FOUND`: the source id is not live;
 * 3. `SESSION_NOT_LIVE`: the source object is not the live instance of its id (stale handle);
 * 4. `INVALID_BOUNDARY`: boundary not a non-negative safe integer, or past the end;
 * 5. `OPEN_TURN`: the boundary event is not a `turn/end` (any reason kind is fine).
 *
 * Decision (DEC-10): with the default boundary a source whose last event is not a `turn/end` (a
 * turn in progress) fails `OPEN_TURN`, like an explicit boundary would.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { SessionId } from "../Llm/Message.js"
import * as Session from "./Session.js"
import type { SessionError } from "./SessionError.js"
import * as SessionErrors from "./SessionError.js"
import type { SessionEvent, SessionHeader } from "./SessionEvent.js"
import { FORMAT_VERSION } from "./SessionEvent.js"

/**
 * Where fork looks up live sessions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry {
  readonly lookup: (id: string) => Session.Session | undefined
}

/**
 * What a fork produces before a child exists: its header and seed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly header: SessionHeader
  readonly seed: ReadonlyArray<SessionEvent>
}

/**
 * Validates a boundary over the source events and returns the seed (S-21 errors 4 and 5).
 *
 * @since 0.1.0
 * @category fork
 */
export const seedOf = (
  events: ReadonlyArray<SessionEvent>,
  boundary?: unknown
): Effect.Effect<ReadonlyArray<SessionEvent>, SessionError> => {
  if (boundary === undefined && events.length === 0) return Effect.succeed([])
  const b = boundary ?? events.length - 1
  if (typeof b !== "number" || !Number.isSafeInteger(b) || b < 0) {
    return Effect.fail(SessionErrors.make("INVALID_BOUNDARY", `S-21: boundary ${String(b)} is not a non-negative safe integer`))
  }
  if (b >= events.length) {
    return Effect.fail(SessionErrors.make("INVALID_BOUNDARY", `S-21: boundary ${b} is past the last event (${events.length - 1})`))
  }
  const at = events[b] as SessionEvent
  if (at.type !== "turn/end") {
    return Effect.fail(SessionErrors.make("OPEN_TURN", `S-21: boundary event ${b} is ${at.type}, not turn/end`))
  }
  return Effect.succeed(events.slice(0, b + 1))
}

/**
 * Plans a fork: checks every error of S-21 in order and returns the child header and seed.
 *
 * @since 0.1.0
 * @category fork
 */
export const plan = (
  registry: Registry,
  source: Session.Session | string,
  boundary?: unknown,
  childId?: string
): Effect.Effect<Plan, SessionError> =>
  Effect.gen(function*() {
    if (childId !== undefined && registry.lookup(childId) !== undefined) {
      return yield* SessionErrors.make("SESSION_ALREADY_EXISTS", `S-21: session ${childId} is already live`, {
        sessionId: childId
      })
    }
    const id = typeof source === "string" ? source : source.id
    const live = registry.lookup(id)
    if (typeof source === "string" && live === undefined) {
      return yield* SessionErrors.make("SESSION_NOT_FOUND", `S-21: no live session ${id}`, { sessionId: id })
    }
    if (live === undefined || (typeof source !== "string" && live !== source)) {
      return yield* SessionErrors.make("SESSION_NOT_LIVE", `S-21: this handle of session ${id} is not the live instance`, {
        sessionId: id
      })
    }
    return yield* planFrom(live.header, yield* live.events, boundary, childId)
  })

/**
 * Plans a fork from a source's header and events (a live session's, or a stored snapshot's):
 * S-21 errors 4 and 5, then the child header and seed.
 *
 * @since 0.1.0
 * @category fork
 */
export const planFrom = (
  source: SessionHeader,
  events: ReadonlyArray<SessionEvent>,
  boundary?: unknown,
  childId?: string
): Effect.Effect<Plan, SessionError> =>
  Effect.gen(function*() {
    const seed = yield* seedOf(events, boundary)
    const header: SessionHeader = {
      version: FORMAT_VERSION,
      id: (childId ?? (yield* Effect.sync(() => crypto.randomUUID()))) as SessionId,
      createdAt: yield* Clock.currentTimeMillis,
      ...(source.cwd === undefined ? {} : { cwd: source.cwd }),
      parentSession: source.id,
      seedLength: seed.length
    }
    return { header, seed }
  })

/**
 * Forks a live session into a new live child (not registered anywhere: `SessionStore.fork` also
 * registers and persists it).
 *
 * @since 0.1.0
 * @category fork
 */
export const fork = Effect.fn("Fork.fork")((
  registry: Registry,
  source: Session.Session | string,
  boundary?: unknown,
  childId?: string
): Effect.Effect<Session.Session, SessionError> =>
  Effect.flatMap(plan(registry, source, boundary, childId), (p) => Session.make({ header: p.header, seed: p.seed })))
