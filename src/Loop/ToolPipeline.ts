/**
 * The per-call tool pipeline (T-2..T-9, T-11..T-15), in three stages so the scheduler can run
 * `prepare` one call at a time in model order, overlap `dispatch`es, and `finish` in model order:
 *
 * 1. {@link start}: parse (L-13, done by {@link parseArguments}) and snapshot+freeze the arguments;
 *    non-JSON arguments (e.g. `-0`, `1e999`) → an error result with no policy at all.
 * 2. {@link prepare}: `pre-execute` waterfall → guards → (`Ask`) approval. A denial skips dispatch
 *    but still passes post-execute (T-4); a failing listener yields a final result (T-6).
 * 3. {@link dispatch}: `execute` wrappers around the dispatch: unknown/hidden tool → `UNKNOWN_TOOL`
 *    (T-5), else the body (validation inside, `INVALID_ARGS`), under the step signal and the
 *    tool's deadline (T-15).
 * 4. {@link finish}: `post-execute` waterfall (T-7) → materialize (T-8) → `result` notification
 *    (contained).
 *
 * Every failure mode becomes a {@link Tool.ToolExecutionResult}; nothing here fails.
 *
 * Cancellation (DEC-1, T-13): pre-execute listeners, guards, the approval prompt, execute wrappers
 * and the body run interruptibly under the step signal; finalizers of an interrupted body complete
 * before its result exists. An interrupted body resolves through the normal path with
 * `Error: tool call aborted (<reason>)` / `{AbortError, ABORTED}` (plus its deferred contexts) and
 * still passes post-execute. An interrupted pre-execute/guard/approval yields that same result as
 * a final result. Post-execute and the result notification are the commit of a started call (L-16,
 * L-17: "await started calls and commit them"): they run to completion even after an abort (they
 * get the signal and may cooperate), so a body that finished keeps its (policed) result.
 *
 * Other decisions where the spec is silent (DEC-10):
 * - Non-JSON arguments: `Error: tool arguments are not lossless JSON (<detail>)`, no `error`.
 * - A coded harness error is a failure value with a string `_tag` and a string `code`; it gives
 *   `error {name: _tag, code}` (T-6). A wrapper failing with a coded error gives its code too.
 * - A body returning something that is not content blocks → `Error: tool returned an invalid
 *   result (expected content blocks)`; content that is not valid blocks counts as not lossless.
 * - A failing post-execute listener keeps the body-deferred contexts (T-9: they survive throws);
 *   a `Block` keeps only its own (T-7); a non-JSON result keeps none (T-8: only the error text).
 * - Approval denials: no service → the `Ask` reason, else `tool "<name>" requires approval, but
 *   no approval service is available`; `reject` → `the user rejected the tool call`;
 *   `cancelled` → `approval was cancelled`; `unavailable` → `approval is unavailable`; a failing
 *   service → `approval failed: <msg>`.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import * as Message from "../Llm/Message.js"
import type { AgentControl } from "./AgentControl.js"
import * as BatchContexts from "./BatchContexts.js"
import type { HookContext } from "./HookContext.js"
import { HookFailure, messageOf } from "./Interception.js"
import * as ResumePlan from "../Session/ResumePlan.js"
import * as Spans from "./internal/Spans.js"
import * as StepSignal from "./StepSignal.js"
import type * as Tool from "./Tool.js"
import type * as ToolHooks from "./ToolHooks.js"
import { ToolRuntime } from "./ToolRuntime.js"

// ---------------------------------------------------------------------------------------------
// Results

const errorText = (message: string): ReadonlyArray<ContentBlock.ContentBlock> => [ContentBlock.text(`Error: ${message}`)]

/**
 * An error result `[text "Error: <message>"]`, with a structured error when given.
 *
 * @since 0.1.0
 * @category results
 */
export const errorResult = (message: string, error?: Tool.ToolResultError): Tool.ToolExecutionResult =>
  error === undefined ? { content: errorText(message), isError: true } : { content: errorText(message), isError: true, error }

/**
 * T-5: `Error: unknown tool "<name>"`, `{ToolNotFoundError, UNKNOWN_TOOL}`.
 *
 * @since 0.1.0
 * @category results
 */
export const unknownToolResult = (name: string): Tool.ToolExecutionResult =>
  errorResult(`unknown tool ${JSON.stringify(name)}`, { name: "ToolNotFoundError", code: "UNKNOWN_TOOL" })

/**
 * T-15: `Error: tool call timed out after <ms>ms`, `{ToolTimeoutError, TOOL_TIMEOUT}`.
 *
 * @since 0.1.0
 * @category results
 */
export const timeoutResult = (ms: number): Tool.ToolExecutionResult =>
  errorResult(`tool call timed out after ${ms}ms`, { name: "ToolTimeoutError", code: "TOOL_TIMEOUT" })

/**
 * T-8: the result was not lossless JSON.
 *
 * @since 0.1.0
 * @category results
 */
export const notJsonResult: Tool.ToolExecutionResult = errorResult("tool result must be losslessly JSON-serializable")

/**
 * The text of an abort reason.
 *
 * @since 0.1.0
 * @category utils
 */
export const reasonText = (reason: StepSignal.AbortReason): string =>
  reason._tag === "Cancelled" ? reason.reason : "disposed"

/**
 * A started call interrupted by the step signal: `Error: tool call aborted (<reason>)`,
 * `{AbortError, ABORTED}`.
 *
 * @since 0.1.0
 * @category results
 */
export const abortedResult = (reason: StepSignal.AbortReason): Tool.ToolExecutionResult =>
  errorResult(`tool call aborted (${reasonText(reason)})`, { name: "AbortError", code: "ABORTED" })

/**
 * L-17: a call never started because the step was aborted.
 *
 * @since 0.1.0
 * @category results
 */
export const skippedResult = (reason: StepSignal.AbortReason): Tool.ToolExecutionResult =>
  errorResult(
    `tool call skipped because the step was aborted before execution (${reasonText(reason)})`,
    { name: "AbortError", code: "ABORTED" }
  )

/**
 * The structured error of a coded harness error (`_tag` and `code` strings), if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const codedError = (value: unknown): Tool.ToolResultError | undefined => {
  try {
    if (typeof value !== "object" || value === null) return undefined
    const tag = (value as { _tag?: unknown })._tag
    const code = (value as { code?: unknown }).code
    return typeof tag === "string" && tag !== "" && typeof code === "string" && code !== ""
      ? { name: tag, code }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * T-6: the error result of a failure cause (failure, defect, or a self-interruption).
 *
 * @since 0.1.0
 * @category results
 */
export const failureResult = (cause: Cause.Cause<unknown>): Tool.ToolExecutionResult => {
  if (Cause.hasInterruptsOnly(cause)) return errorResult("tool call was interrupted")
  const failure = Cause.findErrorOption(cause)
  let value: unknown = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  const message = messageOf(value)
  if (value instanceof HookFailure && value.cause !== undefined) value = value.cause
  return errorResult(message, codedError(value))
}

const denialResult = (reason: string): Tool.ToolExecutionResult => errorResult(reason)

const causeMessage = (cause: Cause.Cause<unknown>): string => {
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  const failure = Cause.findErrorOption(cause)
  return messageOf(Option.isSome(failure) ? failure.value : Cause.squash(cause))
}

const tagOf = (u: unknown): unknown => (typeof u === "object" && u !== null ? (u as { _tag?: unknown })._tag : undefined)

const allowDecision: ToolHooks.PreExecuteDecision = { _tag: "Allow" }
const acceptDecision: ToolHooks.PostExecuteDecision = { _tag: "Accept" }

// ---------------------------------------------------------------------------------------------
// Arguments

/**
 * L-13: `""` → `{}`; invalid JSON → the raw string itself; otherwise the parsed value.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseArguments = (raw: string): unknown => {
  if (raw === "") return {}
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}

// ---------------------------------------------------------------------------------------------
// Calls and stages

/**
 * One call in flight through the pipeline.
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  readonly info: ToolHooks.CallInfo
  /** the tool resolved when the call started; `None` = unknown or hidden */
  readonly tool: Option.Option<Tool.Tool<never>>
  /** set when the arguments were not lossless JSON (`info.arguments` is then the raw text) */
  readonly argumentsError: Option.Option<Json.JsonError>
  /** contexts deferred by the body, in call order (T-9) */
  readonly deferred: Ref.Ref<ReadonlyArray<Result.Result<HookContext, Json.JsonError>>>
}

/**
 * Where a call is between stages.
 *
 * - `Run`: allowed; dispatch next.
 * - `Outcome`: has an outcome that still passes post-execute (body ran, or denial, T-4).
 * - `Final`: has a final result; only materialize and notify remain (T-6).
 *
 * @since 0.1.0
 * @category models
 */
export type Stage =
  | { readonly _tag: "Run" }
  | { readonly _tag: "Outcome"; readonly result: Tool.ToolExecutionResult }
  | { readonly _tag: "Final"; readonly result: Tool.ToolExecutionResult }

const run: Stage = { _tag: "Run" }
const outcome = (result: Tool.ToolExecutionResult): Stage => ({ _tag: "Outcome", result })
const final = (result: Tool.ToolExecutionResult): Stage => ({ _tag: "Final", result })

/**
 * Input of {@link start}.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartInput {
  readonly call: ContentBlock.ToolCallBlock
  /** the parsed arguments ({@link parseArguments}) */
  readonly arguments: unknown
  readonly tool: Option.Option<Tool.Tool<never>>
  readonly agent: AgentControl
  readonly turn: number
  readonly step: number
  readonly signal: StepSignal.StepSignal
}

/**
 * Snapshots and freezes the arguments and creates the call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (input: StartInput): Effect.Effect<Call> =>
  Effect.map(Ref.make<ReadonlyArray<Result.Result<HookContext, Json.JsonError>>>([]), (deferred) => {
    const snap = Json.snapshot(input.arguments)
    return {
      info: {
        callId: input.call.id,
        name: input.call.name,
        idempotencyKey: ResumePlan.idempotencyKey(input.agent.id, input.turn, input.step, input.call.id),
        arguments: Result.isSuccess(snap) ? snap.success : input.call.arguments,
        agent: input.agent,
        turn: input.turn,
        step: input.step,
        signal: input.signal
      },
      tool: input.tool,
      argumentsError: Result.isFailure(snap) ? Option.some(snap.failure) : Option.none(),
      deferred
    }
  })

const abortedNow = (signal: StepSignal.StepSignal): Effect.Effect<Tool.ToolExecutionResult> =>
  Effect.map(StepSignal.reason(signal), (r) => abortedResult(Option.getOrElse(r, () => ({ _tag: "Cancelled", reason: "cancelled" }) as const)))

const agentKey = (call: Call): string => call.info.agent.id

/**
 * Pre-execute, guards and approval (T-2, T-3, T-4). Never fails.
 *
 * @since 0.1.0
 * @category stages
 */
export const prepare = (call: Call): Effect.Effect<Stage, never, ToolRuntime> =>
  Effect.gen(function*() {
    if (Option.isSome(call.argumentsError)) {
      return final(errorResult(`tool arguments are not lossless JSON (${call.argumentsError.value.message})`))
    }
    const rt = yield* ToolRuntime
    const info = call.info
    const signal = info.signal
    const decisionExit = yield* Effect.exit(
      StepSignal.interruptible(signal, rt.hooks.preExecute.run(agentKey(call), info, () => Effect.succeed(allowDecision)))
    )
    if (Exit.isFailure(decisionExit)) return final(failureResult(decisionExit.cause))
    if (Option.isNone(decisionExit.value)) return final(yield* abortedNow(signal))
    const decision: unknown = decisionExit.value.value
    const tag = tagOf(decision)
    const reasonRaw = tag === undefined ? undefined : (decision as { reason?: unknown }).reason
    if (tag === "Deny") {
      return typeof reasonRaw === "string"
        ? outcome(denialResult(reasonRaw))
        : final(errorResult("invalid pre-execute decision (Deny needs a string reason)"))
    }
    if (tag !== "Allow" && tag !== "Ask") {
      return final(errorResult("invalid pre-execute decision (expected Allow, Deny or Ask)"))
    }
    // guards: only deny (L-37)
    const guardExit = yield* Effect.exit(
      StepSignal.interruptible(signal, rt.hooks.guard.run(agentKey(call), info, () => Effect.succeed(undefined)))
    )
    if (Exit.isFailure(guardExit)) return final(failureResult(guardExit.cause))
    if (Option.isNone(guardExit.value)) return final(yield* abortedNow(signal))
    const guardVerdict = guardExit.value.value
    if (guardVerdict !== undefined) return outcome(denialResult(guardVerdict.reason))
    if (tag === "Allow") return run
    // Ask (T-3)
    const askReason = typeof reasonRaw === "string" ? reasonRaw : undefined
    if (Option.isNone(rt.approval)) {
      return outcome(denialResult(
        askReason ?? `tool ${JSON.stringify(info.name)} requires approval, but no approval service is available`
      ))
    }
    const approval = rt.approval.value
    const request = askReason === undefined
      ? { agentId: info.agent.id, turn: info.turn, step: info.step, callId: info.callId, name: info.name, arguments: info.arguments }
      : { agentId: info.agent.id, turn: info.turn, step: info.step, callId: info.callId, name: info.name, arguments: info.arguments, reason: askReason }
    const answerExit = yield* Effect.exit(StepSignal.interruptible(signal, Effect.suspend(() => approval.ask(request))))
    if (Exit.isFailure(answerExit)) {
      return outcome(denialResult(`approval failed: ${causeMessage(answerExit.cause)}`))
    }
    if (Option.isNone(answerExit.value)) return final(yield* abortedNow(signal))
    const answer: unknown = answerExit.value.value
    switch (answer) {
      case "allow-once":
        return run
      case "reject":
        return outcome(denialResult("the user rejected the tool call"))
      case "cancelled":
        return outcome(denialResult("approval was cancelled"))
      case "unavailable":
        return outcome(denialResult("approval is unavailable"))
      default:
        return outcome(denialResult(`approval failed: unexpected answer ${messageOf(answer)}`))
    }
  })

const isContentArray: (u: unknown) => boolean = Schema.is(Schema.Array(ContentBlock.ContentBlock))
const isSource: (u: unknown) => boolean = Schema.is(Message.MessageSource)

const normalize = (output: unknown): Tool.ToolExecutionResult => {
  if (Array.isArray(output)) return { content: output as ReadonlyArray<ContentBlock.ContentBlock>, isError: false }
  if (typeof output === "object" && output !== null && Array.isArray((output as { content?: unknown }).content)) {
    const o = output as { content: ReadonlyArray<ContentBlock.ContentBlock>; meta?: Json.Json }
    return o.meta === undefined ? { content: o.content, isError: false } : { content: o.content, isError: false, meta: o.meta }
  }
  return errorResult("tool returned an invalid result (expected content blocks)")
}

interface DeferredContexts {
  readonly contexts: ReadonlyArray<HookContext>
  readonly invalid: boolean
}

const readDeferred = (call: Call): Effect.Effect<DeferredContexts> =>
  Effect.map(Ref.get(call.deferred), (list) => ({
    contexts: list.flatMap((e) => (Result.isSuccess(e) ? [e.success] : [])),
    invalid: list.some(Result.isFailure)
  }))

const withContexts = (result: Tool.ToolExecutionResult, deferred: DeferredContexts): Tool.ToolExecutionResult => {
  const contexts = [...deferred.contexts, ...(result.additionalContexts ?? [])]
  return contexts.length === 0 ? result : { ...result, additionalContexts: contexts }
}

const withDeadline = <A, E>(
  upstream: StepSignal.StepSignal,
  ms: number,
  body: (signal: StepSignal.StepSignal) => Effect.Effect<Option.Option<A>, E>
): Effect.Effect<Result.Result<Option.Option<A>, "timeout">, E> =>
  Effect.gen(function*() {
    const child = yield* StepSignal.make
    // the deadline fired when this very reason is the child's (first) abort reason: an abort resumes the body at
    // once (Effect 4 resumes waiters synchronously), so a flag set after the abort would come too late
    const timeout: StepSignal.AbortReason = { _tag: "Cancelled", reason: `timed out after ${ms}ms` }
    const watcher = Effect.raceFirst(
      Effect.flatMap(StepSignal.await_(upstream), (r) => StepSignal.abort(child, r)),
      Effect.flatMap(Effect.sleep(ms), () => StepSignal.abort(child, timeout))
    )
    return yield* Effect.acquireUseRelease(
      // forked from an uninterruptible acquire: the watcher must be interruptible itself
      Effect.forkChild(Effect.interruptible(watcher)),
      () =>
        Effect.flatMap(body(child), (result) =>
          Effect.map(StepSignal.reason(child), (fired) =>
            // T-15: when THIS deadline fired the result is replaced, even if the body cooperated
            Option.isSome(fired) && fired.value === timeout ? Result.fail("timeout" as const) : Result.succeed(result))),
      (fiber) => Fiber.interrupt(fiber)
    )
  })

const runBody = (call: Call, tool: Tool.Tool<never>, signal: StepSignal.StepSignal): Effect.Effect<Tool.ToolExecutionResult> => {
  const context = (s: StepSignal.StepSignal): Tool.ToolRunContext => ({
    callId: call.info.callId,
    name: call.info.name,
    idempotencyKey: call.info.idempotencyKey,
    agent: call.info.agent,
    signal: s,
    deferContext: (ctx) =>
      Effect.flatMap(Effect.sync(() => BatchContexts.snapshot(ctx)), (snap) => Ref.update(call.deferred, (l) => [...l, snap]))
  })
  const body = (s: StepSignal.StepSignal) =>
    StepSignal.interruptible(s, Effect.suspend(() => tool.execute(call.info.arguments, context(s))))
  const timed = tool.timeoutMs === undefined
    ? Effect.map(body(signal), Result.succeed)
    : withDeadline(signal, tool.timeoutMs, body)
  return Effect.exit(timed).pipe(
    Effect.flatMap((exit) => {
      if (Exit.isFailure(exit)) return Effect.succeed(failureResult(exit.cause))
      const value = exit.value
      if (Result.isFailure(value)) return Effect.succeed(timeoutResult(tool.timeoutMs ?? 0))
      if (Option.isNone(value.success)) return abortedNow(signal)
      return Effect.succeed(normalize(value.success.value))
    })
  )
}

/**
 * Execute wrappers around dispatch (unknown tool or body). Never fails.
 *
 * @since 0.1.0
 * @category stages
 */
export const dispatch = (call: Call, stage: Stage): Effect.Effect<Stage, never, ToolRuntime> =>
  stage._tag !== "Run"
    ? Effect.succeed(stage)
    : Spans.tool(call.info, Effect.gen(function*() {
      const rt = yield* ToolRuntime
      const info = call.info
      const input: ToolHooks.ExecuteInput = { ...info, tool: call.tool }
      const terminal = (next: ToolHooks.ExecuteInput): Effect.Effect<Tool.ToolExecutionResult> =>
        Effect.flatMap(
          Option.match(call.tool, {
            onNone: () => Effect.succeed(unknownToolResult(info.name)),
            onSome: (tool) => runBody(call, tool, next.signal)
          }),
          (result) => Effect.map(readDeferred(call), (deferred) => withContexts(result, deferred))
        )
      const exit = yield* Effect.exit(
        StepSignal.interruptible(info.signal, rt.hooks.execute.run(agentKey(call), input, terminal))
      )
      const deferred = yield* readDeferred(call)
      if (Exit.isFailure(exit)) return final(withContexts(failureResult(exit.cause), deferred))
      if (Option.isNone(exit.value)) return outcome(withContexts(yield* abortedNow(info.signal), deferred))
      return outcome(exit.value.value)
    }))

const freezeShallow = (result: Tool.ToolExecutionResult): Tool.ToolExecutionResult => Object.freeze({ ...result })

/**
 * T-8: validates and freezes the final result; a non-JSON result becomes the error result
 * (meta and contexts dropped).
 *
 * @since 0.1.0
 * @category stages
 */
export const materialize = (result: Tool.ToolExecutionResult): Tool.ToolExecutionResult => {
  const plain: { -readonly [K in keyof Tool.ToolExecutionResult]: Tool.ToolExecutionResult[K] } = {
    content: result.content,
    isError: result.isError
  }
  if (result.error !== undefined) plain.error = { name: result.error.name, code: result.error.code }
  if (result.meta !== undefined) plain.meta = result.meta
  if (result.additionalContexts !== undefined && result.additionalContexts.length > 0) {
    plain.additionalContexts = result.additionalContexts.map((c) =>
      c.meta === undefined ? { content: c.content, source: c.source } : { content: c.content, source: c.source, meta: c.meta }
    )
  }
  const snap = Json.snapshotOf(plain)
  if (Result.isFailure(snap)) return notJsonResult
  const frozen = snap.success
  if (!isContentArray(frozen.content) || typeof frozen.isError !== "boolean") return notJsonResult
  for (const c of frozen.additionalContexts ?? []) {
    if (!isContentArray(c.content) || !isSource(c.source)) return notJsonResult
  }
  return frozen
}

/**
 * Post-execute (T-7), materialize (T-8) and the result notification (contained). Never fails.
 *
 * @since 0.1.0
 * @category stages
 */
export const finish = (call: Call, stage: Stage): Effect.Effect<Tool.ToolExecutionResult, never, ToolRuntime> =>
  Effect.gen(function*() {
    const rt = yield* ToolRuntime
    const deferred = yield* readDeferred(call)
    // whether the result still carries the body-deferred contexts (a Block drops them, T-7)
    let keepsDeferred = true
    let result: Tool.ToolExecutionResult
    switch (stage._tag) {
      case "Run":
        // defensive: a call that never dispatched is answered as an unknown dispatch
        result = unknownToolResult(call.info.name)
        break
      case "Final":
        result = stage.result
        break
      case "Outcome": {
        const current = freezeShallow(stage.result)
        const exit = yield* Effect.exit(
          rt.hooks.postExecute.run(agentKey(call), { ...call.info, result: current }, () => Effect.succeed(acceptDecision))
        )
        if (Exit.isFailure(exit)) {
          result = withContexts(failureResult(exit.cause), deferred)
          break
        }
        const decision: unknown = exit.value
        const tag = tagOf(decision)
        if (tag === "Accept") {
          const d = decision as { content?: ReadonlyArray<ContentBlock.ContentBlock>; additionalContexts?: ReadonlyArray<HookContext> }
          const contexts = [...(current.additionalContexts ?? []), ...(d.additionalContexts ?? [])]
          const replaced = d.content === undefined ? current : { ...current, content: d.content }
          result = contexts.length === 0 ? replaced : { ...replaced, additionalContexts: contexts }
        } else if (tag === "Block") {
          const d = decision as { feedback: ReadonlyArray<ContentBlock.ContentBlock>; additionalContexts?: ReadonlyArray<HookContext> }
          keepsDeferred = false
          result = d.additionalContexts === undefined || d.additionalContexts.length === 0
            ? { content: d.feedback, isError: true }
            : { content: d.feedback, isError: true, additionalContexts: d.additionalContexts }
        } else {
          result = withContexts(errorResult("invalid post-execute decision (expected Accept or Block)"), deferred)
        }
        break
      }
    }
    // a non-JSON deferred context poisons the result it travels with (T-8)
    const materialized = deferred.invalid && keepsDeferred ? notJsonResult : materialize(result)
    yield* rt.hooks.result.run(agentKey(call), { ...call.info, result: materialized })
    return materialized
  })

/**
 * The whole pipeline for one call (prepare → dispatch → finish). Never fails.
 *
 * @since 0.1.0
 * @category stages
 */
export const runCall = (call: Call): Effect.Effect<Tool.ToolExecutionResult, never, ToolRuntime> =>
  Effect.flatMap(prepare(call), (stage) => Effect.flatMap(dispatch(call, stage), (s) => finish(call, s)))
