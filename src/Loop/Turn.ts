/**
 * The turn (L-11) and the turn enclosure (S-16): a prompt turn drains the queued batch, runs
 * `prompt-submit` per prompt, runs steps, and ends with exactly one `turn/end` followed by the
 * awaited flush checkpoint (D-7); an injection (L-3) lands in the open turn, in the running tool
 * batch's context FIFO, or in its own one-shot injection turn.
 *
 * Turn flow:
 * 1. `turn/start{turn, trigger: {kind: "message", source: first prompt's source}}` — from here a
 *    `turn/end` is owed on every path. A failure before it commits is an agent error at step 0
 *    with nothing appended (L-10).
 * 2. per prompt, `prompt-submit` (default allow): `Block{reason}` → `prompt/blocked`;
 *    `Allow{content?, additionalContexts?}` → `user/message` (replacement or original), then one
 *    `context/message` per context with its own source and meta. All blocked → `rejected{reason
 *    of the last block}` with zero steps.
 * 3. steps ({@link Step.runSteps}).
 * 4. `turn/end{turn, reason}`; flush (a failure is an agent error, never an event).
 * 5. any failure → close an open step, `error{step, message, code?}` and ONE agent error —
 *    unless the agent was disposed meanwhile (U-4: disposal wins unless an error was already
 *    recorded: a failure observed after disposal ends the turn `disposed`).
 *
 * Enclosure decisions (DEC-10): an `inject` that arrives while a `turn/start` or `turn/end` is
 * being appended (e.g. from an observer of those events) waits in a pending list: it is appended
 * right after `turn/start` commits, or gets its own injection turn right after `turn/end` — so
 * every event stays inside a turn and no append is issued from inside another append's
 * publication. An injection turn whose `context/message` append fails ends
 * `error{step: 0, message, code?}` (still closed and flushed) and reports an agent error.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Json from "../Llm/Json.js"
import type { TurnEndReason, TurnTrigger } from "../Session/SessionEvent.js"
import * as BatchContexts from "./BatchContexts.js"
import * as CompactionTrigger from "./Compaction/Trigger.js"
import type { HookContext } from "./HookContext.js"
import * as Hooks from "./Hooks.js"
import type * as Inbox from "./Inbox.js"
import type { AgentState, Runtime, TurnContext } from "./internal/Runtime.js"
import { appendContext, describe, report, toTurnFailure, TurnFailure } from "./internal/Runtime.js"
import * as Spans from "./internal/Spans.js"
import * as Step from "./Step.js"
import * as StepSignal from "./StepSignal.js"

/** Marks the turn open and appends the injections that waited for `turn/start`. */
const opened = (rt: Runtime): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.modify(rt.state, (s) => [s.pending, { ...s, phase: "open" as const, pending: [] }] as const),
    (pending) => Effect.forEach(pending, (context) => appendNow(rt, context), { discard: true })
  )

/** Marks the enclosure free, wakes the driver, and runs the injections that waited for `turn/end`. */
const released = (rt: Runtime): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.modify(rt.state, (s) => [s.pending, { ...s, phase: "none" as const, pending: [] }] as const),
    (pending) =>
      Effect.andThen(
        Queue.offer(rt.wake, undefined),
        Effect.forEach(pending, (context) => inject(rt, context), { discard: true })
      )
  )

const appendNow = (rt: Runtime, context: HookContext): Effect.Effect<void> =>
  Effect.catch(Effect.asVoid(appendContext(rt.session, context)), (error) =>
    Effect.flatMap(Ref.get(rt.state), (s) =>
      report(rt, { turn: s.lastTurn, step: 0, ...describe(error), cause: error })))

/**
 * How an enclosed turn ends its flush: awaited by the caller, or tracked in the agent's fiber set
 * (an idle injection, which disposal awaits).
 */
type FlushMode = "await" | "tracked"

/**
 * The one turn enclosure (S-16, D-7) every kind of turn runs in: `turn/start{turn, trigger}` (a
 * failure is reported and nothing else is appended), the waiting injections, the route when it
 * changed, the body, an open step closed, `turn/end{turn, reason}`, the enclosure released and the
 * flush. The body never fails: it turns its failures into the end reason (and reports them).
 *
 * @since 0.1.0
 * @category internals
 */
export const enclose = (
  rt: Runtime,
  turn: number,
  trigger: TurnTrigger,
  body: (ctx: TurnContext) => Effect.Effect<TurnEndReason>,
  flush: FlushMode = "await"
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const started = yield* Effect.result(rt.session.append({ type: "turn/start", data: { turn, trigger } }))
    if (Result.isFailure(started)) {
      yield* report(rt, { turn, step: 0, ...describe(started.failure), cause: started.failure })
      yield* Ref.update(rt.state, (s) => ({ ...s, signal: undefined }))
      return yield* released(rt)
    }
    yield* opened(rt)
    const ctx = freshContext(turn, started.success.seq)
    const reason = yield* Effect.andThen(logRoute(rt, trigger), body(ctx))
    if (ctx.stepOpen) {
      const closed = yield* Effect.result(rt.session.append({ type: "step/end", data: { turn, step: ctx.step } }))
      if (Result.isFailure(closed)) yield* report(rt, { turn, step: ctx.step, ...describe(closed.failure), cause: closed.failure })
    }
    yield* Ref.update(rt.state, (s) => ({ ...s, phase: "closing" as const, signal: undefined }))
    const ended = yield* Effect.result(rt.session.append({ type: "turn/end", data: { turn, reason } }))
    if (Result.isFailure(ended)) yield* report(rt, { turn, step: ctx.step, ...describe(ended.failure), cause: ended.failure })
    const flushed = Effect.catch(rt.flush, (error) => report(rt, { turn, step: 0, ...describe(error), cause: error }))
    if (flush === "tracked") {
      yield* FiberSet.run(rt.tracked, flushed)
      return yield* released(rt)
    }
    yield* released(rt)
    yield* flushed
  })

/**
 * Logs the agent's route (`session/route`, DEC-16) in a prompt or resumed turn when it differs from
 * the last logged one; a failed append is reported, never fatal.
 */
const logRoute = (rt: Runtime, trigger: TurnTrigger): Effect.Effect<void> =>
  Effect.gen(function*() {
    const wanted = rt.route.wanted
    if (wanted === undefined || (trigger.kind !== "message" && trigger.kind !== "resume")) return
    const logged = yield* Ref.get(rt.route.logged)
    if (logged !== undefined && Json.canonical(logged) === Json.canonical(wanted)) return
    const appended = yield* Effect.result(rt.session.append({ type: "session/route", data: wanted }))
    if (Result.isFailure(appended)) {
      return yield* report(rt, { step: 0, ...describe(appended.failure), cause: appended.failure })
    }
    yield* Ref.set(rt.route.logged, wanted)
  })

/**
 * The end reason of a turn body's exit: its value; `disposed` when the agent was disposed meanwhile
 * (U-4, when `disposedWins`); a {@link TurnFailure} → `error` (reported); anything else (the fiber
 * itself was interrupted, never by the loop) → `aborted: interrupted`.
 *
 * @since 0.1.0
 * @category internals
 */
export const settle = (
  rt: Runtime,
  turn: number,
  exit: Exit.Exit<TurnEndReason, TurnFailure>,
  disposedWins: boolean
): Effect.Effect<TurnEndReason> =>
  Effect.gen(function*() {
    if (Exit.isSuccess(exit)) return exit.value
    if (disposedWins && (yield* Ref.get(rt.state)).disposed) return { kind: "disposed" }
    const failure = Cause.findErrorOption(exit.cause)
    if (Option.isNone(failure) || !(failure.value instanceof TurnFailure)) return { kind: "aborted", reason: "interrupted" }
    const f = failure.value
    yield* report(rt, { turn, step: f.step, message: f.message, ...(f.code === undefined ? {} : { code: f.code }), cause: f.cause })
    return f.code === undefined
      ? { kind: "error", step: f.step, message: f.message }
      : { kind: "error", step: f.step, message: f.message, code: f.code }
  })

const injectionTurn = (rt: Runtime, turn: number, context: HookContext): Effect.Effect<void> =>
  enclose(
    rt,
    turn,
    { kind: "injection", source: context.source },
    () =>
      Effect.gen(function*() {
        const appended = yield* Effect.result(appendContext(rt.session, context))
        if (Result.isSuccess(appended)) return { kind: "completed" } satisfies TurnEndReason
        const failure = describe(appended.failure)
        yield* report(rt, { turn, step: 0, ...failure, cause: appended.failure })
        return { kind: "error", step: 0, ...failure } satisfies TurnEndReason
      }),
    "tracked"
  )

/**
 * Routes one validated, frozen injection (L-3): into the running batch's context FIFO, into the
 * open turn now, into the pending list while the enclosure is changing, or into its own
 * injection turn when no turn is open.
 *
 * @since 0.1.0
 * @category internals
 */
export const inject = (rt: Runtime, context: HookContext): Effect.Effect<void> =>
  Effect.gen(function*() {
    type Route =
      | { readonly _tag: "Batch"; readonly batch: BatchContexts.BatchContexts }
      | { readonly _tag: "Append" }
      | { readonly _tag: "Pending" }
      | { readonly _tag: "Turn"; readonly turn: number }
    const route = yield* Ref.modify(rt.state, (s): readonly [Route, AgentState] => {
      if (s.batch !== undefined) return [{ _tag: "Batch", batch: s.batch }, s]
      switch (s.phase) {
        case "open":
          return [{ _tag: "Append" }, s]
        case "opening":
        case "closing":
          return [{ _tag: "Pending" }, { ...s, pending: [...s.pending, context] }]
        case "none":
          return [{ _tag: "Turn", turn: s.lastTurn + 1 }, { ...s, phase: "opening" as const, lastTurn: s.lastTurn + 1 }]
      }
    })
    switch (route._tag) {
      case "Batch": {
        const queued = yield* BatchContexts.offerFrozen(route.batch, context)
        if (!queued) yield* appendNow(rt, context)
        return
      }
      case "Append":
        return yield* appendNow(rt, context)
      case "Pending":
        return
      case "Turn":
        return yield* injectionTurn(rt, route.turn, context)
    }
  })

const body = (rt: Runtime, ctx: TurnContext, batch: ReadonlyArray<Inbox.Entry>) =>
  Effect.gen(function*() {
    const agent = rt.agent
    let allowed = 0
    let lastBlock = ""
    for (const entry of batch) {
      const decision = yield* rt.hooks.promptSubmit.run(
        agent.id,
        { agent, turn: ctx.turn, content: entry.content, source: entry.source },
        () => Effect.succeed(Hooks.PromptDecision.Allow({}))
      )
      yield* Hooks.PromptDecision.$match(decision, {
        Block: ({ reason }) =>
          Effect.tap(
            rt.session.append({
              type: "prompt/blocked",
              data: { content: entry.content, source: entry.source, reason }
            }),
            () =>
              Effect.sync(() => {
                lastBlock = reason
              })
          ),
        Allow: ({ additionalContexts, content }) =>
          Effect.gen(function*() {
            yield* rt.session.append({
              type: "user/message",
              data: { content: content ?? entry.content, source: entry.source },
              surfaceOp: "append"
            })
            allowed += 1
            for (const context of additionalContexts ?? []) yield* appendContext(rt.session, context)
          })
      })
    }
    if (allowed === 0) return { kind: "rejected", reason: lastBlock } satisfies TurnEndReason
    return yield* Step.runSteps(rt, ctx)
  })

/** The state of a turn that just logged its `turn/start` (at `turnStartSeq`). */
const freshContext = (turn: number, turnStartSeq: number): TurnContext => ({
  turn,
  turnStartSeq,
  step: 0,
  stepOpen: false,
  maxTokens: false,
  retryAttempt: 0,
  compactions: 0,
  overflowCompacted: false
})

/**
 * Runs one prompt turn over a drained batch (L-11). Never fails: every failure becomes the turn's
 * end reason and an agent error.
 *
 * @since 0.1.0
 * @category internals
 */
export const run = (rt: Runtime, turn: number, batch: ReadonlyArray<Inbox.Entry>): Effect.Effect<void> =>
  Spans.turn(
    rt.session.id,
    turn,
    enclose(rt, turn, { kind: "message", source: batch[0]?.source ?? { kind: "user" as const } }, (ctx) =>
      Effect.exit(body(rt, ctx, batch).pipe(Effect.catchCause((cause) => toTurnFailure(ctx.step)(cause)))).pipe(
        Effect.flatMap((exit) => settle(rt, turn, exit, true)),
        Effect.tap(Spans.turnEnded)
      ))
  )

/**
 * A manual compaction requested while no turn is open (K-3c, K-10): claims the enclosure, runs
 * the compaction as its own turn (`trigger: {kind: "compaction"}`, cancellable through the agent's
 * `cancel`), closes and flushes it. Returns `false` (nothing done) when a turn is open or opening:
 * the caller then queues the request for the running turn's next step.
 *
 * @since 0.1.0
 * @category internals
 */
export const compactionTurn = (rt: Runtime, instructions: ReadonlyArray<string>): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const signal = yield* StepSignal.make
    const claimed = yield* Ref.modify(rt.state, (s): readonly [number | undefined, AgentState] =>
      s.phase !== "none" || s.status === "running" || s.disposed
        ? [undefined, s]
        : [s.lastTurn + 1, { ...s, phase: "opening" as const, lastTurn: s.lastTurn + 1, signal }])
    if (claimed === undefined) return false
    const turn = claimed
    yield* enclose(rt, turn, { kind: "compaction", source: { kind: "user" } }, (ctx) =>
      Effect.exit(
        CompactionTrigger.manualTurn(rt, ctx, signal, instructions).pipe(
          Effect.catchCause((cause) => toTurnFailure(0)(cause))
        )
      ).pipe(Effect.flatMap((exit) => {
        // a compaction that ended with an error reason of its own is reported like a failure
        if (!Exit.isSuccess(exit) || exit.value.kind !== "error") return settle(rt, turn, exit, false)
        const reason = exit.value
        return Effect.as(
          report(rt, { turn, step: 0, message: reason.message, ...(reason.code === undefined ? {} : { code: reason.code }) }),
          reason
        )
      })))
    return true
  })
