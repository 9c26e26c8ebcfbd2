/**
 * A session as an ATIF trajectory (Agent Trajectory Interchange Format, ATIF-v1.6, published by the
 * Harbor project; schema vendored in `docs/reference/atif/`).
 *
 * Mapping (DEC-10):
 * - a `user/message` or `steering/message` is a `user` step; a `context/message` (workspace context,
 *   plugin reminders) and a compaction summary are `system` steps;
 * - an `assistant/message` is an `agent` step: its text is `message`, its reasoning
 *   `reasoning_content`, its tool calls `tool_calls` (arguments parsed; text that is not a JSON object
 *   becomes `{"_raw": text}`), the results answering them `observation.results` (by call id), its
 *   usage `metrics` (`prompt_tokens` = input + cache read + cache write, `cached_tokens` = cache read,
 *   `cost_usd` when priced);
 * - every step's `extra.seqs` lists the log events it comes from (the message, its streamed chunks'
 *   first and last seq, its `tool/call` and `tool/result` events), plus `turn` (and `step`);
 * - steps copied from a fork's parent are `is_copied_context: true`; the lineage, the working
 *   directory, each turn's end reason and seq are in the trajectory's `extra`;
 * - `final_metrics` sums the agent steps.
 *
 * {@link check} applies the rules Harbor's validator adds to the field shapes.
 *
 * @since 0.1.0
 */
import * as Timeline from "./Timeline.js"

/**
 * The ATIF version written.
 *
 * @since 0.1.0
 * @category constants
 */
export const SCHEMA_VERSION = "ATIF-v1.6" as const

/**
 * A JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * An ATIF step (the fields this exporter writes).
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly step_id: number
  readonly timestamp: string
  readonly source: "system" | "user" | "agent"
  readonly message: string
  readonly model_name?: string
  readonly reasoning_content?: string
  readonly tool_calls?: ReadonlyArray<{ readonly tool_call_id: string; readonly function_name: string; readonly arguments: JsonObject }>
  readonly observation?: {
    readonly results: ReadonlyArray<{ readonly source_call_id: string; readonly content: string }>
  }
  readonly metrics?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly cached_tokens: number; readonly cost_usd?: number }
  readonly is_copied_context?: boolean
  readonly extra: JsonObject
}

/**
 * An ATIF trajectory.
 *
 * @since 0.1.0
 * @category models
 */
export interface Trajectory {
  readonly schema_version: typeof SCHEMA_VERSION
  readonly session_id: string
  readonly agent: { readonly name: string; readonly version: string; readonly model_name?: string }
  readonly steps: ReadonlyArray<Step>
  readonly notes?: string
  readonly final_metrics: {
    readonly total_prompt_tokens: number
    readonly total_completion_tokens: number
    readonly total_cached_tokens: number
    readonly total_cost_usd?: number
    readonly total_steps: number
  }
  readonly extra: JsonObject
}

const iso = (ms: number): string => new Date(ms).toISOString()

const argumentsOf = (text: string): JsonObject => {
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as JsonObject
  } catch {
    // not JSON: kept verbatim below
  }
  return { _raw: text }
}

type Draft = Omit<Step, "step_id">

const stepOf = (entry: Timeline.Entry): Draft | undefined => {
  const base = { timestamp: iso(entry.time), ...(entry.copied ? { is_copied_context: true } : {}) }
  switch (entry.kind) {
    case "user":
    case "steering":
    case "context":
      return {
        ...base,
        source: entry.kind === "context" ? "system" : "user",
        message: entry.text,
        extra: { seqs: entry.seqs, turn: entry.turn, kind: entry.kind, source: entry.source }
      }
    case "compaction":
      return { ...base, source: "system", message: entry.summary, extra: { seqs: entry.seqs, turn: entry.turn, kind: "compaction", shadowedSeqs: entry.shadowedSeqs } }
    case "orphan-result":
      return { ...base, source: "system", message: entry.text, extra: { seqs: entry.seqs, turn: entry.turn, kind: "tool-result", callId: entry.callId, isError: entry.isError } }
    case "turn-end":
      return undefined
    case "assistant": {
      const usage = entry.usage
      const results = entry.calls.flatMap((c) => c.result === undefined ? [] : [{ source_call_id: c.callId, content: c.result.text }])
      const errors = entry.calls.filter((c) => c.result?.isError === true).map((c) => c.callId)
      return {
        ...base,
        source: "agent",
        message: entry.text,
        model_name: entry.model,
        ...(entry.reasoning === "" ? {} : { reasoning_content: entry.reasoning }),
        ...(entry.calls.length === 0 ? {} : {
          tool_calls: entry.calls.map((c) => ({ tool_call_id: c.callId, function_name: c.name, arguments: argumentsOf(c.arguments) }))
        }),
        ...(results.length === 0 ? {} : { observation: { results } }),
        ...(usage === undefined ? {} : {
          metrics: {
            prompt_tokens: usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0),
            completion_tokens: usage.outputTokens,
            cached_tokens: usage.cacheReadTokens ?? 0,
            ...(entry.cost === undefined ? {} : { cost_usd: entry.cost })
          }
        }),
        extra: {
          seqs: entry.seqs,
          turn: entry.turn,
          step: entry.step,
          provider: entry.provider,
          ...(errors.length === 0 ? {} : { failedCalls: errors })
        }
      }
    }
  }
}

/**
 * The trajectory of a session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const trajectory = (input: Timeline.Input): Trajectory => {
  const entries = Timeline.of(input)
  const steps = entries.flatMap((e) => {
    const s = stepOf(e)
    return s === undefined ? [] : [s]
  }).map((s, i): Step => ({ step_id: i + 1, ...s }))
  const totals = Timeline.totals(entries)
  const lastModel = [...entries].reverse().find((e) => e.kind === "assistant")
  const turns = entries.flatMap((e) => e.kind === "turn-end" ? [{ turn: e.turn, reason: e.reason, seq: e.seqs[0] }] : [])
  const title = Timeline.titleOf(input.events)
  return {
    schema_version: SCHEMA_VERSION,
    session_id: input.header.id,
    agent: {
      name: "effect-harness",
      version: input.version ?? "0.0.0",
      ...(lastModel?.kind === "assistant" ? { model_name: `${lastModel.provider}/${lastModel.model}` } : {})
    },
    // ATIF requires at least one step: an empty session is one system step saying so
    steps: steps.length > 0 ? steps : [{ step_id: 1, timestamp: iso(input.header.createdAt), source: "system", message: "(empty session)", extra: { seqs: [] } }],
    ...(title === undefined ? {} : { notes: title }),
    final_metrics: {
      total_prompt_tokens: totals.input + totals.cacheRead + totals.cacheWrite,
      total_completion_tokens: totals.output,
      total_cached_tokens: totals.cacheRead,
      ...(totals.cost === undefined ? {} : { total_cost_usd: totals.cost }),
      total_steps: Math.max(steps.length, 1)
    },
    extra: {
      format: "effect-harness session log",
      events: input.events.length,
      createdAt: iso(input.header.createdAt),
      ...(input.header.cwd === undefined ? {} : { cwd: input.header.cwd }),
      lineage: Timeline.lineageOf(input),
      turns
    }
  }
}

const AGENT_ONLY = ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"] as const

/**
 * The rules of Harbor's trajectory validator beyond the JSON Schema: step ids `1..n` in order,
 * agent-only fields only on agent steps, each observation result naming a tool call of its own step.
 * Returns the problems found (empty = valid).
 *
 * @since 0.1.0
 * @category utils
 */
export const check = (value: { readonly steps: ReadonlyArray<JsonObject> }): ReadonlyArray<string> => {
  const problems: Array<string> = []
  value.steps.forEach((step, i) => {
    if (step.step_id !== i + 1) problems.push(`steps[${i}].step_id is ${String(step.step_id)}, expected ${i + 1}`)
    if (step.source !== "agent") {
      for (const key of AGENT_ONLY) {
        if (step[key] !== undefined && step[key] !== null) problems.push(`steps[${i}].${key} is only allowed on agent steps`)
      }
    }
    const calls = Array.isArray(step.tool_calls) ? step.tool_calls : []
    const ids = new Set(calls.map((c: unknown) => typeof c === "object" && c !== null && "tool_call_id" in c ? c.tool_call_id : undefined))
    const observation = step.observation
    const results = typeof observation === "object" && observation !== null && "results" in observation && Array.isArray(observation.results)
      ? observation.results
      : []
    results.forEach((r: unknown, j) => {
      const source = typeof r === "object" && r !== null && "source_call_id" in r ? r.source_call_id : undefined
      if (typeof source === "string" && !ids.has(source)) {
        problems.push(`steps[${i}].observation.results[${j}].source_call_id "${source}" names no tool call of this step`)
      }
    })
  })
  return problems
}
