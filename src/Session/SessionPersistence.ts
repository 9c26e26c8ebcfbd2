/**
 * The persistence contract (§7, D-1..D-12, DEC-4, DEC-9): where durable session logs live.
 * Backends are Layers of the {@link SessionPersistence} Tag: `Memory` (tests), `Jsonl` (the
 * embedded default) and `Sqlite`. The persisted unit is the session event verbatim; the header is
 * stored beside it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { SessionId } from "../Llm/Message.js"
import type { SessionError } from "./SessionError.js"
import type { SessionEvent, SessionHeader } from "./SessionEvent.js"

/**
 * Where a session is stored, when the backend can say without I/O (`locate`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Location {
  readonly kind: string
  readonly path: string
}

/**
 * What a session picker needs (`list`), read from headers and tails, not whole logs.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionSummary {
  readonly header: SessionHeader
  /** time of the last stored event (or creation) */
  readonly updatedAt: number
  /** number of `turn/start` events */
  readonly turns: number
  /** first line of the first `user/message` text, if any */
  readonly firstPrompt?: string
  readonly location?: Location
}

/**
 * A loaded log: header, events (already repaired per D-4) and what the repair appended (durably for
 * `load`, in memory only for `snapshot`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly header: SessionHeader
  readonly events: ReadonlyArray<SessionEvent>
  /** closers appended durably by crash repair during this load (empty when balanced) */
  readonly repaired: ReadonlyArray<SessionEvent>
  /** number of torn trailing records dropped during this load */
  readonly truncated: number
}

/**
 * Options of `append`.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendOptions {
  /**
   * `true` (default): the batch is durable (fsynced) when `append` resolves. `false`: the batch has
   * reached the operating system (one `write` / one transaction: it survives the death of this
   * process) and is made durable by the next synced append or `sync` (DEC-11 write-through).
   */
  readonly sync?: boolean
}

/**
 * A backend's `append`, optionally carrying its synchronous form `now` (issue 20): `now` writes the
 * batch in the caller's synchronous step when the backend can (same rules and failures as the
 * effect) and answers `"written"`; it answers `"later"` without touching anything when it cannot
 * do it now (an operation of the session in flight, a batch to fsync, a log not open yet), and the
 * caller then runs the effect. `now` lives on the function itself so that a wrapper replacing
 * `append` (to count, delay or fail writes) drops it and every write goes through the wrapper.
 *
 * @since 0.1.0
 * @category models
 */
export interface Append {
  (id: SessionId, events: ReadonlyArray<SessionEvent>, options?: AppendOptions): Effect.Effect<void, SessionError>
  readonly now?: (id: SessionId, events: ReadonlyArray<SessionEvent>, options?: AppendOptions) => AppendNow
}

/**
 * What `Append.now` did: wrote the batch, could not do it synchronously now (nothing touched), or
 * failed like `append` would.
 *
 * @since 0.1.0
 * @category models
 */
export type AppendNow = "written" | "later" | SessionError

/**
 * A persistence backend.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Pure: where the session would be stored, or `undefined` when the backend has no path. */
  readonly locate: (header: SessionHeader) => Location | undefined
  /** Records intent only (D-1); fails `SESSION_ALREADY_EXISTS` when the id is tracked or stored (D-2). */
  readonly create: (header: SessionHeader) => Effect.Effect<void, SessionError>
  /**
   * Appends a contiguous batch durably (D-3): the first seq must equal the stored next seq. The
   * first non-empty append writes header and batch atomically (D-1) and durably. Empty batch = no-op.
   * A failed write or fsync fails `PERSISTENCE_FAILED` naming the file and the OS error; the stored
   * log stays valid and the batch may be retried.
   */
  readonly append: Append
  /**
   * Makes every batch this instance wrote for the session durable (fsync); a no-op when nothing
   * is pending or the session is not stored. Fails `PERSISTENCE_FAILED` like `append`.
   */
  readonly sync: (id: SessionId) => Effect.Effect<void, SessionError>
  /** Loads and repairs durably before returning (D-4, D-5); unknown id → `SESSION_NOT_FOUND`. */
  readonly load: (id: SessionId) => Effect.Effect<Loaded, SessionError>
  /**
   * A consistent read-only snapshot of a stored session (DEC-11 readers): never takes nor checks
   * the writer lock and never writes; a torn tail is dropped and the closers are computed in
   * memory only (`repaired`/`truncated` say what a writer's repair would do). Unknown id →
   * `SESSION_NOT_FOUND`.
   */
  readonly snapshot: (id: SessionId) => Effect.Effect<Loaded, SessionError>
  /** Materialized sessions, most recently updated first (D-6). */
  readonly list: () => Effect.Effect<ReadonlyArray<SessionSummary>, SessionError>
  /** `true` when the session is materialized in storage. */
  readonly exists: (id: SessionId) => Effect.Effect<boolean, SessionError>
  /**
   * Takes the exclusive writer lock for the session for the lifetime of the scope (DEC-4); fails
   * `SESSION_LOCKED` when another writer (this or another process) holds it. A lock left by a dead
   * process is reclaimed.
   */
  readonly lock: (id: SessionId) => Effect.Effect<void, SessionError, Scope.Scope>
  /**
   * Deletes a stored session for good: takes the writer lock while it deletes (fails
   * `SESSION_LOCKED` while another writer holds it); unknown id → `SESSION_NOT_FOUND`.
   */
  readonly remove: (id: SessionId) => Effect.Effect<void, SessionError>
}

/**
 * The persistence backend Tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionPersistence extends Context.Service<SessionPersistence, Service>()(
  "effect-harness/Session/SessionPersistence"
) {}
