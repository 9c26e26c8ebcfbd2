/**
 * Internal: resuming an interrupted turn (DEC-16; `Agent.resumeTurn`): the turn `T` the log's {@link ResumePlan} names continues
 * under its own number in the one turn enclosure:
 *
 * 1. `turn/start{turn: T, trigger: {kind: "resume"}}`, then `turn/resume{turn, fromStep, superseded?}`.
 * 2. One `tool/in-doubt` per call without a real result, in the plan's order: a call never started,
 *    or of a `read-only`/`idempotent` tool, is re-run (`by: "not-started" | "read-only"`); any other
 *    follows the policy (`"report"` by default, `"rerun"`, or a function asking a person: `by:
 *    "policy" | "user"`). `report` keeps the synthetic result telling the model the effect is
 *    unknown. A call whose result was logged is never in the plan.
 * 3. The re-runs of each step run as one tool batch under the original turn and step (so their
 *    idempotency keys are the original ones); each new `tool/result` replaces the synthetic one on
 *    the surface.
 * 4. Unless the interrupted turn had already answered, steps continue from `fromStep`: the request
 *    is rebuilt from the log (steering and contexts logged before the crash included), so the
 *    superseded partial answer is requested again.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { ToolCallBlock } from "../../Llm/ContentBlock.js"
import * as ResumePlan from "../../Session/ResumePlan.js"
import type { SessionError } from "../../Session/SessionError.js"
import type { SessionEventMap, TurnEndReason } from "../../Session/SessionEvent.js"
import * as BatchContexts from "../BatchContexts.js"
import * as Driver from "../Driver.js"
import type { AgentState, Runtime, TurnContext } from "./Runtime.js"
import { toTurnFailure, TurnFailure } from "./Runtime.js"
import * as Spans from "./Spans.js"
import * as Step from "../Step.js"
import * as StepSignal from "../StepSignal.js"
import * as Tool from "../Tool.js"
import * as Turn from "../Turn.js"

type Decision = SessionEventMap["tool/in-doubt"]

const decide = (rt: Runtime, call: ResumePlan.OpenCall, policy: ResumePlan.InDoubtPolicy): Effect.Effect<Decision> =>
  Effect.gen(function*() {
    const base = { turn: call.turn, step: call.step, callId: call.block.id, name: call.block.name }
    if (!call.started) return { ...base, decision: "rerun", by: "not-started" } as const
    const tool = yield* rt.tools.get(call.block.name)
    if (Option.isSome(tool) && Tool.rerunsSafely(tool.value)) return { ...base, decision: "rerun", by: "read-only" } as const
    if (typeof policy === "string") return { ...base, decision: policy, by: "policy" } as const
    const answer = yield* policy(call)
    return { ...base, decision: answer, by: "user" } as const
  })

/** Runs the re-runs of one original step as one batch whose results replace the synthetic ones. */
const rerun = (
  rt: Runtime,
  signal: StepSignal.StepSignal,
  calls: ReadonlyArray<ResumePlan.OpenCall>
): Effect.Effect<void, TurnFailure> =>
  Effect.gen(function*() {
    const first = calls[0]
    if (first === undefined) return
    const contexts = yield* BatchContexts.make
    yield* Ref.update(rt.state, (s) => ({ ...s, batch: contexts }))
    const blocks: ReadonlyArray<ToolCallBlock> = calls.map((c) => c.block)
    yield* rt.runBatch({
      session: rt.session,
      agent: rt.agent,
      turn: first.turn,
      step: first.step,
      calls: blocks,
      tools: rt.tools,
      signal,
      contexts,
      replaces: new Map(calls.map((c) => [c.block.id, c.resultSeq] as const))
    }).pipe(
      Effect.ensuring(Ref.update(rt.state, (s) => (s.batch === contexts ? { ...s, batch: undefined } : s))),
      Effect.mapError((e) => new TurnFailure({ step: first.step, message: e.message, cause: e }))
    )
  })

const body = (
  rt: Runtime,
  plan: Extract<ResumePlan.Plan, { _tag: "Continue" }>,
  policy: ResumePlan.InDoubtPolicy,
  ctx: TurnContext
): Effect.Effect<TurnEndReason, TurnFailure> =>
  Effect.gen(function*() {
    yield* rt.session.append({
      type: "turn/resume",
      data: {
        turn: plan.turn,
        fromStep: plan.fromStep,
        ...(plan.superseded === undefined ? {} : { superseded: plan.superseded })
      }
    })
    const again: Array<ResumePlan.OpenCall> = []
    for (const call of plan.calls) {
      const decision = yield* decide(rt, call, policy)
      yield* rt.session.append({ type: "tool/in-doubt", data: decision })
      if (decision.decision === "rerun") again.push(call)
    }
    if (again.length > 0) {
      const signal = yield* StepSignal.make
      yield* Ref.update(rt.state, (s) => ({ ...s, signal }))
      const steps = [...new Set(again.map((c) => c.step))]
      for (const step of steps) yield* rerun(rt, signal, again.filter((c) => c.step === step))
      if (yield* StepSignal.isAborted(signal)) return { kind: "aborted", reason: "cancelled" } satisfies TurnEndReason
    }
    if (plan.finished) return { kind: "completed" } satisfies TurnEndReason
    ctx.step = plan.fromStep - 1
    return yield* Step.runSteps(rt, ctx)
  }).pipe(Effect.catchCause((cause) => toTurnFailure(ctx.step)(cause)))

/**
 * Continues the interrupted turn of the agent's session, if any (see the module doc). Claims the
 * turn enclosure like a prompt turn (the agent is `running` meanwhile) and returns when the turn
 * ended; `false` when there was nothing to resume or the agent was busy or disposed.
 *
 * @since 0.1.0
 * @category internals
 */
export const resumeTurn = (rt: Runtime, policy: ResumePlan.InDoubtPolicy): Effect.Effect<boolean, SessionError> =>
  Effect.gen(function*() {
    const plan = ResumePlan.plan(yield* rt.session.events)
    if (plan._tag === "Nothing") return false
    const claimed = yield* Ref.modify(rt.state, (s): readonly [boolean, AgentState] =>
      s.phase !== "none" || s.status === "running" || s.disposed
        ? [false, s]
        : [true, { ...s, phase: "opening" as const, status: "running" as const, lastTurn: Math.max(s.lastTurn, plan.turn) }])
    if (!claimed) return false
    yield* Driver.publish(rt, "running")
    yield* Spans.turn(
      rt.session.id,
      plan.turn,
      Turn.enclose(rt, plan.turn, { kind: "resume", source: { kind: "user" } }, (ctx) =>
        Effect.exit(body(rt, plan, policy, ctx)).pipe(
          Effect.flatMap((exit) => Turn.settle(rt, plan.turn, exit, true)),
          Effect.tap(Spans.turnEnded)
        ))
    )
    if ((yield* Ref.get(rt.state)).inbox.queued.length === 0) yield* Driver.goIdle(rt)
    return true
  })
