/**
 * OpenTelemetry GenAI semantic conventions for the harness's spans and metrics (issue 19).
 *
 * The names follow the GenAI conventions of the OpenTelemetry semantic conventions (status: development),
 * checked against `@opentelemetry/semantic-conventions` 1.45.0: spans `invoke_agent {agent}` per turn,
 * `chat {model}` per model request and `execute_tool {tool}` per tool call, with the `gen_ai.*` attributes below;
 * metrics `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`.
 *
 * Spans are opened where the work happens (the loop's turn, its model request, the tool pipeline) with
 * `Effect.withSpan`: per turn, per request and per tool call, never per chunk. Without a tracer Layer they cost
 * Effect's native no-export spans; `src/Telemetry` exports them over OTLP. Message content is attached only when
 * {@link CaptureContent} is set (the conventions' opt-in content capture); keys never are.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import type * as Message from "./Message.js"

/**
 * Attribute names used by the harness (GenAI conventions, plus `effect_harness.*` for the harness's own).
 *
 * @since 0.1.0
 * @category attributes
 */
export const Attr = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  timeToFirstChunk: "gen_ai.response.time_to_first_chunk",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheWriteTokens: "gen_ai.usage.cache_creation.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  errorType: "error.type",
  turn: "effect_harness.turn",
  step: "effect_harness.step",
  turnEndReason: "effect_harness.turn.end_reason",
  costUsd: "effect_harness.cost.usd",
  retries: "effect_harness.request.retries",
  retryAttempt: "effect_harness.retry.attempt",
  retryDelayMs: "effect_harness.retry.delay_ms",
  compactionTrigger: "effect_harness.compaction.trigger",
  compactionOutcome: "effect_harness.compaction.outcome",
  pressureBefore: "effect_harness.compaction.pressure_before",
  pressureAfter: "effect_harness.compaction.pressure_after",
  sessionId: "effect_harness.session.id",
  pendingEvents: "effect_harness.session.pending_events",
  hookPoint: "effect_harness.hook.point",
  hookListeners: "effect_harness.hook.listeners",
  hookEvent: "effect_harness.hook.event",
  hookHandler: "effect_harness.hook.handler_id",
  hookExitCode: "effect_harness.hook.exit_code"
} as const

/**
 * Names of the harness's own spans (next to the GenAI ones): a retry's backoff, a compaction, a session flush or
 * release, an in-process hook point's run and a command hook's process. Each is opened once per occurrence, never
 * per chunk.
 *
 * @since 0.1.0
 * @category attributes
 */
export const SpanName = {
  retry: "effect_harness.retry",
  compaction: "effect_harness.compaction",
  flush: "effect_harness.session.flush",
  release: "effect_harness.session.release",
  hook: (point: string) => `effect_harness.hook ${point}`,
  hookCommand: (event: string) => `effect_harness.hook_command ${event}`
} as const

/**
 * The agent name the harness reports in `invoke_agent` spans.
 *
 * @since 0.1.0
 * @category attributes
 */
export const agentName = "effect-harness"

/**
 * Opt-in content capture: when `true`, model requests and tool calls carry their messages, arguments and results
 * as span attributes. Off by default (content may be private); keys are never captured either way.
 *
 * @since 0.1.0
 * @category references
 */
export const CaptureContent: Context.Reference<boolean> = Context.Reference<boolean>(
  "effect-harness/Llm/GenAi/CaptureContent",
  { defaultValue: () => false }
)

/**
 * Usage as GenAI attributes. The conventions count cached input inside `gen_ai.usage.input_tokens`, while the
 * vocabulary's `inputTokens` excludes it (V-6), so input = input + cache reads + cache writes here.
 *
 * @since 0.1.0
 * @category attributes
 */
export const usageAttributes = (usage: Message.TokenUsage | undefined): Record<string, number> => {
  if (usage === undefined) return {}
  const out: Record<string, number> = {
    [Attr.inputTokens]: usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0),
    [Attr.outputTokens]: usage.outputTokens
  }
  if (usage.cacheReadTokens !== undefined) out[Attr.cacheReadTokens] = usage.cacheReadTokens
  if (usage.cacheWriteTokens !== undefined) out[Attr.cacheWriteTokens] = usage.cacheWriteTokens
  if (usage.reasoningTokens !== undefined) out[Attr.reasoningTokens] = usage.reasoningTokens
  return out
}

/**
 * `gen_ai.response.id` / `gen_ai.response.model` where the response carries them. The stream vocabulary has no
 * response id; adapters that need one for replay keep it in the replay state (Anthropic: `{id, model, …}`), so it
 * is read from there when present, else the attributes are absent.
 *
 * @since 0.1.0
 * @category attributes
 */
export const responseIdentity = (replayState: unknown): Record<string, string> => {
  if (typeof replayState !== "object" || replayState === null || Array.isArray(replayState)) return {}
  const state = replayState as Readonly<Record<string, unknown>>
  const out: Record<string, string> = {}
  if (typeof state["id"] === "string" && state["id"] !== "") out[Attr.responseId] = state["id"]
  if (typeof state["model"] === "string" && state["model"] !== "") out[Attr.responseModel] = state["model"]
  return out
}

/**
 * A finish reason as the conventions spell it (`stop`, `tool_calls`, `length`, `error`, …).
 *
 * @since 0.1.0
 * @category attributes
 */
export const finishReasonName = (reason: Message.FinishReason): string => {
  switch (reason.kind) {
    case "tool-calls":
      return "tool_calls"
    case "max-tokens":
      return "length"
    default:
      return reason.kind
  }
}

const tokenBoundaries = Metric.exponentialBoundaries({ start: 1, factor: 4, count: 14 })
const secondsBoundaries = Metric.boundariesFromIterable([
  0.01,
  0.02,
  0.04,
  0.08,
  0.16,
  0.32,
  0.64,
  1.28,
  2.56,
  5.12,
  10.24,
  20.48,
  40.96,
  81.92
])

/**
 * `gen_ai.client.token.usage`: tokens per model request, tagged `gen_ai.token.type` (`input` | `output`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const tokenUsage = Metric.histogram("gen_ai.client.token.usage", {
  boundaries: tokenBoundaries,
  description: "Number of tokens used"
})

/**
 * `gen_ai.client.operation.duration`: seconds per model request.
 *
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration = Metric.histogram("gen_ai.client.operation.duration", {
  boundaries: secondsBoundaries,
  description: "GenAI operation duration (s)"
})

/**
 * `gen_ai.client.operation.time_to_first_chunk`: seconds from sending a request to its first chunk.
 *
 * @since 0.1.0
 * @category metrics
 */
export const timeToFirstChunk = Metric.histogram("gen_ai.client.operation.time_to_first_chunk", {
  boundaries: secondsBoundaries,
  description: "Time to the first chunk of a streamed response (s)"
})

/**
 * `effect_harness.tool.duration`: seconds per tool call, tagged with the tool name.
 *
 * @since 0.1.0
 * @category metrics
 */
export const toolDuration = Metric.histogram("effect_harness.tool.duration", {
  boundaries: secondsBoundaries,
  description: "Tool call duration (s)"
})
