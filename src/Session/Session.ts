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
 * Decisions where the spec is silent (DEC-10):
 * - Time is `Clock.currentTimeMillis` (so `TestClock` drives it); events carry epoch ms.
 * - Publication (observers) runs under the append lock and uninterruptibly: once an event is
 *   committed every observer sees it, in seq order, even if the appending fiber is interrupted
 *   meanwhile (the interruption lands when `append` returns). Observers must therefore be short;
 *   one that never completes blocks later appends.
 * - When no observer is registered and no append holds the lock, validation, commit and the
 *   `changes` offer are one synchronous step (no lock round trip): this is the hot path of
 *   streaming chunks. The `changes` PubSub is always offered in the commit step, so its
 *   subscribers see commit order. `appendAll` extends this to a whole batch (one synchronous loop
 *   of commits); otherwise it is `append` on each input in turn.
 * - Re-entrancy is tracked with a `Context.Reference` of active publications: each publication
 *   provides its token to its observers' run, so an append from an observer (or a fiber it forks
 *   while the publication runs) of the SAME session fails `REENTRANT_APPEND`; appending to another
 *   session from an observer is allowed, and so is an append made after the publication ended.
 *   A fiber sees the tokens in its context (inherited at fork), not the fiber that published:
 *   a fiber started from a context captured outside the publication is not inside it.
 * - Turn numbers (S-17): `nextTurn` = the last `turn/start` turn (0 if none) + 1, so the first
 *   turn of a session is 1.
 * - Write-through (DEC-11, `persist` option): with a `persist` hook every append (and every
 *   `appendAll` batch) commits, then runs `persist` under the append lock, and only when it
 *   succeeds publishes (to `changes` and to the observers) every committed event not yet published,
 *   in seq order: printed ⇒ written. A failed `persist` fails the append with its error; the events
 *   stay committed in memory and unpublished, and are published after the next successful
 *   `persist` (which retries them); an empty `appendAll` is such a retry when events await one.
 *   Without `persist`, commit and publication are as above.
 * - Synchronous write-through (issue 20, decision 0022; `persistNow` option): with no observer to
 *   run, a batch is committed, written through `persistNow` and offered to `changes` in one
 *   synchronous step. When the backend cannot write now, the committed events are a backlog that
 *   the same call persists and publishes under the lock (an interruption in between leaves it to
 *   the next append or flush: nothing is lost, the order holds).
 * - The log state is a single-writer mutable structure owned by the session, mutated only in
 *   synchronous sections under the append discipline above; readers get frozen snapshots. (A
 *   `Ref` of immutable arrays would cost O(n) per append.)
 * - Bounded memory (issue 20, decision 0017; `stored` option, write-through only): once an
 *   `assistant/message` was persisted and published, the `assistant/chunk` events it cites
 *   (`sourceEventSeqs`) are dropped from memory; the log on disk keeps them. `events` then reads
 *   the stored log back (`stored`) and fills them in, so it returns exactly what it returned
 *   before, and may fail with the backend's error. Surface, messages, turn numbers and headers
 *   never needed chunks, so they are unchanged. The message itself is then held without its
 *   `sourceEventSeqs` (decision 0020), which `events` reads back too.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Json from "../Llm/Json.js"
import type { Message, SessionId } from "../Llm/Message.js"
import type { StreamChunk } from "../Llm/StreamChunk.js"
import * as ChunkFastPath from "./ChunkFastPath.js"
import * as RequestHeader from "./RequestHeader.js"
import type { SessionError } from "./SessionError.js"
import * as SessionErrors from "./SessionError.js"
import type { AppendInput, EpochHeader, SessionEvent, SessionHeader } from "./SessionEvent.js"
import { FORMAT_VERSION, SessionHeaderSchema } from "./SessionEvent.js"
import type { AppendNow } from "./SessionPersistence.js"
import * as Surface from "./Surface.js"
import * as Validate from "./Validate.js"
import * as Lock from "./live/Lock.js"
import * as Offload from "./live/Offload.js"
import * as Publish from "./live/Publish.js"
import { publishing } from "./live/State.js"
import type { Batch, Observer, State, SurfaceView } from "./live/State.js"
import * as Views from "./live/Views.js"
import * as WriteThrough from "./live/WriteThrough.js"

export type { Observer, SurfaceView } from "./live/State.js"

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
  /**
   * Appends several events in order, exactly as `append` on each in turn would (each one
   * all-or-nothing with its own seq and time; the first failure stops the batch and fails with that
   * error, the events before it staying committed). Returns the stored snapshots. When nothing
   * observes the session and no append is in flight, the whole batch is one synchronous step.
   */
  readonly appendAll: (inputs: ReadonlyArray<AppendInput>) => Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>
  /**
   * Appends one `assistant/chunk` event per chunk, at `turn` and `step`, in order: exactly
   * `appendAll` of the inputs `{ type: "assistant/chunk", data: { turn, step, chunk } }`, without
   * building them (the loop's per-batch hot path, issue 20).
   */
  readonly appendChunks: (
    turn: number,
    step: number,
    chunks: ReadonlyArray<StreamChunk>
  ) => Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>
  /**
   * Immutable snapshot of every event so far. A store-backed session reads the chunk events it
   * dropped from memory back from its backend (so this may fail with the backend's error).
   */
  readonly events: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>
  /**
   * Immutable snapshot of the events held in memory, in seq order: every event except the
   * `assistant/chunk` events a store-backed session dropped once their `assistant/message` was
   * persisted (decision 0017); such a message is held without its `sourceEventSeqs` (decision
   * 0020). Never reads the backend: for readers of the recent non-chunk history (the current
   * turn's messages, results and decisions).
   */
  readonly heldEvents: Effect.Effect<ReadonlyArray<SessionEvent>>
  /** The seq the next append will get. */
  readonly nextSeq: Effect.Effect<number>
  /** The next turn number (S-17): the last `turn/start` turn (0 if none) + 1. */
  readonly nextTurn: Effect.Effect<number>
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
  /**
   * Subscribes now (the subscription exists when this returns) to every event committed from
   * then on, in seq order, for the lifetime of the scope.
   */
  readonly subscribe: Effect.Effect<PubSub.Subscription<SessionEvent>, never, Scope.Scope>
}

// ---------------------------------------------------------------------------------------------
// Implementation

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  /** The session header (S-12); validated. Omitted: a header is synthesized (bare session). */
  readonly header?: SessionHeader
  /** Id of a synthesized header (default: a random UUID). Ignored when `header` is given. */
  readonly id?: string
  /** cwd of a synthesized header (absolute). Ignored when `header` is given. */
  readonly cwd?: string
  /** Events to seed the log with (replay, fork, resume), validated per S-11; publishes nothing. */
  readonly seed?: ReadonlyArray<unknown>
  /**
   * Called synchronously right after each commit, before observers and `changes` (used by
   * `SessionStore` to buffer events for the durable write path, D-7). Must not throw.
   */
  readonly onCommit?: (event: SessionEvent) => void
  /**
   * Write-through (DEC-11): run under the append lock after each append or `appendAll` batch
   * commits and before anything is published; observers and `changes` see an event only after a
   * `persist` that followed its commit succeeded. A failure fails the append (the events stay
   * committed and are published after the next successful `persist`).
   */
  readonly persist?: Effect.Effect<void, SessionError>
  /**
   * The synchronous form of `persist` (with `persist` only; issue 20): tried first, in the same
   * synchronous step as the commit, when no observer needs publishing; `"later"` falls back to
   * `persist`. Same meaning of success and failure.
   */
  readonly persistNow?: () => AppendNow
  /**
   * The stored log of this session (with `persist` only): when given, the chunk events of a
   * persisted `assistant/message` are dropped from memory and `events` reads them back through
   * this (decision 0017). Events are looked up by seq; extra trailing events are ignored.
   */
  readonly stored?: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>
}


/** a non-negative safe integer other than `-0`: what the payload schema accepts as a turn or step */
const isNat = (n: number): boolean => Number.isSafeInteger(n) && n >= 0 && !Object.is(n, -0)

const decodeHeader = Schema.decodeUnknownResult(SessionHeaderSchema)

const validateHeader = (header: unknown): Result.Result<SessionHeader, SessionError> => {
  const snap = Json.snapshot(header)
  if (Result.isFailure(snap)) return Result.fail(SessionErrors.make("INVALID_EVENT", `S-12: header: ${snap.failure.message}`))
  return Result.mapError(
    decodeHeader(snap.success),
    (e) => SessionErrors.make("INVALID_EVENT", `S-12: invalid session header: ${e.message}`)
  ).pipe(Result.map((h) => Object.freeze(h) as SessionHeader))
}

const nextTurnOf = (events: ReadonlyArray<SessionEvent>): number => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent
    if (e.type === "turn/start") return e.data.turn + 1
  }
  return 1
}

/**
 * Creates a live session (S-3..S-19).
 *
 * - `append` is serialized by a FIFO lock (taken synchronously when free); validation and commit
 *   are one synchronous step (all or nothing); then, still under the lock and uninterruptibly, the event is published to the
 *   `changes` PubSub and to each observer in registration order. An observer failure (or defect)
 *   is logged and contained. An `append` issued from inside an observer of the same session (or a
 *   fiber it forked while the publication runs) fails `REENTRANT_APPEND`.
 * - `time` comes from `Clock` (so `TestClock` controls it).
 * - `deriveMessages` is cached per node: each call projects only the surface nodes added since the
 *   previous call, rebuilds after a replace, and returns a new array of shared frozen messages.
 * - Seeding validates per S-11 and publishes nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: MakeOptions = {}): Effect.Effect<Session, SessionError> =>
  Effect.gen(function*() {
    const rawHeader: unknown = options.header ?? {
      version: FORMAT_VERSION,
      id: options.id ?? (yield* Effect.sync(() => crypto.randomUUID())),
      createdAt: yield* Clock.currentTimeMillis,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd })
    }
    const header = yield* Effect.fromResult(validateHeader(rawHeader))
    const surface = Surface.makeState()
    const seeded = yield* Effect.fromResult(Validate.seedInto(surface, options.seed ?? []))
    const state: State = {
      log: seeded.slice(),
      length: seeded.length,
      dropped: 0,
      slimmed: 0,
      scanned: 0,
      surface,
      requestHeader: RequestHeader.foldRequestHeader(seeded),
      nextTurn: nextTurnOf(seeded),
      eventsSnapshot: seeded,
      surfaceSnapshot: undefined,
      derived: [],
      derivedNodes: 0,
      derivedGeneration: 0,
      observers: [],
      activePublications: 0,
      holding: false,
      published: seeded.length
    }
    const owner = {}
    const onCommit = options.onCommit
    const persist = options.persist
    const stored = persist === undefined ? undefined : options.stored
    const persistNow = persist === undefined ? undefined : options.persistNow
    const pubsub = yield* PubSub.unbounded<SessionEvent>()

    const commit = (input: AppendInput, time: number): Result.Result<SessionEvent, SessionError> => {
      const r = Validate.appendInput(state.surface, input, state.length, time)
      if (Result.isSuccess(r)) accept(r.success)
      return r
    }

    /** Commits one chunk of a vouched `turn`/`step` (see `appendChunks`); the generic path decides the rest. */
    const commitChunk = (turn: number, step: number, chunk: StreamChunk, time: number): Result.Result<SessionEvent, SessionError> => {
      const fast = ChunkFastPath.chunkEventOf(turn, step, chunk, state.length, time) as SessionEvent | undefined
      if (fast === undefined) return commit({ type: "assistant/chunk", data: { turn, step, chunk } }, time)
      accept(fast)
      return Result.succeed(fast)
    }

    /** Adds a validated event to the log (the commit step after validation). */
    const accept = (event: SessionEvent): void => {
      state.log.push(event)
      state.length++
      Surface.apply(state.surface, event)
      state.eventsSnapshot = undefined
      if (event.surfaceOp !== undefined) state.surfaceSnapshot = undefined
      if (event.type === "request/header") state.requestHeader = RequestHeader.canonicalize(event.data.header)
      else if (event.type === "turn/start") state.nextTurn = event.data.turn + 1
      if (onCommit !== undefined) onCommit(event)
      // same synchronous step as the commit: the PubSub sees events in commit order
      // (write-through publishes after `persist` instead)
      if (persist === undefined) PubSub.publishUnsafe(pubsub, event)
    }

    const inputsBatch = (inputs: ReadonlyArray<AppendInput>): Batch => ({
      length: inputs.length,
      input: (i) => inputs[i] as AppendInput,
      commit: (i, time) => commit(inputs[i] as AppendInput, time)
    })

    const chunksBatch = (turn: number, step: number, chunks: ReadonlyArray<StreamChunk>): Batch => {
      const input = (i: number): AppendInput => ({ type: "assistant/chunk", data: { turn, step, chunk: chunks[i] as StreamChunk } })
      // the fast path needs `turn` and `step` as the payload schema wants them; else every input is generic
      const vouched = isNat(turn) && isNat(step)
      return {
        length: chunks.length,
        input,
        commit: vouched
          ? (i, time) => commitChunk(turn, step, chunks[i] as StreamChunk, time)
          : (i, time) => commit(input(i), time)
      }
    }

    const notify = Publish.make(state, owner, header.id)

    // made when it happens (an error made up front keeps its stack trace, and what it references, per session)
    const reentrant = () => SessionErrors.make(
      "REENTRANT_APPEND",
      `S-10: session ${header.id}: append issued from inside another append's publication`,
      { sessionId: header.id }
    )

    const lock = Lock.make(state)
    const { release, waitForLock, releaseLock } = lock
    const offload = Offload.make(state, header.id, stored)
    const { through, nowOrBacklog } = WriteThrough.make({
      state,
      pubsub,
      persist,
      persistNow,
      notify,
      lock,
      dropPersistedChunks: offload.dropPersistedChunks
    })

    // Under the lock (held on entry): commit, then publish to the observers, uninterruptibly
    // (every observer sees every committed event, in seq order); the lock is released after.
    const underLock = (input: AppendInput): Effect.Effect<SessionEvent, SessionError> =>
      Effect.clockWith((clock) => {
        const r = commit(input, clock.currentTimeMillisUnsafe())
        if (Result.isFailure(r)) {
          release()
          return Effect.fail(r.failure)
        }
        const event = r.success
        if (state.observers.length === 0) {
          release()
          return Effect.succeed(event)
        }
        return Effect.as(Effect.ensuring(notify(event), releaseLock), event)
      })

    // Slow path: take the lock (synchronously when free), commit and publish uninterruptibly.
    const locked = (input: AppendInput): Effect.Effect<SessionEvent, SessionError> =>
      Effect.uninterruptibleMask((restore) => {
        if (!state.holding) {
          state.holding = true
          return underLock(input)
        }
        return Effect.andThen(restore(waitForLock), underLock(input))
      })

    // Fast path: nobody holds the lock and nobody observes, so validation, commit and the PubSub
    // offer are one synchronous step (atomic; no publication can interleave).
    const fast = (input: AppendInput): Effect.Effect<SessionEvent, SessionError> =>
      Effect.clockWith((clock) => Effect.fromResult(commit(input, clock.currentTimeMillisUnsafe())))

    const throughOne = (p: Effect.Effect<void, SessionError>, input: AppendInput) =>
      Effect.map(through(p, inputsBatch([input])), (out) => out[0] as SessionEvent)

    const append = (input: AppendInput): Effect.Effect<SessionEvent, SessionError> => {
      if (state.activePublications > 0) {
        return Effect.flatMap(Effect.service(publishing), (tokens) =>
          tokens.some((t) => t.owner === owner && t.active)
            ? Effect.failSync(reentrant)
            : persist === undefined
            ? locked(input)
            : throughOne(persist, input))
      }
      if (persist !== undefined) return throughOne(persist, input)
      return state.holding || state.observers.length > 0 ? locked(input) : fast(input)
    }

    // The fast path over a batch: the same conditions hold for the whole synchronous loop (no
    // observer can register and no append can start while it runs).
    const appendAll = (batch: Batch): Effect.Effect<ReadonlyArray<SessionEvent>, SessionError> => {
      if (
        persistNow !== undefined && batch.length > 0 && !state.holding && state.activePublications === 0 &&
        state.observers.length === 0 && state.published >= state.length
      ) {
        return nowOrBacklog(batch)
      }
      if (persist !== undefined) {
        // an empty batch is a flush point: it retries an unsaved backlog and publishes it
        if (batch.length === 0 && state.published >= state.length) return Effect.succeed([])
        if (state.activePublications === 0) return through(persist, batch)
        return Effect.flatMap(Effect.service(publishing), (tokens) =>
          tokens.some((t) => t.owner === owner && t.active) ? Effect.failSync(reentrant) : through(persist, batch))
      }
      if (state.activePublications > 0 || state.holding || state.observers.length > 0) {
        return Effect.forEach(Array.from({ length: batch.length }, (_, i) => batch.input(i)), append)
      }
      return Effect.clockWith((clock) => {
        const out: Array<SessionEvent> = new Array(batch.length)
        for (let i = 0; i < batch.length; i++) {
          const r = batch.commit(i, clock.currentTimeMillisUnsafe())
          if (Result.isFailure(r)) return Effect.fail(r.failure)
          out[i] = r.success
        }
        return Effect.succeed(out)
      })
    }

    const session: Session = {
      id: header.id,
      header,
      append: (input) => Effect.suspend(() => append(input)),
      appendAll: (inputs) => Effect.suspend(() => appendAll(inputsBatch(inputs))),
      appendChunks: (turn, step, chunks) => Effect.suspend(() => appendAll(chunksBatch(turn, step, chunks))),
      ...Views.make(state, stored, offload.readBack),
      // built when read: the stream's structure is a few KB, per live session (issue 20)
      changes: Stream.suspend(() => Stream.fromPubSub(pubsub)),
      subscribe: PubSub.subscribe(pubsub)
    }
    return session
  })
