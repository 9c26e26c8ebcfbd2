/**
 * When the loop compacts (K-3, K-4): the hooks {@link beforeRequest} (threshold and a pending
 * manual request, before a step's `step/start`) and {@link onOverflow} (request recovery of a
 * `CONTEXT_WINDOW_EXCEEDED`, before the `request-error` point).
 *
 * Guards (K-4): at most `maxPerTurn` compactions per turn (a threshold trigger past the limit is
 * skipped and the step proceeds; an overflow past it ends the turn); a compaction that removes
 * less than `minGain` of the pressure, or an overflow right after an overflow compaction (before
 * any successful model request), ends the turn with `COMPACTION_STALLED`. A failed threshold
 * compaction lets the step proceed; a failed overflow compaction ends the turn with the original
 * error (K-11). The overflow retry happens only when the surface's replace generation advanced.
 *
 * Decision (DEC-10, docs/decisions/0007): the built-in overflow recovery runs before the
 * `request-error` listeners and decides alone for `CONTEXT_WINDOW_EXCEEDED` when compaction is
 * enabled; listeners still see every other failure.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { SessionError } from "../../Session/SessionError.js"
import type { TurnEndReason } from "../../Session/SessionEvent.js"
import type * as Hooks from "../Hooks.js"
import type { HookFailure } from "../Interception.js"
import type { Runtime, TurnContext } from "../internal/Runtime.js"
import { abortReason, TurnFailure } from "../internal/Runtime.js"
import type * as StepSignal from "../StepSignal.js"
import * as Compactor from "./Compactor.js"
import * as Estimate from "./Estimate.js"

/**
 * The error code of a compaction that cannot make progress (K-4).
 *
 * @since 0.1.0
 * @category constants
 */
export const STALLED = "COMPACTION_STALLED"

const stalled = (step: number, message: string) => new TurnFailure({ step, message, code: STALLED })

const checkGain = (c: Compactor.Controller, ctx: TurnContext, o: Compactor.Outcome & { readonly _tag: "Done" }) =>
  o.pressureBefore > 0 && o.pressureAfter > (1 - c.options.minGain) * o.pressureBefore
    ? Effect.fail(stalled(
      ctx.step,
      `compaction could not free enough context: it went from ${o.pressureBefore} to ${o.pressureAfter} tokens (less than ${
        Math.round(c.options.minGain * 100)
      }% removed); the most recent part of the conversation alone holds about ${o.keptTokens} tokens`
    ))
    : Effect.void

const endOf = (rt: Runtime, signal: StepSignal.StepSignal) =>
  Effect.map(abortReason(rt, signal), (r) => Option.getOrElse(r, (): TurnEndReason => ({ kind: "aborted", reason: "cancelled" })))

const fixedOfHeader = (rt: Runtime) =>
  Effect.map(rt.session.requestHeader, (h) =>
    h === undefined ? 0 : Estimate.fixed(h.system, h.tools ?? [], h.messagePrefix ?? []))

/**
 * What a trigger can fail with: the log, a compaction hook, or the turn itself (`COMPACTION_STALLED`,
 * the original overflow).
 *
 * @since 0.1.0
 * @category errors
 */
export type TriggerError = SessionError | HookFailure | TurnFailure

/**
 * Before a step's request: a pending manual compaction, else the threshold check. Returns the
 * turn-end reason when the turn must end (cancelled meanwhile); fails with `COMPACTION_STALLED`.
 *
 * @since 0.1.0
 * @category triggers
 */
export const beforeRequest = (
  rt: Runtime,
  ctx: TurnContext,
  signal: StepSignal.StepSignal,
  fixed: number
): Effect.Effect<Option.Option<TurnEndReason>, TriggerError> =>
  Effect.gen(function*() {
    const c = rt.compaction
    if (c === undefined) return Option.none()
    const base = { turn: ctx.turn, turnStartSeq: ctx.turnStartSeq, fixed, signal }
    let outcome: Compactor.Outcome
    const instructions = yield* Ref.modify(rt.state, (s) => [s.compactionPending, { ...s, compactionPending: undefined }] as const)
    if (instructions !== undefined) {
      ctx.compactions += 1
      outcome = yield* Compactor.run(rt, c, { ...base, trigger: "manual", instructions })
    } else {
      const header = yield* rt.session.requestHeader
      const route = Compactor.routeOf(rt, header)
      const { contextWindow, reserve } = yield* Compactor.windowOf(rt, c, route.provider, route.model)
      const pressure = c.tracker.measure(yield* rt.session.surface, fixed).tokens
      if (pressure < c.options.threshold * contextWindow - reserve) return Option.none()
      if (ctx.compactions >= c.options.maxPerTurn) return Option.none()
      ctx.compactions += 1
      outcome = yield* Compactor.run(rt, c, { ...base, trigger: "threshold", instructions: [] })
    }
    switch (outcome._tag) {
      case "Aborted":
        return Option.some(yield* endOf(rt, signal))
      case "Done":
        yield* checkGain(c, ctx, outcome)
        return Option.none()
      case "Vetoed":
      case "Failed":
        return Option.none()
    }
  })

/**
 * Overflow recovery (K-3b): `Retry` when a compaction advanced the surface, `End` when the turn
 * was cancelled meanwhile, `Pass` when compaction is off or the failure is not an overflow;
 * fails the turn with `COMPACTION_STALLED` or with the original error.
 *
 * @since 0.1.0
 * @category triggers
 */
export const onOverflow = (
  rt: Runtime,
  ctx: TurnContext,
  signal: StepSignal.StepSignal,
  failure: Hooks.RequestFailure
): Effect.Effect<
  { readonly _tag: "Pass" } | { readonly _tag: "Retry" } | { readonly _tag: "End"; readonly reason: TurnEndReason },
  TriggerError
> =>
  Effect.gen(function*() {
    const c = rt.compaction
    if (c === undefined || failure.code !== "CONTEXT_WINDOW_EXCEEDED") return { _tag: "Pass" } as const
    const step = ctx.step
    if (ctx.overflowCompacted) {
      return yield* Effect.fail(stalled(
        step,
        "the request overflowed the context window again right after a compaction; start a new session or raise the window"
      ))
    }
    if (ctx.compactions >= c.options.maxPerTurn) {
      return yield* Effect.fail(stalled(
        step,
        `the request overflowed the context window after ${ctx.compactions} compactions in this turn`
      ))
    }
    const original = new TurnFailure(
      failure.code === undefined
        ? { step, message: failure.message, cause: failure.cause }
        : { step, message: failure.message, code: failure.code, cause: failure.cause }
    )
    const generation = (yield* rt.session.surface).replaceGeneration
    ctx.compactions += 1
    const outcome = yield* Compactor.run(rt, c, {
      turn: ctx.turn,
      turnStartSeq: ctx.turnStartSeq,
      fixed: yield* fixedOfHeader(rt),
      signal,
      trigger: "overflow",
      instructions: []
    })
    if (outcome._tag === "Aborted") return { _tag: "End", reason: yield* endOf(rt, signal) } as const
    if (outcome._tag !== "Done") return yield* Effect.fail(original)
    if ((yield* rt.session.surface).replaceGeneration === generation) return yield* Effect.fail(original)
    yield* checkGain(c, ctx, outcome)
    ctx.overflowCompacted = true
    return { _tag: "Retry" } as const
  })

/**
 * A manual compaction as its own turn's body (the agent was idle): the outcome as a turn-end
 * reason (`completed`, or `error` with the compaction's code).
 *
 * @since 0.1.0
 * @category triggers
 */
export const manualTurn = (
  rt: Runtime,
  ctx: TurnContext,
  signal: StepSignal.StepSignal,
  instructions: ReadonlyArray<string>
): Effect.Effect<TurnEndReason, TriggerError> =>
  Effect.gen(function*() {
    const c = rt.compaction
    if (c === undefined) return { kind: "completed" } as const
    ctx.compactions += 1
    const outcome = yield* Compactor.run(rt, c, {
      turn: ctx.turn,
      turnStartSeq: ctx.turnStartSeq,
      fixed: yield* fixedOfHeader(rt),
      signal,
      trigger: "manual",
      instructions
    })
    switch (outcome._tag) {
      case "Aborted":
        return yield* endOf(rt, signal)
      case "Failed":
        // nothing to compact is not an error of a manual request: the compact/end says why
        return outcome.code === "COMPACTION_NOTHING_TO_DO"
          ? { kind: "completed" } as const
          : { kind: "error", step: 0, message: outcome.message, code: outcome.code } as const
      case "Vetoed":
        return { kind: "completed" } as const
      case "Done":
        yield* checkGain(c, ctx, outcome)
        return { kind: "completed" } as const
    }
  })
