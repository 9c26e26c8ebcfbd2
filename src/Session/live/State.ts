/**
 * The state of one live session (`Session.make`) and the types its parts share: the batch to
 * append, the observers, and the publications an effect runs inside (re-entrancy, S-10).
 *
 * @since 0.1.0
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import type * as Result from "effect/Result"
import type { Message } from "../../Llm/Message.js"
import type { SessionError } from "../SessionError.js"
import type { AppendInput, EpochHeader, SessionEvent } from "../SessionEvent.js"
import type * as Surface from "../Surface.js"


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
 * unknown-error: user callback. A failure is contained (logged), never propagated to the appender.
 *
 * @since 0.1.0
 * @category models
 */
export type Observer = (event: SessionEvent) => Effect.Effect<void, unknown>

/** A batch to append: `length` inputs, each committed by `commit(i, time)` (or handed out one by one as `input(i)`). */
export interface Batch {
  readonly length: number
  readonly input: (i: number) => AppendInput
  readonly commit: (i: number, time: number) => Result.Result<SessionEvent, SessionError>
}

export interface Publication {
  readonly owner: object
  active: boolean
}

/**
 * The publications the current effect runs inside (re-entrancy detection, S-10): each
 * publication provides its token to its observers' run (`Effect.updateService`), so the fibers
 * they fork inherit the tokens current when they were forked; a token stops counting once its
 * publication ended (`active`). (Effect 3 kept a per-fiber holder mutated in place in a FiberRef;
 * Effect 4 has no FiberRef, and a context value is read-only.)
 */
export const publishing: Context.Reference<ReadonlyArray<Publication>> = Context.Reference<ReadonlyArray<Publication>>(
  "effect-harness/Session/publishing",
  { defaultValue: () => [] }
)

export interface ObserverEntry {
  readonly observer: Observer
}

export interface State {
  /** the events held in memory, in seq order: every event except the dropped chunks */
  readonly log: Array<SessionEvent>
  /** the seq the next commit gets (`log.length` + `dropped`) */
  length: number
  /** how many chunk events were dropped from memory (all below `scanned`) */
  dropped: number
  /** how many held `assistant/message` events were slimmed (their `sourceEventSeqs` left to the stored log) */
  slimmed: number
  /** events below this seq were looked at for dropping */
  scanned: number
  readonly surface: Surface.State
  requestHeader: EpochHeader | undefined
  nextTurn: number
  eventsSnapshot: ReadonlyArray<SessionEvent> | undefined
  surfaceSnapshot: SurfaceView | undefined
  derived: Array<Message>
  derivedNodes: number
  derivedGeneration: number
  observers: ReadonlyArray<ObserverEntry>
  activePublications: number
  /** an append holds the lock (between acquiring it and releasing it) */
  holding: boolean
  /** with `persist`: how many events of the log were published (the rest await a persist) */
  published: number
}
