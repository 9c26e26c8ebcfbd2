/**
 * The tool scheduler (L-14..L-19): runs one step's tool calls through the `ToolPipeline` and
 * records them in the session.
 *
 * - Classification (L-14), just before each call starts: `parallel` only when the visible tool's
 *   `isConcurrencySafe` returns exactly `true` for the parsed arguments; unknown/hidden tool, no
 *   classifier, a throwing one or invalid arguments → `exclusive`. An exclusive call is a barrier:
 *   it waits until every earlier call committed, runs alone, and commits before anything else
 *   starts. Consecutive parallel calls share a rolling pool of `maxParallelToolCalls` dispatches.
 * - Starting a call (L-15) appends `tool/call{turn, step, callId, name, arguments: raw}`, then runs
 *   its pre-execute stage; pre-execute, guards and approval run one call at a time in model order;
 *   only dispatches (wrappers + bodies) overlap.
 * - Commit (L-16): a committer walks the calls in model order; a call's post-execute, result
 *   notification and `tool/result` (surfaceOp `append`, sources `[tool/call seq]`, `error`/`meta`
 *   when present) happen after every earlier call committed; its `additionalContexts` go to the
 *   batch FIFO in that order.
 * - Abort (L-17): once the step signal fired nothing new starts; started calls are awaited (their
 *   bodies are interrupted by the signal and reach quiescence) and committed in order; then every
 *   call never started gets a synthetic `tool/call` + `tool/result` (`{AbortError, ABORTED}`,
 *   text `Error: tool call skipped because the step was aborted before execution (<reason>)`).
 * - Contexts (L-19): when the batch settles, the FIFO (results' contexts + `inject()`s that arrived
 *   meanwhile) is appended as `context/message`s after ALL results.
 * - Failures (L-18): tool failures are results; only a failure of the machinery itself (a session
 *   append) fails `runBatch` with {@link ToolSchedulerError}. Started bodies are then interrupted.
 *
 * Interruption of `runBatch` itself (e.g. the driver fiber is interrupted by disposal) is turned
 * into an abort of the batch (reason `interrupted`) and the batch settles exactly as above
 * (started calls committed, synthetic pairs, contexts) before the interruption propagates, so the
 * log stays balanced (every `tool/call` answered).
 *
 * Decision where the spec is silent (DEC-10): a pool slot is held from the start of a parallel
 * call's dispatch to the end of its dispatch (not of its commit), so a slow early call does not
 * stall later completed ones from freeing their slots.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type { ToolCallBlock } from "../Llm/ContentBlock.js"
import type { Session } from "../Session/Session.js"
import type { SessionError } from "../Session/SessionError.js"
import type { SessionEvent } from "../Session/SessionEvent.js"
import type { AgentControl } from "./AgentControl.js"
import * as BatchContexts from "./BatchContexts.js"
import type { HookContext } from "./HookContext.js"
import * as StepSignal from "./StepSignal.js"
import type * as Tool from "./Tool.js"
import * as ToolPipeline from "./ToolPipeline.js"
import type * as ToolRegistry from "./ToolRegistry.js"
import { ToolRuntime } from "./ToolRuntime.js"

/**
 * The scheduling machinery failed (a session append); the turn fails (L-18).
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolSchedulerError extends Schema.TaggedError<ToolSchedulerError>()("ToolSchedulerError", {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /** Stable code. */
  readonly code = "TOOL_SCHEDULER" as const
}

/**
 * One step's batch.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchInput {
  /** where `tool/call`, `tool/result` and `context/message` are appended */
  readonly session: Session
  /** handed to tool bodies and hooks */
  readonly agent: AgentControl
  readonly turn: number
  readonly step: number
  /** the calls in model order (from the post-step-result assistant message) */
  readonly calls: ReadonlyArray<ToolCallBlock>
  /** what this agent may see and run (T-1) */
  readonly tools: ToolRegistry.View
  /** the step's abort signal (cancel / dispose) */
  readonly signal: StepSignal.StepSignal
  /** the batch FIFO (L-19); the loop offers `inject()`s to it while the batch runs */
  readonly contexts: BatchContexts.BatchContexts
  /**
   * a resumed turn's re-runs (DEC-16): call id → seq of its synthetic result, which the new
   * `tool/result` replaces on the surface instead of appending
   */
  readonly replaces?: ReadonlyMap<string, number>
}

/**
 * How the batch settled.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchOutcome {
  /** the step signal fired before or during the batch */
  readonly aborted: boolean
}

type Mode = "parallel" | "exclusive"

/**
 * L-14: parallel only when the tool's classifier returns exactly `true`.
 *
 * @since 0.1.0
 * @category utils
 */
export const classify = (tool: Option.Option<Tool.Tool<never>>, args: unknown): Mode => {
  if (Option.isNone(tool)) return "exclusive"
  const classifier = tool.value.isConcurrencySafe
  if (classifier === undefined) return "exclusive"
  try {
    return classifier(args) === true ? "parallel" : "exclusive"
  } catch {
    return "exclusive"
  }
}

interface Slot {
  readonly index: number
  readonly block: ToolCallBlock
  readonly args: unknown
  /** `Some(stage)` once started and dispatched; `None` = never started */
  readonly done: Deferred.Deferred<Option.Option<Started>>
  readonly committed: Deferred.Deferred<void>
}

interface Started {
  readonly call: ToolPipeline.Call
  readonly callSeq: number
  readonly stage: Deferred.Deferred<ToolPipeline.Stage>
}

const appendFailed = (what: string) => (cause: SessionError) =>
  new ToolSchedulerError({ message: `could not append ${what}: ${cause.message}`, cause })

const appendCall = (input: BatchInput, block: ToolCallBlock): Effect.Effect<SessionEvent, ToolSchedulerError> =>
  input.session.append({
    type: "tool/call",
    data: { turn: input.turn, step: input.step, callId: block.id, name: block.name, arguments: block.arguments }
  }).pipe(Effect.mapError(appendFailed("tool/call")))

const appendResult = (
  input: BatchInput,
  block: ToolCallBlock,
  callSeq: number,
  result: Tool.ToolExecutionResult
): Effect.Effect<SessionEvent, ToolSchedulerError> => {
  const base = { turn: input.turn, step: input.step, callId: block.id, content: result.content, isError: result.isError }
  const withError = result.error === undefined ? base : { ...base, error: result.error }
  const data = result.meta === undefined ? withError : { ...withError, meta: result.meta }
  const shadowed = input.replaces?.get(block.id)
  const appended = shadowed === undefined
    ? input.session.append({ type: "tool/result", data, surfaceOp: "append", sourceEventSeqs: [callSeq] })
    : input.session.append({
      type: "tool/result",
      data,
      surfaceOp: { op: "replace", start: shadowed, end: shadowed },
      sourceEventSeqs: [shadowed, callSeq]
    })
  return appended.pipe(
    Effect.mapError(appendFailed("tool/result"))
  )
}

const appendContext = (input: BatchInput, context: HookContext): Effect.Effect<void, ToolSchedulerError> =>
  input.session.append({
    type: "context/message",
    data: context.meta === undefined
      ? { content: context.content, source: context.source }
      : { content: context.content, source: context.source, meta: context.meta },
    surfaceOp: "append"
  }).pipe(Effect.mapError(appendFailed("context/message")), Effect.asVoid)

const DEFAULT_REASON: StepSignal.AbortReason = { _tag: "Cancelled", reason: "cancelled" }

const core = (input: BatchInput, signal: StepSignal.StepSignal): Effect.Effect<void, ToolSchedulerError, ToolRuntime> =>
  Effect.gen(function*() {
    const rt = yield* ToolRuntime
    const slots: Array<Slot> = []
    for (const [index, block] of input.calls.entries()) {
      slots.push({
        index,
        block,
        args: ToolPipeline.parseArguments(block.arguments),
        done: yield* Deferred.make<Option.Option<Started>>(),
        committed: yield* Deferred.make<void>()
      })
    }
    const pool = yield* Semaphore.make(rt.maxParallelToolCalls)

    // the committer: model order; stops at the first call that never started
    const committer = Effect.gen(function*() {
      for (const slot of slots) {
        const started = yield* Deferred.await(slot.done)
        if (Option.isNone(started)) return
        const { call, callSeq } = started.value
        const stage = yield* Deferred.await(started.value.stage)
        const result = yield* ToolPipeline.finish(call, stage)
        yield* appendResult(input, slot.block, callSeq, result)
        for (const context of result.additionalContexts ?? []) {
          const queued = yield* BatchContexts.offerFrozen(input.contexts, context)
          // a FIFO closed by someone else must not lose the context: it still follows the result
          if (!queued) yield* appendContext(input, context)
        }
        yield* Deferred.succeed(slot.committed, undefined)
      }
    })
    const committerFiber = yield* Effect.forkChild(committer)

    const startSlot = (slot: Slot, tool: Option.Option<Tool.Tool<never>>) =>
      Effect.gen(function*() {
        const event = yield* appendCall(input, slot.block)
        const call = yield* ToolPipeline.start({
          call: slot.block,
          arguments: slot.args,
          tool,
          agent: input.agent,
          turn: input.turn,
          step: input.step,
          signal
        })
        const stage = yield* Deferred.make<ToolPipeline.Stage>()
        yield* Deferred.succeed(slot.done, Option.some({ call, callSeq: event.seq, stage }))
        const prepared = yield* ToolPipeline.prepare(call)
        return { call, stage, prepared }
      })

    // a failure of the committer (append) must stop the starter too
    const awaitCommitted = (slot: Slot) =>
      Effect.raceFirst(
        Deferred.await(slot.committed),
        Effect.flatMap(Fiber.join(committerFiber), () => Effect.never)
      )

    let lastStarted: Slot | undefined
    let next = 0
    while (next < slots.length) {
      if (yield* StepSignal.isAborted(signal)) break
      const slot = slots[next] as Slot
      const tool = yield* input.tools.get(slot.block.name)
      const mode = classify(tool, slot.args)
      if (mode === "exclusive") {
        if (lastStarted !== undefined) yield* awaitCommitted(lastStarted)
        if (yield* StepSignal.isAborted(signal)) break
        // re-resolve: the barrier may have waited a long time
        const current = yield* input.tools.get(slot.block.name)
        if (classify(current, slot.args) === "parallel") continue
        const { call, prepared, stage } = yield* startSlot(slot, current)
        yield* Effect.flatMap(ToolPipeline.dispatch(call, prepared), (s) => Deferred.succeed(stage, s))
        lastStarted = slot
        yield* awaitCommitted(slot)
        next++
        continue
      }
      // parallel: wait for a pool slot (or the abort)
      const permit = yield* StepSignal.interruptible(signal, pool.take(1))
      if (Option.isNone(permit)) break
      if (yield* StepSignal.isAborted(signal)) {
        yield* pool.release(1)
        break
      }
      // re-classify just before starting (L-14)
      const current = yield* input.tools.get(slot.block.name)
      if (classify(current, slot.args) === "exclusive") {
        yield* pool.release(1)
        continue
      }
      const { call, prepared, stage } = yield* startSlot(slot, current).pipe(Effect.onError(() => pool.release(1)))
      lastStarted = slot
      yield* Effect.forkChild(
        ToolPipeline.dispatch(call, prepared).pipe(
          Effect.flatMap((s) => Deferred.succeed(stage, s)),
          Effect.ensuring(pool.release(1))
        )
      )
      next++
    }
    // everything from `next` on never starts
    for (const slot of slots.slice(next)) yield* Deferred.succeed(slot.done, Option.none())
    yield* Fiber.join(committerFiber)
    // L-17: synthetic pairs for the calls never started
    if (next < slots.length) {
      const reason = Option.getOrElse(yield* StepSignal.reason(signal), () => DEFAULT_REASON)
      for (const slot of slots.slice(next)) {
        const event = yield* appendCall(input, slot.block)
        yield* appendResult(input, slot.block, event.seq, ToolPipeline.skippedResult(reason))
      }
    }
  })

const settleContexts = (input: BatchInput): Effect.Effect<void, ToolSchedulerError> =>
  BatchContexts.drain(input.contexts, (context) => appendContext(input, context))

/**
 * Runs one step's tool calls (L-14..L-19). Fails only when the machinery fails (L-18).
 *
 * @since 0.1.0
 * @category execution
 */
export const runBatch = (input: BatchInput): Effect.Effect<BatchOutcome, ToolSchedulerError, ToolRuntime> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      // the batch's own signal: the step signal, or an interruption of runBatch itself
      const signal = yield* StepSignal.make
      const link = yield* Effect.forkChild(
        Effect.interruptible(Effect.flatMap(StepSignal.await_(input.signal), (r) => StepSignal.abort(signal, r)))
      )
      // a daemon: an interrupt signal sent to this fiber must not reach the core (children of a
      // fiber are interrupted with it); the core is always awaited below, so it never leaks
      const fiber = yield* Effect.forkDetach(Effect.interruptible(core(input, signal)))
      const exit = yield* restore(Fiber.await(fiber)).pipe(
        Effect.onInterrupt(() =>
          Effect.andThen(
            Fiber.interrupt(link),
            Effect.andThen(
            StepSignal.abort(signal, { _tag: "Cancelled", reason: "interrupted" }),
            Effect.andThen(Fiber.await(fiber), settleContexts(input).pipe(
              Effect.catch((e) => Effect.logWarning("tool batch contexts could not be appended after interruption", e))
            ))
          ))
        )
      )
      yield* Fiber.interrupt(link)
      if (Exit.isFailure(exit)) {
        const pending = yield* BatchContexts.pending(input.contexts)
        if (pending.length > 0) {
          yield* Effect.logWarning(`tool batch failed; ${pending.length} queued context(s) were not appended`)
        }
        return yield* Effect.failCause(exit.cause)
      }
      yield* settleContexts(input)
      return { aborted: yield* StepSignal.isAborted(input.signal) }
    })
  )
