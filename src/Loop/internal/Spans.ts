/**
 * The loop's GenAI spans and metrics (issue 19): `invoke_agent` per turn, `chat {model}` per model request,
 * `execute_tool {name}` per tool call, following the conventions named in `Llm/GenAi.ts`. Each wraps work the loop
 * does anyway, once per turn, request or call; nothing here runs per chunk.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as BlockAssembler from "../../Llm/BlockAssembler.js"
import * as GenAi from "../../Llm/GenAi.js"
import type * as Message from "../../Llm/Message.js"
import type { GenerateOptions } from "../../Llm/Message.js"
import * as Retry from "../../Llm/Retry.js"
import type * as Tool from "../Tool.js"

/** A stack trace in these spans would name this module, never the caller's code. */
const noStackTrace = { captureStackTrace: false } as const

/**
 * Wraps one turn in an `invoke_agent` span. Every span opened inside the turn (requests, tools, retries, hooks,
 * compaction, flushes) carries the session id and the turn number too.
 *
 * @since 0.1.0
 * @category spans
 */
export const turn = <A, E, R>(
  sessionId: string,
  turnNumber: number,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withSpan(
    Effect.annotateSpans(effect, { [GenAi.Attr.conversationId]: sessionId, [GenAi.Attr.turn]: turnNumber }),
    `invoke_agent ${GenAi.agentName}`,
    {
      kind: "internal",
      ...noStackTrace,
      attributes: {
        [GenAi.Attr.operationName]: "invoke_agent",
        [GenAi.Attr.agentName]: GenAi.agentName,
        [GenAi.Attr.agentId]: sessionId,
        [GenAi.Attr.conversationId]: sessionId,
        [GenAi.Attr.turn]: turnNumber
      }
    }
  )

/**
 * Records how a turn ended on the current (`invoke_agent`) span.
 *
 * @since 0.1.0
 * @category spans
 */
export const turnEnded = (reason: { readonly kind: string; readonly code?: string }): Effect.Effect<void> =>
  Effect.annotateCurrentSpan(
    reason.kind === "error"
      ? { [GenAi.Attr.turnEndReason]: reason.kind, [GenAi.Attr.errorType]: reason.code ?? "error" }
      : { [GenAi.Attr.turnEndReason]: reason.kind }
  )

/** What a model request produced, as the loop sees it: `None` = interrupted by the step signal. */
type Consumed<E> = Option.Option<Result.Result<BlockAssembler.Assembled, E>>

/**
 * What a request's span also needs from the loop: the price of a usage record, and where a retry is recorded.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatOptions {
  /** the cost in USD of the response's usage (`undefined`: unpriced) */
  readonly cost?: (usage: Message.TokenUsage) => number | undefined
  /** called once per retry of the request, after the retry notices already in context */
  readonly onRetry?: (notice: Retry.RetryNotice) => Effect.Effect<void>
}

/**
 * Wraps one model request (the stream consumed into the assembler) in a `chat {model}` span, then records the
 * response attributes, its cost and retries, and the `gen_ai.client.*` metrics. `firstChunkAt` reads when the first
 * chunk arrived (`performance.now()` time), which the loop notes once per request. Spans opened inside (retries)
 * carry the step number.
 *
 * @since 0.1.0
 * @category spans
 */
export const chat = <E extends { readonly code?: string }, R>(
  request: GenerateOptions,
  position: { readonly turn: number; readonly step: number },
  firstChunkAt: () => number | undefined,
  effect: Effect.Effect<Consumed<E>, never, R>,
  options: ChatOptions = {}
): Effect.Effect<Consumed<E>, never, R> => {
  return Effect.gen(function*() {
    const capture = yield* GenAi.CaptureContent
    const outer = yield* Retry.Notices
    let retries = 0
    const notices = (notice: Retry.RetryNotice) =>
      Effect.andThen(
        Effect.andThen(Effect.sync(() => retries++), outer(notice)),
        options.onRetry === undefined ? Effect.void : options.onRetry(notice)
      )
    const started = performance.now()
    const metrics = chatMetrics(request)
    const consumed = yield* Effect.provideService(effect, Retry.Notices, notices)
    const seconds = (performance.now() - started) / 1000
    const first = firstChunkAt()
    const attributes: Record<string, unknown> = {}
    if (capture) attributes[GenAi.Attr.inputMessages] = JSON.stringify(request.messages)
    if (first !== undefined) attributes[GenAi.Attr.timeToFirstChunk] = (first - started) / 1000
    if (retries > 0) attributes[GenAi.Attr.retries] = retries
    let errorType: string | undefined
    if (Option.isNone(consumed)) {
      errorType = "cancelled"
    } else if (Result.isFailure(consumed.value)) {
      errorType = consumed.value.failure.code ?? "error"
    } else {
      const response = consumed.value.success
      Object.assign(attributes, GenAi.usageAttributes(response.usage), GenAi.responseIdentity(response.replayState))
      if (attributes[GenAi.Attr.responseModel] === undefined) attributes[GenAi.Attr.responseModel] = request.model
      attributes[GenAi.Attr.responseFinishReasons] = [GenAi.finishReasonName(response.finish)]
      if (response.finish.kind === "error") errorType = response.finish.code ?? "error"
      if (capture) attributes[GenAi.Attr.outputMessages] = JSON.stringify([{ role: "assistant", content: response.blocks }])
      if (response.usage !== undefined) {
        const cost = options.cost?.(response.usage)
        if (cost !== undefined) attributes[GenAi.Attr.costUsd] = cost
        const usage = GenAi.usageAttributes(response.usage)
        yield* Metric.update(metrics.inputTokens, usage[GenAi.Attr.inputTokens] ?? 0)
        yield* Metric.update(metrics.outputTokens, response.usage.outputTokens)
      }
    }
    if (errorType !== undefined) attributes[GenAi.Attr.errorType] = errorType
    yield* Effect.annotateCurrentSpan(attributes)
    yield* Metric.update(metrics.duration, seconds)
    if (first !== undefined) yield* Metric.update(metrics.timeToFirstChunk, (first - started) / 1000)
    return consumed
  }).pipe(
    Effect.annotateSpans(GenAi.Attr.step, position.step),
    Effect.withSpan(`chat ${request.model}`, {
      kind: "client",
      attributes: {
        ...requestAttributes(request),
        [GenAi.Attr.conversationId]: request.sessionId ?? "",
        [GenAi.Attr.turn]: position.turn,
        [GenAi.Attr.step]: position.step
      }
    }, noStackTrace)
  )
}

const requestAttributes = (request: GenerateOptions) => ({
  [GenAi.Attr.operationName]: "chat",
  [GenAi.Attr.providerName]: request.provider,
  [GenAi.Attr.requestModel]: request.model
})

const makeChatMetrics = (request: GenerateOptions) => {
  const attributes = requestAttributes(request)
  return {
    inputTokens: GenAi.tokenUsage.pipe(Metric.withAttributes({ ...attributes, "gen_ai.token.type": "input" })),
    outputTokens: GenAi.tokenUsage.pipe(Metric.withAttributes({ ...attributes, "gen_ai.token.type": "output" })),
    duration: GenAi.operationDuration.pipe(Metric.withAttributes(attributes)),
    timeToFirstChunk: GenAi.timeToFirstChunk.pipe(Metric.withAttributes(attributes))
  }
}

/** The tagged metrics of a route, built once per provider and model (a tagged metric builds and hashes its key). */
const chatMetricsByRoute = new Map<string, ReturnType<typeof makeChatMetrics>>()

const chatMetrics = (request: GenerateOptions): ReturnType<typeof makeChatMetrics> => {
  const key = `${request.provider}\u0000${request.model}`
  let metrics = chatMetricsByRoute.get(key)
  if (metrics === undefined) {
    // bounded: a process talks to a handful of routes; a runaway set of model names is dropped wholesale
    if (chatMetricsByRoute.size >= 256) chatMetricsByRoute.clear()
    metrics = makeChatMetrics(request)
    chatMetricsByRoute.set(key, metrics)
  }
  return metrics
}

/** The result a tool stage ended with, when it has one. */
type WithResult = { readonly _tag: string; readonly result?: Tool.ToolExecutionResult }

/**
 * Wraps the execution of one tool call in an `execute_tool {name}` span and records its duration.
 *
 * @since 0.1.0
 * @category spans
 */
export const tool = <S extends WithResult, R>(
  info: { readonly name: string; readonly callId: string; readonly arguments: unknown; readonly turn: number; readonly step: number },
  effect: Effect.Effect<S, never, R>
): Effect.Effect<S, never, R> =>
  Effect.gen(function*() {
    const capture = yield* GenAi.CaptureContent
    const started = performance.now()
    const stage = yield* effect
    const attributes: Record<string, unknown> = {}
    if (capture) attributes[GenAi.Attr.toolArguments] = JSON.stringify(info.arguments)
    const result = stage.result
    if (result !== undefined && result.isError) attributes[GenAi.Attr.errorType] = result.error?.code ?? "tool_error"
    if (capture && result !== undefined) attributes[GenAi.Attr.toolResult] = JSON.stringify(result.content)
    yield* Effect.annotateCurrentSpan(attributes)
    yield* Metric.update(
      GenAi.toolDuration.pipe(Metric.withAttributes({ [GenAi.Attr.toolName]: info.name })),
      (performance.now() - started) / 1000
    )
    return stage
  }).pipe(
    Effect.withSpan(`execute_tool ${info.name}`, {
      kind: "internal",
      attributes: {
        [GenAi.Attr.operationName]: "execute_tool",
        [GenAi.Attr.toolName]: info.name,
        [GenAi.Attr.toolCallId]: info.callId,
        [GenAi.Attr.toolType]: "function",
        [GenAi.Attr.turn]: info.turn,
        [GenAi.Attr.step]: info.step
      }
    }, noStackTrace)
  )

/** A compaction's outcome as its span reports it. */
type CompactionOutcome =
  | { readonly _tag: "Vetoed" | "Aborted" }
  | { readonly _tag: "Done" | "Failed"; readonly pressureBefore: number; readonly pressureAfter: number; readonly code?: string }

/**
 * Wraps one compaction in an `effect_harness.compaction` span: its trigger, outcome and pressure before/after. Inside
 * a turn it is a child of the turn's `invoke_agent` span; a manual compaction while idle runs as its own turn
 * without one (it invokes no agent), so its span is a root naming the session and turn.
 *
 * @since 0.1.0
 * @category spans
 */
export const compaction = <O extends CompactionOutcome, E, R>(
  sessionId: string,
  input: { readonly turn: number; readonly trigger: string },
  effect: Effect.Effect<O, E, R>
): Effect.Effect<O, E, R> =>
  Effect.tap(effect, (outcome) =>
    Effect.annotateCurrentSpan({
      [GenAi.Attr.compactionOutcome]: outcome._tag.toLowerCase(),
      ...("pressureBefore" in outcome
        ? { [GenAi.Attr.pressureBefore]: outcome.pressureBefore, [GenAi.Attr.pressureAfter]: outcome.pressureAfter }
        : {}),
      ...("code" in outcome && outcome.code !== undefined ? { [GenAi.Attr.errorType]: outcome.code } : {})
    })).pipe(
      Effect.withSpan(GenAi.SpanName.compaction, {
        kind: "internal",
        attributes: {
          [GenAi.Attr.conversationId]: sessionId,
          [GenAi.Attr.turn]: input.turn,
          [GenAi.Attr.compactionTrigger]: input.trigger
        }
      })
    )
