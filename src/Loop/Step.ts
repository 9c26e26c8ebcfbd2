/**
 * The step (L-12) and what follows it: request-error recovery (L-20, L-21), recording (L-22),
 * continuation and the monotonic turn-stop (L-23..L-28). {@link runSteps} runs steps until the
 * turn ends and returns the turn-end reason; ordinary failures surface as a turn failure carrying
 * the step number they happened at.
 *
 * One step, in order:
 * 1. `step += 1`; drain steering → one `steering/message` each.
 * 2. a fresh {@link StepSignal} becomes the cancel/dispose target (fired at once when the cancel
 *    marker is already armed or the agent is disposed).
 * 3. system prompt + tool order (L-31..L-34); failure → turn error at this step, no `step/start`.
 * 4. cancelled/disposed → end without opening a step.
 * 5. first step of the loop instance: compose the session prefix (L-35) under the signal; an
 *    interrupted composition is discarded (not cached).
 * 6. `pre-step` under the signal; re-check 4.
 * 7. request boundary = `deriveMessages()`; append `step/start`; a synchronous observer that
 *    cancelled or disposed → `step/end` and end.
 * 8. config seed (first request of the instance: agent options; later: the latest logged header's
 *    config), frozen → `request` waterfall; empty provider or model → failure naming them and the
 *    `request` point.
 * 9. canonical header logged per S-19 inside the step; the request = header fields + prefix ++
 *    boundary + `sessionId`, deeply frozen.
 * 10. `Llm.stream` consumed ONCE, under the signal: the `internal/ChunkLog` stage appends each
 *     batch as `assistant/chunk` events, then `BlockAssembler.sink` folds it (the Sink sees only
 *     logged chunks). A model-request failure
 *     or an in-band `finish error|aborted` goes to recovery (L-20); anything else is ordinary.
 *     Output past `maxOutputBytes` is cut: the stream stops and the step finishes `OUTPUT_LIMIT`
 *     (`internal/OutputLimit`, applied by the stage), which recovery treats as an in-band error.
 * 11. `max-tokens`: tool calls removed before and after `step-result`; no tools run.
 * 12. `step-result`, record `assistant/message` (L-22), run the tool batch of the recorded message.
 * 13. drain steering. 14. `post-step` (the signal may already be aborted). 15. aborted/disposed →
 *     `step/end` and end. 16. `step/end`; continuation.
 *
 * Decisions (DEC-10):
 * - The consecutive retry counter resets as soon as a model request succeeds (before
 *   `step-result`), as L-20.7 says "after any successful model request".
 * - `post-step` runs under the signal only when the signal has not fired yet (so a cancel during a
 *   slow post-step interrupts it); with an already aborted signal it runs to completion, so
 *   listeners can observe the abort and record what they need (AC-73).
 * - An `assembly` failure (an unassemblable open block, A-8) is an ordinary failure (the consumer
 *   failed, C-11), not a model-request failure.
 * - A continuation `Continue{reason}` queues the reason at the end of the steering FIFO.
 * - `turn-stop` runs only when the turn is about to stop (continuation said `Stop`); a `Stop` vote
 *   discards pending steering and makes later steering in the turn be discarded (L-26).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as BlockAssembler from "../Llm/BlockAssembler.js"
import * as Json from "../Llm/Json.js"
import type { JsonError } from "../Llm/Json.js"
import * as Llm from "../Llm/Llm.js"
import type { MiddlewareError } from "../Llm/Llm.js"
import type { AssemblyError } from "../Llm/LlmError.js"
import type { GenerateOptions, LlmCallConfig, Message } from "../Llm/Message.js"
import * as RequestHeader from "../Session/RequestHeader.js"
import type { SessionError } from "../Session/SessionError.js"
import type { TurnEndReason } from "../Session/SessionEvent.js"
import * as BatchContexts from "./BatchContexts.js"
import * as CacheRecord from "./internal/CacheRecord.js"
import * as CompactionEstimate from "./Compaction/Estimate.js"
import * as CompactionTrigger from "./Compaction/Trigger.js"
import * as Hooks from "./Hooks.js"
import * as Inbox from "./Inbox.js"
import type { HookFailure } from "./Interception.js"
import * as Recording from "./Recording.js"
import type { Runtime, TurnContext } from "./internal/Runtime.js"
import { abortReason, toTurnFailure, TurnFailure } from "./internal/Runtime.js"
import * as ChunkLog from "./internal/ChunkLog.js"
import * as Spans from "./internal/Spans.js"
import * as Usage from "./internal/Usage.js"
import * as SessionPrefix from "./SessionPrefix.js"
import type { SessionPrefixError } from "./SessionPrefix.js"
import * as StepSignal from "./StepSignal.js"
import type { SystemPromptError } from "./SystemPrompt.js"
import type { ToolSchedulerError } from "./ToolScheduler.js"

type Outcome = { readonly _tag: "Next" } | { readonly _tag: "End"; readonly reason: TurnEndReason }

/** What one step can fail with (every failure becomes a {@link TurnFailure} in {@link runSteps}). */
type StepError =
  | SessionError
  | HookFailure
  | TurnFailure
  | JsonError
  | AssemblyError
  | MiddlewareError
  | SystemPromptError
  | SessionPrefixError
  | ToolSchedulerError

const next: Outcome = { _tag: "Next" }
const end = (reason: TurnEndReason): Outcome => ({ _tag: "End", reason })
const cancelled: TurnEndReason = { kind: "aborted", reason: "cancelled" }

/**
 * Deep-freezes a value in place, stopping at objects that are already frozen (the session's
 * snapshots and projected messages are deeply frozen).
 *
 * @since 0.1.0
 * @category utils
 */
export const deepFreeze = <A>(value: A): A => {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  if (Array.isArray(value)) {
    // by index: `Object.keys` of a long message list would allocate a string per element
    for (let i = 0; i < value.length; i++) deepFreeze(value[i])
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** Drains the steering FIFO into `steering/message` events; `true` when any was logged. */
const drainSteering = (rt: Runtime, turn: number): Effect.Effect<boolean, SessionError> =>
  Effect.flatMap(
    Ref.modify(rt.state, (s) => {
      const [entries, inbox] = Inbox.drainSteering(s.inbox)
      return [entries, { ...s, inbox }] as const
    }),
    (entries) =>
      Effect.as(
        Effect.forEach(
          entries,
          (entry) =>
            rt.session.append({
              type: "steering/message",
              data: { turn, content: entry.content, source: entry.source },
              surfaceOp: "append"
            }),
          { discard: true }
        ),
        entries.length > 0
      )
  )

/** Installs a fresh step signal; fires it at once when the marker is armed or disposed. */
const installSignal = (rt: Runtime): Effect.Effect<StepSignal.StepSignal> =>
  Effect.gen(function*() {
    const signal = yield* StepSignal.make
    const pre = yield* Ref.modify(rt.state, (s) => [{ disposed: s.disposed, marker: s.inbox.marker }, { ...s, signal }] as const)
    if (pre.disposed) yield* StepSignal.abort(signal, { _tag: "Disposed" })
    else if (Option.isSome(pre.marker)) yield* StepSignal.abort(signal, { _tag: "Cancelled", reason: pre.marker.value })
    return signal
  })

const closeStep = (rt: Runtime, ctx: TurnContext) =>
  Effect.tap(
    rt.session.append({ type: "step/end", data: { turn: ctx.turn, step: ctx.step } }),
    () => Effect.sync(() => {
      ctx.stepOpen = false
    })
  )

const endAborted = (rt: Runtime, signal: StepSignal.StepSignal) =>
  Effect.map(abortReason(rt, signal), (reason) => end(Option.getOrElse(reason, () => cancelled)))

/** A model-request failure or in-band error finish (L-20). */
interface RequestFailed {
  readonly _tag: "RequestFailed"
  readonly failure: Hooks.RequestFailure
}

const recover = (
  rt: Runtime,
  ctx: TurnContext,
  signal: StepSignal.StepSignal,
  failure: Hooks.RequestFailure
): Effect.Effect<Outcome, SessionError | CompactionTrigger.TriggerError> =>
  Effect.gen(function*() {
    const step = ctx.step
    yield* closeStep(rt, ctx)
    const before = yield* abortReason(rt, signal)
    if (Option.isSome(before)) return end(before.value)
    // K-3b: overflow recovery by compaction (when enabled) decides before the listeners
    const overflow = yield* CompactionTrigger.onOverflow(rt, ctx, signal, failure)
    if (overflow._tag === "Retry") return next
    if (overflow._tag === "End") return end(overflow.reason)
    const decided = yield* StepSignal.interruptible(
      signal,
      rt.hooks.requestError.run(
        rt.agent.id,
        { agent: rt.agent, turn: ctx.turn, step, error: failure, attempt: ctx.retryAttempt, signal },
        () => Effect.succeed(Hooks.RequestErrorDecision.Fail())
      ).pipe(
        Effect.catch((hookFailure) =>
          Effect.as(
            Effect.logWarning(`request-error listener failed; treated as "fail" (L-20)`, hookFailure),
            Hooks.RequestErrorDecision.Fail()
          )
        )
      )
    )
    const after = yield* abortReason(rt, signal)
    if (Option.isSome(after)) return end(after.value)
    if (Option.isNone(decided)) return end(cancelled)
    return yield* Hooks.RequestErrorDecision.$match(decided.value, {
      Retry: () =>
        Effect.sync(() => {
          ctx.retryAttempt += 1
          return next
        }),
      Fail: () =>
        Effect.fail(
          new TurnFailure(
            failure.code === undefined
              ? { step, message: failure.message, cause: failure.cause }
              : { step, message: failure.message, code: failure.code, cause: failure.cause }
          )
        )
    })
  })

const missingRoute = (config: LlmCallConfig): string | undefined => {
  const undeclared = RequestHeader.undeclaredConfigFields(config)
  if (undeclared.length > 0) {
    return `the "request" point returned ${undeclared.map((k) => JSON.stringify(k)).join(", ")}: a request config has only ${
      RequestHeader.configFields.join(", ")
    }`
  }
  const missing = [
    ...(typeof config.provider === "string" && config.provider !== "" ? [] : ["provider"]),
    ...(typeof config.model === "string" && config.model !== "" ? [] : ["model"])
  ]
  return missing.length === 0
    ? undefined
    : `no ${missing.join(" and ")} for the model request: set ${missing.join(" and ")} in the agent options or return ${
      missing.length === 1 ? "it" : "them"
    } from the "request" point`
}

const runStep = (rt: Runtime, ctx: TurnContext): Effect.Effect<Outcome, StepError> =>
  Effect.gen(function*() {
    ctx.step += 1
    const step = ctx.step
    const turn = ctx.turn
    const agent = rt.agent
    // 1. steering
    yield* drainSteering(rt, turn)
    // 2. the step's abort target
    const signal = yield* installSignal(rt)
    // 3. system prompt and tools
    const schemas = yield* rt.tools.schemas()
    const assembled = yield* rt.prompt.assemble({
      agent,
      context: {
        agentId: agent.id,
        provider: rt.options.provider ?? "",
        model: rt.options.model ?? "",
        cwd: rt.session.header.cwd,
        turn,
        step
      },
      tools: schemas,
      ...(rt.options.toolOrder === undefined ? {} : { toolOrder: rt.options.toolOrder })
    })
    // 4.
    const early = yield* abortReason(rt, signal)
    if (Option.isSome(early)) return end(early.value)
    // 5. session prefix, once per instance
    const instance = yield* Ref.get(rt.instance)
    let prefix: ReadonlyArray<Message>
    if (Option.isNone(instance.prefix)) {
      const composed = yield* StepSignal.interruptible(signal, SessionPrefix.compose(rt.hooks, agent, signal))
      if (Option.isNone(composed)) return yield* endAborted(rt, signal)
      prefix = composed.value
      yield* Ref.update(rt.instance, (i) => ({ ...i, prefix: Option.some(composed.value) }))
    } else {
      prefix = instance.prefix.value
    }
    // 6. pre-step (the interruptible race only when a listener runs)
    if (rt.hooks.preStep.active(agent.id)) {
      yield* StepSignal.interruptible(signal, rt.hooks.preStep.run(agent.id, { agent, turn, step, signal }))
    }
    const afterPre = yield* abortReason(rt, signal)
    if (Option.isSome(afterPre)) return end(afterPre.value)
    // 6b. compaction before the request (K-3a threshold, K-3c a pending manual request)
    if (rt.compaction !== undefined) {
      const compacted = yield* CompactionTrigger.beforeRequest(
        rt,
        ctx,
        signal,
        CompactionEstimate.fixed(assembled.system, assembled.tools, prefix)
      )
      if (Option.isSome(compacted)) return end(compacted.value)
    }
    // 7. request boundary, step/start
    const boundary = yield* rt.session.deriveMessages
    const started = yield* rt.session.append({ type: "step/start", data: { turn, step } })
    ctx.stepOpen = true
    const afterStart = yield* abortReason(rt, signal)
    if (Option.isSome(afterStart)) {
      yield* closeStep(rt, ctx)
      return end(afterStart.value)
    }
    // 8. call config
    const first = !(yield* Ref.get(rt.instance)).requested
    const logged = yield* rt.session.requestHeader
    const seed: LlmCallConfig = first || logged === undefined
      ? Object.freeze({ provider: rt.options.provider ?? "", model: rt.options.model ?? "" })
      : deepFreeze(logged.config)
    const chosen = yield* rt.hooks.request.run(
      agent.id,
      { agent, turn, step, config: seed },
      (input) => Effect.succeed(input.config)
    )
    const missing = missingRoute(chosen)
    if (missing !== undefined) return yield* Effect.fail(new TurnFailure({ step, message: missing }))
    const config = yield* Effect.fromResult(Json.snapshotOf(chosen))
    // 9. header and request
    const header = RequestHeader.canonicalize({
      config,
      ...(assembled.system === undefined ? {} : { system: assembled.system }),
      ...(assembled.tools.length === 0 ? {} : { tools: assembled.tools }),
      ...(prefix.length === 0 ? {} : { messagePrefix: prefix })
    })
    const why = RequestHeader.decideHeader(logged, header, first)
    if (why !== undefined) yield* rt.session.append({ type: "request/header", data: { header, reason: why } })
    yield* Ref.update(rt.instance, (i) => ({ ...i, requested: true }))
    const request: GenerateOptions = deepFreeze({
      ...config,
      // the boundary's messages are the session's deeply frozen projections: only the prefix (frozen
      // once, it is cached per instance) and the new array need freezing, not a walk of the history
      messages: Object.freeze([...deepFreeze(prefix), ...boundary]),
      ...(header.system === undefined ? {} : { system: header.system }),
      ...(header.tools === undefined ? {} : { tools: header.tools }),
      sessionId: rt.session.id
    })
    // 9b. prefix attribution against the previous request (DEC-17, issue 30)
    yield* CacheRecord.record(rt.session, started, { turn, step }, request, first)
    // 10. the model stream, consumed once (one `chat` span per request, never per chunk): each batch is
    // logged by the `ChunkLog` stage (one `appendChunks`, the output cap, a yield when due), then folded
    // by `BlockAssembler.sink`, which sees only logged chunks
    const log = ChunkLog.empty()
    const consumed = yield* Spans.chat(request, ctx, () => log.firstChunkAt, StepSignal.interruptible(
      signal,
      Effect.result(Stream.run(
        ChunkLog.logged(rt.llm.stream(request), (batch) => rt.session.appendChunks(turn, step, batch), rt.options.maxOutputBytes, log),
        BlockAssembler.sink
      ))
    ), Usage.chatOptions(rt, request, ctx))
    if (Option.isNone(consumed)) {
      yield* closeStep(rt, ctx)
      return yield* endAborted(rt, signal)
    }
    const result: Result.Result<BlockAssembler.Assembled, RequestFailed> = yield* Result.match(consumed.value, {
      onFailure: (error) =>
        (error._tag === "ProviderError" || error._tag === "RegistryError") && Llm.isModelRequestFailure(error)
          ? Effect.succeed(Result.fail<RequestFailed>({
            _tag: "RequestFailed",
            failure: { message: error.message, code: error.code, cause: error }
          }))
          : Effect.fail(error),
      onSuccess: (response) => {
        // L-20: an in-band error or aborted finish goes to recovery (the recording rule)
        const failed = Recording.requestFailure(response.finish)
        return Effect.succeed(
          failed === undefined
            ? Result.succeed<BlockAssembler.Assembled>(response)
            : Result.fail<RequestFailed>({ _tag: "RequestFailed", failure: { ...failed, cause: response.finish } })
        )
      }
    })
    if (Result.isFailure(result)) return yield* recover(rt, ctx, signal, result.failure.failure)
    const response = result.success
    ctx.retryAttempt = 0
    ctx.overflowCompacted = false
    // 11 / 12. step-result and recording: the rule is `Recording`, shared with `sessions replay`
    const recording = Recording.response(response)
    const offered = yield* Effect.fromResult(Json.copyOf<Message>({ role: "assistant", content: Recording.offered(recording) }))
    const route = { provider: config.provider, model: config.model }
    const rewritten = yield* Effect.result(rt.hooks.stepResult.run(
      agent.id,
      { agent, turn, step, message: offered },
      (input) => Effect.succeed(input.message)
    ))
    if (Result.isFailure(rewritten)) {
      yield* rt.session.append({
        type: "assistant/message",
        data: Usage.priced(rt, route, Recording.anchor({ turn, step, response: recording, route })),
        surfaceOp: "append",
        sourceEventSeqs: log.seqs
      })
      return yield* Effect.fail(rewritten.failure)
    }
    const recorded = yield* rt.session.append({
      type: "assistant/message",
      data: Usage.priced(rt, route, Recording.message({ turn, step, response: recording, returned: rewritten.success.content, route })),
      surfaceOp: "append",
      sourceEventSeqs: log.seqs
    })
    if (Recording.isMaxTokens(recording.finish)) ctx.maxTokens = true
    const calls = recorded.type !== "assistant/message"
      ? []
      : Recording.callsToRun(recording.finish, recorded.data.content)
    if (calls.length > 0) {
      const contexts = yield* BatchContexts.make
      yield* Ref.update(rt.state, (s) => ({ ...s, batch: contexts }))
      yield* rt.runBatch({ session: rt.session, agent, turn, step, calls, tools: rt.tools, signal, contexts }).pipe(
        Effect.ensuring(Ref.update(rt.state, (s) => (s.batch === contexts ? { ...s, batch: undefined } : s)))
      )
    }
    // 13. steering
    const steered = yield* drainSteering(rt, turn)
    // 14. post-step
    if (rt.hooks.postStep.active(agent.id)) {
      const postInput: Hooks.StepInput = { agent, turn, step, signal }
      if (yield* StepSignal.isAborted(signal)) yield* rt.hooks.postStep.run(agent.id, postInput)
      else yield* StepSignal.interruptible(signal, rt.hooks.postStep.run(agent.id, postInput))
    }
    // 15.
    const afterPost = yield* abortReason(rt, signal)
    if (Option.isSome(afterPost)) {
      yield* closeStep(rt, ctx)
      return end(afterPost.value)
    }
    // 16. step/end and continuation
    yield* closeStep(rt, ctx)
    return yield* continuation(rt, ctx, calls.length > 0 || steered)
  })

const continuation = (rt: Runtime, ctx: TurnContext, continues: boolean): Effect.Effect<Outcome, JsonError | HookFailure> =>
  Effect.gen(function*() {
    const agent = rt.agent
    const fallback = continues ? Hooks.ContinuationDecision.Continue({}) : Hooks.ContinuationDecision.Stop()
    const decision = yield* rt.hooks.turnContinuation.run(
      agent.id,
      { agent, turn: ctx.turn, step: ctx.step, default: fallback },
      (input) => Effect.succeed(input.default)
    )
    let ended: TurnEndReason | undefined
    const again: boolean = yield* Hooks.ContinuationDecision.$match(decision, {
      End: ({ reason }) =>
        Effect.sync(() => {
          ended = reason
          return false
        }),
      Continue: ({ reason }) =>
        reason === undefined
          ? Effect.succeed(true)
          : Effect.flatMap(
            Effect.fromResult(Json.snapshotOf<Inbox.Entry>({ content: reason.content, source: reason.source })),
            (entry) =>
              Effect.as(
                Ref.update(rt.state, (s) => ({ ...s, inbox: Inbox.steer(s.inbox, entry) })),
                true
              )
          ),
      Stop: () =>
        Effect.flatMap(rt.hooks.turnStop.run(agent.id, { agent, turn: ctx.turn }), (final) =>
          final
            ? Effect.as(
              Ref.update(rt.state, (s) => ({ ...s, terminalStop: true, inbox: { ...s.inbox, steering: [] } })),
              false
            )
            : Effect.map(Ref.get(rt.state), (s) => s.inbox.steering.length > 0))
    })
    // L-27: the marker (or disposal) wins over stop and loop
    const aborted = yield* abortReason(rt, undefined)
    if (Option.isSome(aborted)) return end(aborted.value)
    // `--max-steps`: the step budget of a turn ends it (resumable: the next prompt continues)
    if (again && rt.options.maxSteps !== undefined && ctx.step >= rt.options.maxSteps) {
      return end({ kind: "max-steps", steps: ctx.step })
    }
    if (again) return next
    if (ended !== undefined) return end(ended)
    return end(ctx.maxTokens ? { kind: "max-tokens" } : { kind: "completed" })
  })

/**
 * Runs steps until the turn ends; returns the turn-end reason (L-12, L-20, L-23..L-30).
 *
 * @since 0.1.0
 * @category internals
 */
export const runSteps = (rt: Runtime, ctx: TurnContext): Effect.Effect<TurnEndReason, TurnFailure> =>
  Effect.gen(function*() {
    for (;;) {
      const outcome = yield* runStep(rt, ctx).pipe(Effect.catchCause((cause) => toTurnFailure(ctx.step)(cause)))
      if (outcome._tag === "End") return outcome.reason
    }
  })
