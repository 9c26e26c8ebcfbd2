/**
 * `harness sessions stats <id> [--json]`: where a stored session spent its tokens, money and time, from its log
 * alone (a read-only snapshot, like `show`).
 *
 * - turns, steps (model requests), tokens by kind (input without cache, cache reads, cache writes, output, of
 *   which reasoning), summed over every request's usage (step requests and compaction summary requests);
 * - cost: the sum of the `cost` logged with each usage (USD at the model catalog's prices when the request ran);
 *   requests with usage but no logged cost (an unpriced model, or a log written before costs were logged) are
 *   counted as `unpricedRequests`, never guessed;
 * - time, from the events' millisecond timestamps: `total` = the turns' wall time; `model` = each step from its
 *   `step/start` to its `assistant/message` (or `step/end` when the request failed); `tools` = each step's tool
 *   batch from its first `tool/call` to its last `tool/result` (parallel calls counted once); `compaction` = from
 *   `compact/start` to `compact/end`; `approval` = the waits for the user's answers (`approval/answer`),
 *   taken out of `tools` and of each call's time; `harness` = the rest (prompt assembly, hooks, persistence);
 *   `hooks` = the command hooks' own durations (`hook/result`), part of `harness` or `tools`;
 * - the slowest tool calls (`tool/call` to its `tool/result`), the transport retries (`request/retry`), the
 *   requests that failed (a step without an `assistant/message`), and the compactions (and how many failed);
 * - prompt caching (issue 30): the hit rate (cache reads / all input: input + cache reads + cache writes), the
 *   money caching saved at the model catalog's prices (`ModelCatalog.cacheSavings`: reads at the input price less
 *   their price, less the write premium; `null` when no request was priced) and the cache breaks the
 *   `request/cache` events attribute, by cause.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import type { TokenUsage } from "../../Llm/Message.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type * as CacheAttribution from "../../Session/CacheAttribution.js"
import type { SessionEvent, SessionHeader } from "../../Session/SessionEvent.js"
import type { CliError } from "../CliError.js"
import * as CommandDoc from "../CommandDoc.js"
import * as CommonOptions from "../CommonOptions.js"
import * as Output from "../Output.js"
import { addCost } from "../RunSummary.js"

/**
 * One tool call's duration.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolTiming {
  readonly name: string
  readonly callId: string
  readonly turn: number
  readonly step: number
  readonly ms: number
}

/**
 * The statistics of one session (the `--json` line, plus `type` and `session`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  readonly turns: number
  readonly steps: number
  readonly tokens: {
    readonly input: number
    readonly cacheRead: number
    readonly cacheWrite: number
    readonly output: number
    readonly reasoning: number
  }
  /** USD, `null` when no request was priced */
  readonly cost: number | null
  readonly unpricedRequests: number
  readonly timeMs: {
    readonly total: number
    readonly model: number
    readonly tools: number
    readonly compaction: number
    readonly harness: number
    readonly hooks: number
    /** waits for the user's approval answers (out of `tools`) */
    readonly approval: number
  }
  readonly slowestTools: ReadonlyArray<ToolTiming>
  readonly retries: number
  readonly failedRequests: number
  readonly compactions: { readonly total: number; readonly failed: number }
  readonly cache: {
    /** cache reads / all input tokens, `null` when there was no input */
    readonly hitRate: number | null
    /** USD saved against no caching, `null` when no request was priced */
    readonly saved: number | null
    /** requests whose cached prefix broke, by cause */
    readonly breaks: Readonly<Partial<Record<CacheAttribution.Cause, number>>>
  }
}

/** How many slow tool calls are listed. */
const SLOWEST = 5

/**
 * Computes the statistics of a log (pure).
 *
 * @since 0.1.0
 * @category utils
 */
export const compute = (events: ReadonlyArray<SessionEvent>, catalog: ModelCatalog.Service = builtIn): Stats => {
  const tokens = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }
  let cost: number | undefined
  let saved: number | undefined
  let unpriced = 0
  const breaks: Partial<Record<CacheAttribution.Cause, number>> = {}
  const addUsage = (
    usage: TokenUsage | undefined,
    logged: number | undefined,
    route: { readonly provider: string; readonly model: string }
  ) => {
    if (usage === undefined) return
    saved = addCost(saved, ModelCatalog.requestSavings(catalog, route.provider, route.model, usage))
    tokens.input += usage.inputTokens
    tokens.cacheRead += usage.cacheReadTokens ?? 0
    tokens.cacheWrite += usage.cacheWriteTokens ?? 0
    tokens.output += usage.outputTokens
    tokens.reasoning += usage.reasoningTokens ?? 0
    if (logged === undefined) unpriced++
    else cost = addCost(cost, logged)
  }
  let turns = 0
  let steps = 0
  let retries = 0
  let failedRequests = 0
  let compactions = 0
  let failedCompactions = 0
  const time = { total: 0, model: 0, tools: 0, compaction: 0, hooks: 0, approval: 0 }
  const waits = new Map<string, number>()
  let turnStart: number | undefined
  let stepStart: number | undefined
  let answered = false
  let batch: { from: number; to: number } | undefined
  let compactStart: number | undefined
  const calls = new Map<string, { readonly name: string; readonly turn: number; readonly step: number; readonly at: number }>()
  const timings: Array<ToolTiming> = []
  const closeBatch = () => {
    if (batch !== undefined) time.tools += batch.to - batch.from
    batch = undefined
  }
  for (const e of events) {
    switch (e.type) {
      case "turn/start":
        turns++
        turnStart = e.time
        break
      case "turn/end":
        if (turnStart !== undefined) time.total += e.time - turnStart
        turnStart = undefined
        break
      case "step/start":
        steps++
        closeBatch()
        stepStart = e.time
        answered = false
        break
      case "assistant/message":
        if (stepStart !== undefined && !answered) time.model += e.time - stepStart
        answered = true
        addUsage(e.data.usage, e.data.cost, e.data.provenance)
        break
      case "step/end":
        if (stepStart !== undefined && !answered) {
          time.model += e.time - stepStart
          failedRequests++
        }
        closeBatch()
        stepStart = undefined
        break
      case "tool/call":
        calls.set(e.data.callId, { name: e.data.name, turn: e.data.turn, step: e.data.step, at: e.time })
        batch = batch === undefined ? { from: e.time, to: e.time } : batch
        break
      case "tool/result": {
        if (e.surfaceOp !== "append") break // a compaction trim of an old result, not a result
        const call = calls.get(e.data.callId)
        if (call === undefined) break
        calls.delete(e.data.callId)
        const waited = waits.get(e.data.callId) ?? 0
        timings.push({ name: call.name, callId: e.data.callId, turn: call.turn, step: call.step, ms: Math.max(0, e.time - call.at - waited) })
        if (batch !== undefined) batch.to = Math.max(batch.to, e.time)
        break
      }
      case "compact/start":
        compactions++
        compactStart = e.time
        break
      case "compact/summary":
        addUsage(e.data.usage, e.data.cost, e.data)
        break
      case "request/cache":
        if (e.data.cause !== undefined) breaks[e.data.cause] = (breaks[e.data.cause] ?? 0) + 1
        break
      case "compact/end":
        if (compactStart !== undefined) time.compaction += e.time - compactStart
        if (e.data.error !== undefined && e.data.error.code !== "COMPACTION_NOTHING_TO_DO") failedCompactions++
        compactStart = undefined
        break
      case "request/retry":
        retries++
        break
      case "hook/result":
        time.hooks += e.data.durationMs
        break
      case "approval/answer":
        // the wait for the user's answer is approval time, not tool time (issue 34)
        time.approval += e.data.waitMs
        waits.set(e.data.callId, (waits.get(e.data.callId) ?? 0) + e.data.waitMs)
        break
      default:
        break
    }
  }
  closeBatch()
  // a turn still open (running, or crashed before repair) counts up to its last event
  const last = events[events.length - 1]
  if (turnStart !== undefined && last !== undefined) time.total += last.time - turnStart
  const slowestTools = timings.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST)
  return {
    turns,
    steps,
    tokens,
    cost: cost ?? null,
    unpricedRequests: unpriced,
    timeMs: {
      ...time,
      tools: Math.max(0, time.tools - time.approval),
      harness: Math.max(0, time.total - time.model - Math.max(time.tools, time.approval) - time.compaction)
    },
    slowestTools,
    retries,
    failedRequests,
    compactions: { total: compactions, failed: failedCompactions },
    cache: {
      hitRate: ModelCatalog.hitRate({ inputTokens: tokens.input, outputTokens: 0, cacheReadTokens: tokens.cacheRead, cacheWriteTokens: tokens.cacheWrite }) ?? null,
      saved: saved ?? null,
      breaks
    }
  }
}

const builtIn = ModelCatalog.unsafeMake()

/**
 * A hit rate for people: `97.8 %`.
 *
 * @since 0.1.0
 * @category utils
 */
export const percent = (rate: number): string => `${(rate * 100).toFixed(1)} %`

/**
 * The cache line of the statistics: hit rate, money saved, breaks by cause.
 *
 * @since 0.1.0
 * @category utils
 */
export const cacheLine = (cache: Stats["cache"]): string => {
  const breaks = Object.entries(cache.breaks).map(([cause, n]) => `${cause} ${n}`)
  return `cache: hit rate ${cache.hitRate === null ? "n/a" : percent(cache.hitRate)} · saved ${
    cache.saved === null ? "unknown (no request was priced)" : usd(cache.saved)
  } · breaks ${breaks.length === 0 ? "none" : breaks.join(", ")}`
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * A USD amount for people: `$0.0123` (four decimals, more below a hundredth of a cent so it is never `$0.0000`).
 *
 * @since 0.1.0
 * @category utils
 */
export const usd = (amount: number): string =>
  amount !== 0 && amount < 0.0001 ? `$${amount.toPrecision(2)}` : `$${amount.toFixed(4)}`

/**
 * The statistics as text lines.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (header: SessionHeader, stats: Stats): ReadonlyArray<string> => {
  const t = stats.tokens
  const cost = stats.cost === null
    ? "unknown (no request was priced)"
    : `${usd(stats.cost)}${stats.unpricedRequests > 0 ? ` (+${plural(stats.unpricedRequests, "unpriced request")})` : ""}`
  const time = stats.timeMs
  return [
    `session ${header.id}`,
    `${plural(stats.turns, "turn")}, ${plural(stats.steps, "step")}`,
    `tokens: input ${t.input} · cache read ${t.cacheRead} · cache write ${t.cacheWrite} · output ${t.output} (${t.reasoning} reasoning)`,
    `cost: ${cost}`,
    cacheLine(stats.cache),
    `time: ${seconds(time.total)} total = model ${seconds(time.model)} · tools ${seconds(time.tools)} · compaction ${
      seconds(time.compaction)
    } · harness ${seconds(time.harness)}${time.approval > 0 ? ` · waiting for approval ${seconds(time.approval)}` : ""} (command hooks ${
      seconds(time.hooks)
    })`,
    ...(stats.slowestTools.length === 0
      ? []
      : [
        "slowest tools:",
        ...stats.slowestTools.map((s) => `  ${s.name} ${seconds(s.ms)} (turn ${s.turn}, step ${s.step}, ${s.callId})`)
      ]),
    `retries: ${stats.retries} · failed requests: ${stats.failedRequests} · compactions: ${stats.compactions.total}${
      stats.compactions.failed > 0 ? ` (${stats.compactions.failed} failed)` : ""
    }`
  ]
}

/**
 * The closing line of `sessions show`: the session's token and cost totals (`undefined` when nothing was used).
 *
 * @since 0.1.0
 * @category utils
 */
export const totalLine = (events: ReadonlyArray<SessionEvent>): string | undefined => {
  const s = compute(events)
  const t = s.tokens
  if (t.input + t.output + t.cacheRead + t.cacheWrite === 0) return undefined
  const cost = s.cost === null ? "" : ` · cost ${usd(s.cost)}${s.unpricedRequests > 0 ? " (some requests unpriced)" : ""}`
  return `total: in ${t.input} (+${t.cacheRead} cache read, +${t.cacheWrite} cache write) · out ${t.output}${cost}`
}

/**
 * Reads a stored session's snapshot from a store backend (the one the other `sessions` commands use).
 *
 * @since 0.1.0
 * @category models
 */
export type Reader = (
  id: string,
  store: "jsonl" | "sqlite"
) => Effect.Effect<{ readonly header: SessionHeader; readonly events: ReadonlyArray<SessionEvent> }, CliError>

/**
 * The `stats` subcommand over a snapshot reader.
 *
 * @since 0.1.0
 * @category commands
 */
export const make = (read: Reader) =>
  Command.make(
    "stats",
    {
      store: CommonOptions.options.store,
      id: Argument.String("id").pipe(Argument.withDescription("session id")),
      json: CommandDoc.boolean("json").pipe(Flag.withDescription("print the statistics as one JSON line"))
    },
    ({ id, json, store }) =>
      Effect.scoped(Effect.gen(function*() {
        const loaded = yield* read(id, store)
        const stats = compute(loaded.events)
        const text = json
          ? JSON.stringify({ type: "stats", session: loaded.header.id, ...stats })
          : render(loaded.header, stats).join("\n")
        yield* Effect.sync(() => (json ? Output.processSinks : Output.terminalSinks).stdout(`${text}\n`))
      }))
  ).pipe(
    Command.withDescription(
      "a session's turns, steps, tokens by kind, cost, time in model vs tools vs harness, slowest tools, retries and compactions"
    )
  )
