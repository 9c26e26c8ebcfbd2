/**
 * A live session: the append-only event log that is the single source of truth (§6). Model
 * messages are derived from it (`deriveMessages`), never stored beside it.
 *
 * Contract (implemented by `make` below; see S-3..S-19):
 * - `append` is all-or-nothing and serialized: validates lossless JSON and surface intent, stores a
 *   detached deeply frozen snapshot with the next contiguous `seq`, then notifies observers in seq
 *   order. An observer failure is contained (logged), never propagated. An append issued from an
 *   observer while a publication runs fails `REENTRANT_APPEND` (S-10).
 * - `events` returns an immutable snapshot array that never grows once returned.
 * - `deriveMessages` is cached per surface node: each call costs O(new nodes) and returns a new
 *   array of shared immutable messages; a replace rebuilds it (S-15).
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Message, SessionId } from "../Llm/Message.js"
import type { SessionError } from "./SessionError.js"
import type { AppendInput, EpochHeader, SessionEvent, SessionHeader } from "./SessionEvent.js"

/**
 * The live surface (S-13): the ordered events that become model messages, and how many replaces
 * happened.
 *
 * @since 0.1.0
 * @category models
 */
export interface SurfaceView {
  readonly nodes: ReadonlyArray<SessionEvent>
  readonly replaceGeneration: number
}

/**
 * An observer, run inline after each commit in seq order.
 *
 * @since 0.1.0
 * @category models
 */
export type Observer = (event: SessionEvent) => Effect.Effect<void, unknown>

/**
 * A live session handle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  readonly id: SessionId
  readonly header: SessionHeader
  /** Appends one event (seq and time assigned) and returns the stored snapshot. */
  readonly append: (input: AppendInput) => Effect.Effect<SessionEvent, SessionError>
  /** Immutable snapshot of every event so far. */
  readonly events: Effect.Effect<ReadonlyArray<SessionEvent>>
  /** The seq the next append will get. */
  readonly nextSeq: Effect.Effect<number>
  /** The live surface. */
  readonly surface: Effect.Effect<SurfaceView>
  /** Model messages derived from the surface (S-14, S-15). */
  readonly deriveMessages: Effect.Effect<ReadonlyArray<Message>>
  /** The latest logged request header, canonical (S-19), or `undefined`. */
  readonly requestHeader: Effect.Effect<EpochHeader | undefined>
  /** Registers an inline observer for the lifetime of the scope. */
  readonly observe: (observer: Observer) => Effect.Effect<void, never, Scope.Scope>
  /** Every event committed after subscription, in seq order (publish-after-commit `PubSub`). */
  readonly changes: Stream.Stream<SessionEvent>
}
