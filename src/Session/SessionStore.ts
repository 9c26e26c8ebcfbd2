/**
 * The session store: creates, resumes and forks live sessions, keeps the live registry, and runs
 * the durable write path (DEC-11 write-through, D-8, D-12, DEC-4) over a {@link SessionPersistence}
 * backend.
 *
 * - Every session the store creates, opens or forks is live for the lifetime of the caller's
 *   `Scope`. The store takes the backend's exclusive writer lock first (`SESSION_LOCKED` for a
 *   second writer, in this process or another), and releases it last.
 * - Write path (DEC-11, replaces D-7's turn-end buffering; `SessionWriter`, one per live session): every committed event is buffered
 *   synchronously at commit, and every append (one `appendAll` batch included) then drains the
 *   buffer with one `persistence.append` (one write / one transaction) before the session publishes
 *   anything (the session's `persist` hook): printed ⇒ written. A drained batch that holds a
 *   `step/end` or `turn/end` is fsynced with it (step end, turn end, and the end of an idle
 *   injection turn); other batches reach the operating system unsynced. `flush(id)` drains and
 *   fsyncs whatever is pending (and publishes events a failed write held back); the loop calls it
 *   at every turn end, idle injection and disposal, and release does it last. So process death loses at most the batch being written, power loss
 *   at most the current step.
 * - A failed drain (`PERSISTENCE_FAILED` from the backend) keeps the events buffered (and
 *   unpublished) and fails the append or `flush` that ran it; the next append or flush retries them
 *   first. Drains of one session are serialized. A drained batch made only of the session's own
 *   commits is handed over vouched for (`Validate.committedBatch`), so the backend does not copy
 *   and re-validate events the session already validated; a fork seed is validated as usual.
 * - Readers (DEC-11): `snapshot(id)` is the backend's read-only snapshot (no lock, never writes,
 *   repair in memory); `forkStored` seeds a fork from such a snapshot of a stored session.
 * - Release (closing the scope): waits for an in-flight flush, drains once more, unregisters,
 *   then releases the lock. A drain failure at release cannot propagate from a finalizer: it is
 *   logged as an error (the events stay unpersisted; DEC-10).
 * - `create` records intent with the backend (lazy materialization, D-1) and rejects an id that
 *   is live, tracked or stored (`SESSION_ALREADY_EXISTS`, D-2, D-8).
 * - `open` resumes (D-12): lock, load (the backend repairs durably), then a live session seeded
 *   with the loaded events and the stored header; seqs and turn numbers continue; the stored
 *   prefix is not buffered, so it is never re-appended (D-8).
 * - `fork` (S-21) plans per `Fork.plan` over the live registry, creates the child with the
 *   backend and buffers the seed, so the seed is written once at the child's first flush.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as GenAi from "../Llm/GenAi.js"
import type { SessionId } from "../Llm/Message.js"
import * as Fork from "./Fork.js"
import * as Memory from "./persistence/Memory.js"
import * as Session from "./Session.js"
import type { SessionError } from "./SessionError.js"
import * as SessionErrors from "./SessionError.js"
import * as SessionWriter from "./SessionWriter.js"
import type { SessionEvent, SessionHeader } from "./SessionEvent.js"
import { FORMAT_VERSION } from "./SessionEvent.js"
import type { Loaded, SessionSummary } from "./SessionPersistence.js"
import { SessionPersistence } from "./SessionPersistence.js"
import { inChildScope } from "../Llm/internal/ChildScope.js"

/**
 * Options of `create`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateOptions {
  /** the session id (default: a random UUID) */
  readonly id?: string
  /** the absolute working directory recorded in the header */
  readonly cwd?: string
}

/**
 * The session store service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** A new live session, released when the scope closes. */
  readonly create: (options?: CreateOptions) => Effect.Effect<Session.Session, SessionError, Scope.Scope>
  /** Resumes a stored session (D-12), released when the scope closes. */
  readonly open: (id: string) => Effect.Effect<Session.Session, SessionError, Scope.Scope>
  /** Forks a live session (S-21) into a new live child, released when the scope closes. */
  readonly fork: (
    source: Session.Session | string,
    boundary?: number,
    childId?: string
  ) => Effect.Effect<Session.Session, SessionError, Scope.Scope>
  /** The live session with this id, else `SESSION_NOT_FOUND`. */
  readonly get: (id: string) => Effect.Effect<Session.Session, SessionError>
  /** The live sessions, in the order they became live. */
  readonly list: () => Effect.Effect<ReadonlyArray<Session.Session>>
  /** Stored sessions (the backend's `list`, D-6). */
  readonly stored: () => Effect.Effect<ReadonlyArray<SessionSummary>, SessionError>
  /**
   * Forks a stored session read through a snapshot (no lock on the parent, nothing written to it)
   * into a new live child, released when the scope closes; same boundary rules as `fork`, over the
   * stored events (the snapshot's in-memory repair closers are not part of them).
   */
  readonly forkStored: (
    sourceId: string,
    boundary?: number,
    childId?: string
  ) => Effect.Effect<Session.Session, SessionError, Scope.Scope>
  /** A consistent read-only snapshot of a stored session (no lock, never writes; DEC-11). */
  readonly snapshot: (id: string) => Effect.Effect<Loaded, SessionError>
  /** Writes the buffered events of a live session and fsyncs everything written (DEC-11). */
  readonly flush: (id: string) => Effect.Effect<void, SessionError>
  /** Number of events buffered and not yet durable (diagnostics, tests). */
  readonly pending: (id: string) => Effect.Effect<number, SessionError>
}

/**
 * The session store Tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionStore extends Context.Service<SessionStore, Service>()("effect-harness/Session/SessionStore") {}

interface Entry {
  readonly session: Session.Session
  /** the session's write path (made before the session, which it hands its hooks) */
  readonly writer: SessionWriter.Writer
}

/**
 * A flush point (`flush`, or the drain at release) in a span (issue 19): the session and the events waiting. The
 * per-append writes between flush points are not traced (they run per chunk batch).
 */
const traceFlush = <A, E, R>(name: string, id: string, entry: Entry, effect: Effect.Effect<A, E, R>) =>
  Effect.withSpan(effect, name, {
    kind: "internal",
    // a stack trace here would name this module, never the caller's code
    captureStackTrace: false,
    attributes: { [GenAi.Attr.sessionId]: id, [GenAi.Attr.pendingEvents]: entry.writer.pending() }
  })

/**
 * Builds a store over the `SessionPersistence` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SessionPersistence> = Effect.gen(function*() {
  const persistence = yield* SessionPersistence
  const live = new Map<string, Entry>()
  const registry: Fork.Registry = { lookup: (id) => live.get(id)?.session }

  const notFound = (id: string) =>
    SessionErrors.make("SESSION_NOT_FOUND", `no live session ${JSON.stringify(id)}`, { sessionId: id })

  /** Registers a live session in the caller's scope: lock already held; release drains first. */
  const register = (
    header: SessionHeader,
    build: (hooks: SessionWriter.Writer["hooks"]) => Effect.Effect<Session.Session, SessionError>,
    initialBuffer: ReadonlyArray<SessionEvent>
  ): Effect.Effect<Session.Session, SessionError, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.gen(function*() {
        if (live.has(header.id)) {
          return yield* SessionErrors.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(header.id)} is already live`, {
            sessionId: header.id
          })
        }
        // the writer exists before the session: the session's hooks write through it
        const writer = yield* SessionWriter.make(persistence, header.id, initialBuffer)
        const entry: Entry = { session: yield* build(writer.hooks), writer }
        live.set(header.id, entry)
        return entry
      }),
      (entry) =>
        traceFlush(GenAi.SpanName.release, header.id, entry, entry.writer.drain(true)).pipe(
          Effect.catch((error) =>
            Effect.logError(
              `session ${header.id}: ${entry.writer.pending()} event(s) could not be persisted at release`,
              error
            )
          ),
          Effect.ensuring(Effect.sync(() => {
            if (live.get(header.id) === entry) live.delete(header.id)
          }))
        )
    ).pipe(Effect.map((entry) => entry.session))

  /** `body` in its own child scope, closed at once when it fails (a lock taken before a later step fails is released) */
  const guarded = <A>(body: Effect.Effect<A, SessionError, Scope.Scope>): Effect.Effect<A, SessionError, Scope.Scope> =>
    inChildScope(body)

  const create = Effect.fn("SessionStore.create")((options: CreateOptions = {}) =>
    Effect.gen(function*() {
      const id = options.id ?? (yield* Effect.sync(() => crypto.randomUUID()))
      if (live.has(id)) {
        return yield* SessionErrors.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(id)} is already live`, {
          sessionId: id
        })
      }
      const header: SessionHeader = {
        version: FORMAT_VERSION,
        id: id as SessionId,
        createdAt: yield* Clock.currentTimeMillis,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd })
      }
      // validates the header before anything is recorded
      yield* Session.make({ header })
      return yield* guarded(Effect.gen(function*() {
        yield* persistence.lock(header.id)
        yield* persistence.create(header)
        return yield* register(header, (hooks) => Session.make({ header, ...hooks }), [])
      }))
    }))

  const open = Effect.fn("SessionStore.open")((id: string) =>
    guarded(Effect.gen(function*() {
      yield* persistence.lock(id as SessionId)
      const loaded = yield* persistence.load(id as SessionId)
      return yield* register(
        loaded.header,
        (hooks) => Session.make({ header: loaded.header, seed: loaded.events, ...hooks }),
        []
      )
    })))

  const forkFrom = (plan: Fork.Plan) =>
    guarded(Effect.gen(function*() {
      yield* persistence.lock(plan.header.id)
      yield* persistence.create(plan.header)
      return yield* register(
        plan.header,
        (hooks) => Session.make({ header: plan.header, seed: plan.seed, ...hooks }),
        plan.seed
      )
    }))

  const fork = Effect.fn("SessionStore.fork")((source: Session.Session | string, boundary?: number, childId?: string) =>
    Effect.flatMap(Fork.plan(registry, source, boundary, childId), forkFrom))

  const forkStored = Effect.fn("SessionStore.forkStored")((sourceId: string, boundary?: number, childId?: string) =>
    Effect.gen(function*() {
      if (childId !== undefined && live.has(childId)) {
        return yield* SessionErrors.make("SESSION_ALREADY_EXISTS", `S-21: session ${childId} is already live`, {
          sessionId: childId
        })
      }
      const snap = yield* persistence.snapshot(sourceId as SessionId)
      // what is stored: a running or crashed turn's in-memory closers are not the parent's history
      const stored = snap.events.slice(0, snap.events.length - snap.repaired.length)
      return yield* forkFrom(yield* Fork.planFrom(snap.header, stored, boundary, childId))
    }))

  const entryOf = (id: string) =>
    Effect.suspend(() => {
      const entry = live.get(id)
      return entry === undefined ? Effect.fail(notFound(id)) : Effect.succeed(entry)
    })

  return SessionStore.of({
    create: (options) => create(options),
    open,
    fork,
    get: (id) => Effect.map(entryOf(id), (e) => e.session),
    list: () => Effect.sync(() => Array.from(live.values(), (e) => e.session)),
    stored: Effect.fn("SessionStore.stored")(() => persistence.list()),
    forkStored,
    snapshot: Effect.fn("SessionStore.snapshot")((id: string) => persistence.snapshot(id as SessionId)),
    // traced by its own span (`traceFlush`), not `Effect.fn`, so the flush span keeps the turn as its parent
    flush: (id: string) =>
      Effect.flatMap(entryOf(id), (entry) =>
        // through the session: a backlog left by a failed write is retried and then published
        traceFlush(GenAi.SpanName.flush, id, entry, Effect.andThen(entry.session.appendAll([]), entry.writer.drain(true)))),
    pending: (id) => Effect.map(entryOf(id), (e) => e.writer.pending())
  })
})

/**
 * The store over the `SessionPersistence` in context. Fresh at every use (Effect 4 reuses a layer
 * an enclosing `provide` already built): each store it provides has its own live registry, and
 * two stores never share one because they were provided one inside the other. Compose it once
 * (`layer.pipe(Layer.provide(backend))`) and provide that value to share one store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SessionStore, never, SessionPersistence> = Layer.fresh(Layer.effect(SessionStore, make))

/**
 * The store over a fresh in-memory backend (tests, offline demos): a new store and backend at
 * every use, like {@link layer}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionStore> = Layer.fresh(layer.pipe(Layer.provide(Memory.layer)))
