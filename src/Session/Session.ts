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
import * as Context from "effect/Context"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Json from "../Llm/Json.js"
import type { Message, SessionId } from "../Llm/Message.js"
import type { StreamChunk } from "../Llm/StreamChunk.js"
import * as ChunkFastPath from "./ChunkFastPath.js"
import * as Projection from "./Projection.js"
import * as RequestHeader from "./RequestHeader.js"
import type { SessionError } from "./SessionError.js"
import * as SessionErrors from "./SessionError.js"
import type { AppendInput, EpochHeader, SessionEvent, SessionHeader } from "./SessionEvent.js"
import { FORMAT_VERSION, SessionHeaderSchema } from "./SessionEvent.js"
import type { AppendNow } from "./SessionPersistence.js"
import * as Surface from "./Surface.js"
import * as Validate from "./Validate.js"

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

/** A batch to append: `length` inputs, each committed by `commit(i, time)` (or handed out one by one as `input(i)`). */
interface Batch {
  readonly length: number
  readonly input: (i: number) => AppendInput
  readonly commit: (i: number, time: number) => Result.Result<SessionEvent, SessionError>
}

/** a non-negative safe integer other than `-0`: what the payload schema accepts as a turn or step */
const isNat = (n: number): boolean => Number.isSafeInteger(n) && n >= 0 && !Object.is(n, -0)

interface Publication {
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
const publishing: Context.Reference<ReadonlyArray<Publication>> = Context.Reference<ReadonlyArray<Publication>>(
  "effect-harness/Session/publishing",
  { defaultValue: () => [] }
)

interface ObserverEntry {
  readonly observer: Observer
}

interface State {
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
}

const projected = new WeakMap<SessionEvent, Message | null>()

const project = (event: SessionEvent): Message | undefined => {
  const cached = projected.get(event)
  if (cached !== undefined) return cached ?? undefined
  const m = Projection.deriveEventMessage(event)
  projected.set(event, m ?? null)
  return m
}

const decodeHeader = Schema.decodeUnknownResult(SessionHeaderSchema)

const validateHeader = (header: unknown): Result.Result<SessionHeader, SessionError> => {
  const snap = Json.snapshot(header)
  if (Result.isFailure(snap)) return Result.fail(SessionErrors.make("INVALID_EVENT", `S-12: header: ${snap.failure.message}`))
  return Result.mapError(
    decodeHeader(snap.success),
    (e) => SessionErrors.make("INVALID_EVENT", `S-12: invalid session header: ${e.message}`)
  ).pipe(Result.map((h) => Object.freeze(h) as SessionHeader))
}

/** The first position in `log` (sorted by seq) whose seq is at least `seq`. */
const lowerBound = (log: ReadonlyArray<SessionEvent>, seq: number): number => {
  let lo = 0
  let hi = log.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((log[mid] as SessionEvent).seq < seq) lo = mid + 1
    else hi = mid
  }
  return lo
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
      holding: false
    }
    const owner = {}
    const onCommit = options.onCommit
    const persist = options.persist
    const stored = persist === undefined ? undefined : options.stored
    const persistNow = persist === undefined ? undefined : options.persistNow
    const pubsub = yield* PubSub.unbounded<SessionEvent>()
    /** with `persist`: how many events of the log were published (the rest await a persist) */
    let published = seeded.length

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

    const contained = (entry: ObserverEntry, event: SessionEvent): Effect.Effect<void> =>
      Effect.catchCause(
        Effect.suspend(() => entry.observer(event)),
        (cause) => Effect.logWarning(`session ${header.id}: observer failed on ${event.type} #${event.seq} (contained)`, cause)
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

    // made when it happens (an error made up front keeps its stack trace, and what it references, per session)
    const reentrant = () => SessionErrors.make(
      "REENTRANT_APPEND",
      `S-10: session ${header.id}: append issued from inside another append's publication`,
      { sessionId: header.id }
    )

    // The append lock: a FIFO mutex whose uncontended acquisition is synchronous (`state.holding`
    // flips in place). Releasing hands the lock straight to the oldest waiter (it stays held).
    const waiters: Array<() => void> = []
    const release = (): void => {
      const next = waiters.shift()
      if (next === undefined) state.holding = false
      else next()
    }
    // Waits for the lock (interruptible); an interrupted waiter that was already handed the lock
    // passes it on.
    const waitForLock: Effect.Effect<void> = Effect.callback<void>((resume) => {
      const wake = () => resume(Effect.void)
      waiters.push(wake)
      return Effect.sync(() => {
        const i = waiters.indexOf(wake)
        if (i >= 0) waiters.splice(i, 1)
        else release()
      })
    })
    const releaseLock = Effect.sync(release)

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

    // Write-through (under the lock, uninterruptible): persist what was committed, then publish
    // every committed event not yet published, in seq order.
    const publishBacklog = (): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (published >= state.length) return Effect.void
        // nothing at or above `published` was dropped (dropping follows publication)
        const event = state.log[published - state.dropped] as SessionEvent
        published++
        PubSub.publishUnsafe(pubsub, event)
        return Effect.andThen(notify(event), publishBacklog())
      })
    /**
     * Drops from memory the chunk events cited by the `assistant/message` events persisted and
     * published since the last call (they are all in the stored log now). Cited seqs are below
     * the citing event's seq, so everything at or above `scanned` is still in `log`.
     */
    /** the held messages that left their `sourceEventSeqs` to the stored log (`events` reads them back) */
    const slimEvents = new WeakSet<SessionEvent>()
    const dropPersistedChunks = (): void => {
      if (stored === undefined) return
      let cited: Set<number> | undefined
      let lowest = Infinity
      for (let seq = state.scanned; seq < published; seq++) {
        const at = seq - state.dropped
        const event = state.log[at] as SessionEvent
        if (event.type !== "assistant/message" || event.sourceEventSeqs === undefined) continue
        for (const s of event.sourceEventSeqs) {
          if (cited === undefined) cited = new Set()
          cited.add(s)
          if (s < lowest) lowest = s
        }
        if (event.sourceEventSeqs.length === 0) continue
        // the citations are in the stored log too: held (and on the surface) without them, 8 bytes a chunk
        const { sourceEventSeqs: _cited, ...rest } = event
        const slim = Object.freeze(rest) as SessionEvent
        slimEvents.add(slim)
        state.log[at] = slim
        const node = state.surface.positions.get(seq)
        if (node !== undefined && state.surface.nodes[node] === event) state.surface.nodes[node] = slim
        state.slimmed++
        state.surfaceSnapshot = undefined
        state.eventsSnapshot = undefined
      }
      state.scanned = published
      if (cited === undefined) return
      const log = state.log
      let from = lowerBound(log, lowest)
      let to = from
      for (; from < log.length; from++) {
        const event = log[from] as SessionEvent
        if (event.type === "assistant/chunk" && cited.has(event.seq)) continue
        log[to++] = event
      }
      const removed = log.length - to
      if (removed === 0) return
      log.length = to
      state.dropped += removed
      state.eventsSnapshot = undefined
    }

    const persistAndPublish = (p: Effect.Effect<void, SessionError>): Effect.Effect<void, SessionError> =>
      Effect.andThen(p, Effect.andThen(publishBacklog(), Effect.sync(dropPersistedChunks)))

    /** Every event so far: the held ones, and the dropped chunks read back from the stored log. */
    const readBack = (read: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>) =>
      Effect.suspend(() => {
        const held = state.log.slice()
        const length = state.length
        return Effect.flatMap(read, (all) => {
          const out: Array<SessionEvent> = new Array(length)
          let h = 0
          for (let seq = 0; seq < length; seq++) {
            const mine = held[h]
            const back = all[seq]
            if (mine !== undefined && mine.seq === seq) {
              h++
              if (!slimEvents.has(mine)) {
                out[seq] = mine
                continue
              }
            }
            const expected = mine !== undefined && mine.seq === seq ? mine.type : "assistant/chunk"
            if (back === undefined || back.seq !== seq || back.type !== expected) {
              return Effect.fail(SessionErrors.make(
                "CORRUPT_LOG",
                `session ${header.id}: event #${seq} is no longer in memory and the stored log does not hold it`,
                { sessionId: header.id }
              ))
            }
            out[seq] = back
          }
          return Effect.succeed(Object.freeze(out) as ReadonlyArray<SessionEvent>)
        })
      })

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
      while (published < state.length) PubSub.publishUnsafe(pubsub, state.log[published++ - state.dropped] as SessionEvent)
      dropPersistedChunks()
    }

    /** Under the lock (held on entry): commit each input, persist, publish; releases the lock. */
    const underLockThrough = (
      p: Effect.Effect<void, SessionError>,
      batch: Batch
    ): Effect.Effect<Array<SessionEvent>, SessionError> =>
      Effect.clockWith((clock) => {
        const { failure, out } = commitAll(batch, clock)
        if (out.length === 0 && published >= state.length) {
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
          Effect.suspend(() => (published >= state.length ? Effect.void : persistAndPublish(p))),
          releaseLock
        )
        if (!state.holding) {
          state.holding = true
          return run
        }
        return Effect.andThen(restore(waitForLock), run)
      })

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
        state.observers.length === 0 && published >= state.length
      ) {
        return nowOrBacklog(batch)
      }
      if (persist !== undefined) {
        // an empty batch is a flush point: it retries an unsaved backlog and publishes it
        if (batch.length === 0 && published >= state.length) return Effect.succeed([])
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
      observe: (observer) =>
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
      // built when read: the stream's structure is a few KB, per live session (issue 20)
      changes: Stream.suspend(() => Stream.fromPubSub(pubsub)),
      subscribe: PubSub.subscribe(pubsub)
    }
    return session
  })
