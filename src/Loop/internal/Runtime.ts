/**
 * Internal: the state and wiring one agent's driver, turns and steps share.
 *
 * Shared mutable state lives in one `Ref<AgentState>` so every verb's check-and-update is one
 * atomic `Ref.modify`. Turn-local counters live in a {@link TurnContext} owned by the driver
 * fiber (never shared with another fiber).
 *
 * @since 0.1.0
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Llm from "../../Llm/Llm.js"
import type { Message } from "../../Llm/Message.js"
import type * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type { Session } from "../../Session/Session.js"
import type { SessionError } from "../../Session/SessionError.js"
import type { SessionRoute, TurnEndReason } from "../../Session/SessionEvent.js"
import type * as BatchContexts from "../BatchContexts.js"
import type * as Compactor from "../Compaction/Compactor.js"
import type { HookContext } from "../HookContext.js"
import type * as Hooks from "../Hooks.js"
import * as Inbox from "../Inbox.js"
import { HookFailure, messageOf } from "../Interception.js"
import * as StepSignal from "../StepSignal.js"
import type * as SystemPrompt from "../SystemPrompt.js"
import type * as ToolRegistry from "../ToolRegistry.js"
import type * as ToolScheduler from "../ToolScheduler.js"
import { codeOf } from "../../Llm/internal/Unknown.js"

/**
 * Where the turn enclosure is (S-16): `opening` until `turn/start` committed, `closing` from the
 * `turn/end` append on. Injections arriving while `opening`/`closing` wait in `pending`.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = "none" | "opening" | "open" | "closing"

/**
 * The shared state of one agent (one `Ref`).
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentState {
  readonly status: Hooks.Status
  readonly disposed: boolean
  readonly inbox: Inbox.Inbox
  readonly phase: Phase
  /** the batch context FIFO while a tool batch executes (L-19) */
  readonly batch: BatchContexts.BatchContexts | undefined
  /** a `turn-stop` listener stopped the running turn terminally (L-26) */
  readonly terminalStop: boolean
  /** the active step's signal (the cancel/dispose target) */
  readonly signal: StepSignal.StepSignal | undefined
  readonly idleWaiters: ReadonlyArray<Deferred.Deferred<void>>
  /** injections waiting for the enclosure to settle */
  readonly pending: ReadonlyArray<HookContext>
  readonly lastTurn: number
  /** a manual compaction requested while a turn runs (its instructions), taken by the next step */
  readonly compactionPending: ReadonlyArray<string> | undefined
}

/**
 * The state of a fresh agent whose log ends at turn `lastTurn`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initialState = (lastTurn: number): AgentState => ({
  status: "idle",
  disposed: false,
  inbox: Inbox.empty,
  phase: "none",
  batch: undefined,
  terminalStop: false,
  signal: undefined,
  idleWaiters: [],
  pending: [],
  lastTurn,
  compactionPending: undefined
})

/**
 * Per loop instance: the cached session prefix and whether a request was made (L-12.5, L-12.8, S-19).
 *
 * @since 0.1.0
 * @category models
 */
export interface InstanceState {
  readonly prefix: Option.Option<ReadonlyArray<Message>>
  readonly requested: boolean
}

/**
 * What a tool batch needs: exactly the `ToolScheduler.runBatch` input.
 *
 * @since 0.1.0
 * @category models
 */
export type BatchInput = ToolScheduler.BatchInput

/**
 * The agent options the steps read.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedOptions {
  readonly provider: string | undefined
  readonly model: string | undefined
  readonly toolOrder: ReadonlyArray<string> | undefined
  /** steps per turn before the turn ends `max-steps` (undefined: no budget) */
  readonly maxSteps: number | undefined
  /** bytes one step may stream before it is cut with `OUTPUT_LIMIT` (issue 26) */
  readonly maxOutputBytes: number
}

/**
 * Everything one agent's driver, turns and steps share.
 *
 * @since 0.1.0
 * @category models
 */
export interface Runtime {
  readonly agent: Hooks.HookAgent
  readonly session: Session
  readonly hooks: Hooks.Service
  readonly prompt: SystemPrompt.Service
  readonly llm: Llm.Llm.Service
  readonly tools: ToolRegistry.View
  readonly runBatch: (input: BatchInput) => Effect.Effect<{ readonly aborted: boolean }, ToolScheduler.ToolSchedulerError>
  readonly flush: Effect.Effect<void, SessionError>
  readonly options: ResolvedOptions
  readonly state: Ref.Ref<AgentState>
  readonly status: SubscriptionRef.SubscriptionRef<Hooks.Status>
  readonly wake: Queue.Queue<void>
  readonly instance: Ref.Ref<InstanceState>
  /** idle-injection flushes (disposal awaits them) */
  readonly tracked: FiberSet.FiberSet<void, never>
  /** the compaction controller, when compaction is enabled (K-3) */
  readonly compaction: Compactor.Controller | undefined
  /** the model catalog: prices for the cost logged with each request's usage (issue 19) */
  readonly catalog: ModelCatalog.Service
  /** the route this agent runs on and the last one logged (`session/route`, DEC-16) */
  readonly route: {
    readonly wanted: Route | undefined
    readonly logged: Ref.Ref<Route | undefined>
  }
}

/**
 * Where a session runs, as logged in `session/route` (DEC-16).
 *
 * @since 0.1.0
 * @category models
 */
export type Route = SessionRoute

/**
 * Turn-local counters, owned by the driver fiber (never shared with another fiber).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnContext {
  readonly turn: number
  /** seq of this turn's `turn/start` */
  readonly turnStartSeq: number
  step: number
  stepOpen: boolean
  maxTokens: boolean
  retryAttempt: number
  /** compactions run in this turn (K-4) */
  compactions: number
  /** an overflow compaction ran and no model request succeeded since (K-4) */
  overflowCompacted: boolean
}

/**
 * An ordinary turn failure with the step it happened at (L-11.5).
 *
 * @since 0.1.0
 * @category errors
 */
export class TurnFailure extends Data.TaggedError("TurnFailure")<{
  readonly step: number
  readonly message: string
  readonly code?: string
  readonly cause?: unknown
}> {}

/**
 * Message and code of a failure value (T-6 rendering; `code` only when the value carries one).
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (value: unknown): { readonly message: string; readonly code?: string } => {
  if (value instanceof HookFailure) {
    const code = codeOf(value.cause)
    return code === undefined ? { message: value.message } : { message: value.message, code }
  }
  const code = codeOf(value)
  const message = messageOf(value)
  return code === undefined ? { message } : { message, code }
}

/**
 * Converts a cause into a {@link TurnFailure} at `step` (interruption is re-raised).
 *
 * @since 0.1.0
 * @category utils
 */
export const toTurnFailure = (step: number) => (cause: Cause.Cause<unknown>): Effect.Effect<never, TurnFailure> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Cause.findErrorOption(cause)
  const value = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (value instanceof TurnFailure) return Effect.fail(value)
  const { message, code } = describe(value)
  return Effect.fail(
    new TurnFailure(code === undefined ? { step, message, cause: value } : { step, message, code, cause: value })
  )
}

/**
 * Emits one agent error (contained notification).
 *
 * @since 0.1.0
 * @category utils
 */
export const report = (rt: Runtime, error: Hooks.AgentFailure): Effect.Effect<void> =>
  rt.hooks.error.run(rt.agent.id, { agent: rt.agent, error })

/**
 * What ends the turn now, if anything: disposal wins, then the signal's reason, then the marker.
 *
 * @since 0.1.0
 * @category utils
 */
export const abortReason = (rt: Runtime, signal: StepSignal.StepSignal | undefined): Effect.Effect<Option.Option<TurnEndReason>> =>
  Effect.gen(function*() {
    const s = yield* Ref.get(rt.state)
    if (s.disposed) return Option.some<TurnEndReason>({ kind: "disposed" })
    if (signal !== undefined) {
      const fired = yield* StepSignal.reason(signal)
      if (Option.isSome(fired)) {
        return Option.some<TurnEndReason>(
          fired.value._tag === "Disposed" ? { kind: "disposed" } : { kind: "aborted", reason: fired.value.reason }
        )
      }
    }
    return Option.map(s.inbox.marker, (reason): TurnEndReason => ({ kind: "aborted", reason }))
  })

/**
 * Waits until the agent is idle with nothing queued (at once when it already is; until disposal
 * ends when it is disposed). An interrupted caller is removed from the waiters at once. A released
 * caller goes on after the driver's going-idle step (its `status` observers) has run.
 *
 * @since 0.1.0
 * @category utils
 */
export const awaitIdle = (state: Ref.Ref<AgentState>, exited: Deferred.Deferred<void>): Effect.Effect<void> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const waiter = yield* Deferred.make<void>()
      const how = yield* Ref.modify(state, (s) => {
        if (s.disposed) return ["disposed", s] as const
        if (s.status !== "running" && s.inbox.queued.length === 0) return ["now", s] as const
        return ["wait", { ...s, idleWaiters: [...s.idleWaiters, waiter] }] as const
      })
      if (how === "disposed") return yield* restore(Deferred.await(exited))
      if (how === "wait") {
        yield* restore(Deferred.await(waiter)).pipe(
          Effect.onInterrupt(() =>
            Ref.update(state, (s) => ({ ...s, idleWaiters: s.idleWaiters.filter((w) => w !== waiter) }))
          )
        )
        // Effect 4 resumes a waiter synchronously inside the driver's `Deferred.succeed`: yield once so the driver
        // finishes going idle (its `status` observers, L-6) before the caller goes on, as v3's scheduled resume did
        yield* Effect.yieldNow
      }
    })
  )

/**
 * Appends one `context/message`.
 *
 * @since 0.1.0
 * @category utils
 */
export const appendContext = (session: Session, context: HookContext) =>
  session.append({
    type: "context/message",
    data: context.meta === undefined
      ? { content: context.content, source: context.source }
      : { content: context.content, source: context.source, meta: context.meta },
    surfaceOp: "append"
  })
