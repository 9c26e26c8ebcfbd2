/**
 * The session store: creates, resumes and forks live sessions, keeps the live registry, and runs
 * the durable write path (D-7, D-8, D-12, DEC-4) over a {@link SessionPersistence} backend.
 *
 * - Every session the store creates, opens or forks is live for the lifetime of the caller's
 *   `Scope`. The store takes the backend's exclusive writer lock first (`SESSION_LOCKED` for a
 *   second writer, in this process or another), and releases it last.
 * - Write path (D-7): every committed event is buffered synchronously at commit (before
 *   observers run). `flush(id)` drains the buffer durably with one `persistence.append`; a failed
 *   drain keeps the buffer for the next flush and fails `flush` with the backend error (it is
 *   never logged as an event). Flushes of one session are serialized. The loop calls `flush` at
 *   every turn end, idle injection and disposal. A drained batch made only of the session's own
 *   commits is handed over vouched for (`Validate.committedBatch`), so the backend does not copy
 *   and re-validate events the session already validated; a fork seed is validated as usual.
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
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type { SessionId } from "../Llm/Message.js"
import * as Fork from "./Fork.js"
import * as Memory from "./persistence/Memory.js"
import * as Session from "./Session.js"
import type { SessionError } from "./SessionError.js"
import * as SessionErrors from "./SessionError.js"
import type { SessionEvent, SessionHeader } from "./SessionEvent.js"
import { FORMAT_VERSION } from "./SessionEvent.js"
import type { SessionSummary } from "./SessionPersistence.js"
import { SessionPersistence } from "./SessionPersistence.js"
import * as Validate from "./Validate.js"

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
  /** Drains the buffered events of a live session durably (D-7). */
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
export class SessionStore extends Context.Tag("effect-harness/Session/SessionStore")<SessionStore, Service>() {}

interface Entry {
  readonly session: Session.Session
  readonly buffer: Array<SessionEvent>
  readonly flushLock: Effect.Semaphore
  /** how many events at the head of `buffer` did not come from the session's commits (a fork seed) */
  untrusted: number
}

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

  const drain = (id: string, entry: Entry): Effect.Effect<void, SessionError> =>
    entry.flushLock.withPermits(1)(Effect.suspend(() => {
      if (entry.buffer.length === 0) return Effect.void
      // committed events are vouched for (the backend skips re-validating them); a fork seed is not
      const batch = entry.untrusted > 0 ? entry.buffer.slice() : Validate.committedBatch(entry.buffer)
      return Effect.tap(
        persistence.append(id as SessionId, batch),
        () =>
          Effect.sync(() => {
            entry.buffer.splice(0, batch.length)
            entry.untrusted = Math.max(0, entry.untrusted - batch.length)
          })
      )
    }))

  /** Registers a live session in the caller's scope: lock already held; release drains first. */
  const register = (
    header: SessionHeader,
    build: (onCommit: (event: SessionEvent) => void) => Effect.Effect<Session.Session, SessionError>,
    initialBuffer: ReadonlyArray<SessionEvent>
  ): Effect.Effect<Session.Session, SessionError, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.gen(function*() {
        if (live.has(header.id)) {
          return yield* SessionErrors.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(header.id)} is already live`, {
            sessionId: header.id
          })
        }
        const buffer: Array<SessionEvent> = [...initialBuffer]
        const session = yield* build((event) => {
          buffer.push(event)
        })
        const entry: Entry = {
          session,
          buffer,
          flushLock: yield* Effect.makeSemaphore(1),
          untrusted: initialBuffer.length
        }
        live.set(header.id, entry)
        return entry
      }),
      (entry) =>
        drain(header.id, entry).pipe(
          Effect.catchAll((error) =>
            Effect.logError(
              `session ${header.id}: ${entry.buffer.length} event(s) could not be persisted at release`,
              error
            )
          ),
          Effect.ensuring(Effect.sync(() => {
            if (live.get(header.id) === entry) live.delete(header.id)
          }))
        )
    ).pipe(Effect.map((entry) => entry.session))

  /**
   * Runs `body` in a child of the caller's scope that is closed at once when `body` fails (so a
   * lock taken before a later step fails is released), else when the caller's scope closes.
   */
  const guarded = <A>(body: Effect.Effect<A, SessionError, Scope.Scope>): Effect.Effect<A, SessionError, Scope.Scope> =>
    Effect.flatMap(Effect.scope, (parent) =>
      Effect.flatMap(Scope.fork(parent, ExecutionStrategy.sequential), (child) =>
        Effect.onError(Scope.extend(body, child), (cause) => Scope.close(child, Exit.failCause(cause)))))

  const create = (options: CreateOptions = {}) =>
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
        return yield* register(header, (onCommit) => Session.make({ header, onCommit }), [])
      }))
    })

  const open = (id: string) =>
    guarded(Effect.gen(function*() {
      yield* persistence.lock(id as SessionId)
      const loaded = yield* persistence.load(id as SessionId)
      return yield* register(
        loaded.header,
        (onCommit) => Session.make({ header: loaded.header, seed: loaded.events, onCommit }),
        []
      )
    }))

  const fork = (source: Session.Session | string, boundary?: number, childId?: string) =>
    Effect.gen(function*() {
      const plan = yield* Fork.plan(registry, source, boundary, childId)
      return yield* guarded(Effect.gen(function*() {
        yield* persistence.lock(plan.header.id)
        yield* persistence.create(plan.header)
        return yield* register(
          plan.header,
          (onCommit) => Session.make({ header: plan.header, seed: plan.seed, onCommit }),
          plan.seed
        )
      }))
    })

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
    stored: () => persistence.list(),
    flush: (id) => Effect.flatMap(entryOf(id), (entry) => drain(id, entry)),
    pending: (id) => Effect.map(entryOf(id), (e) => e.buffer.length)
  })
})

/**
 * The store over the `SessionPersistence` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SessionStore, never, SessionPersistence> = Layer.effect(SessionStore, make)

/**
 * The store over a fresh in-memory backend (tests, offline demos).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionStore> = layer.pipe(Layer.provide(Memory.layer))
