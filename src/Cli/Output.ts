/**
 * What `harness run` / `harness chat` print while a turn runs, as a session observer:
 *
 * - `text` mode: assistant text streams to stdout as it arrives (from `assistant/chunk` text
 *   deltas); tool activity (`→ tool(args)`, `✓`/`✗` results) and one usage line per turn (tokens
 *   including cache reads) go to stderr, so stdout carries only the answer. The turn's outcome
 *   line (error, cancelled, …) is NOT printed here: the command prints it once from `TurnOutcome`.
 * - `json` mode: every session event as one JSON line on stdout as it is appended, plus a
 *   `{"type":"notice/retry", attempt, delayMs, code, message}` line when a model request is retried;
 *   stdout carries nothing else (for scripts and other programs). Diagnostics (the retry's warning
 *   included) go to stderr through the logger.
 * - Once stdout is closed (EPIPE), nothing more is written to it (`Signals.stdoutOpen`).
 * - Text mode writes through {@link terminalSinks}: on a stream that is a terminal, escape
 *   sequences and bidi overrides in model text, tool arguments and results are shown as inert
 *   escapes (`TerminalText`); a pipe or file gets the text unchanged. JSON mode is never altered.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Message from "../Llm/Message.js"
import * as ModelCatalog from "../Llm/ModelCatalog.js"
import type * as Retry from "../Llm/Retry.js"
import type { SessionEvent } from "../Session/SessionEvent.js"
import * as CacheNotice from "./CacheNotice.js"
import * as RunSummary from "./RunSummary.js"
import * as Signals from "./Signals.js"
import * as TerminalText from "../Tools/TerminalText.js"
import * as Transcript from "./Transcript.js"

/**
 * Where output goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sinks {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
}

/**
 * The process streams.
 *
 * @since 0.1.0
 * @category constants
 */
export const processSinks: Sinks = {
  stdout: (text) => {
    if (Signals.stdoutOpen()) process.stdout.write(text)
  },
  stderr: (text) => {
    if (Signals.stderrOpen()) process.stderr.write(text)
  }
}

const stdoutText = TerminalText.forStream(process.stdout)
const stderrText = TerminalText.forStream(process.stderr)

/**
 * The process streams for human-readable text: what goes to a stream that is a terminal is made
 * inert first (`TerminalText.forStream`), so model text cannot write the clipboard, retitle or clear
 * the terminal. Raw {@link processSinks} stay for JSON and for the CLI's own styled output.
 *
 * @since 0.1.0
 * @category constants
 */
export const terminalSinks: Sinks = {
  stdout: (text) => processSinks.stdout(stdoutText(text)),
  stderr: (text) => processSinks.stderr(stderrText(text))
}

const addUsage = (a: Message.TokenUsage | undefined, b: Message.TokenUsage): Message.TokenUsage =>
  a === undefined ? b : RunSummary.addUsage(a, b)

const firstLine = (text: string, max = 120): string => {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? ""
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/**
 * A printer: an observer for `Session.observe`, plus the usage total of the current turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface Printer {
  readonly observe: (event: SessionEvent) => Effect.Effect<void>
  /** reports a model-request retry (a JSON line in `json` mode; the logger covers stderr) */
  readonly retry: (notice: Retry.RetryNotice) => Effect.Effect<void>
}

/**
 * The `notice/retry` JSON line of a retry (without the newline).
 *
 * @since 0.1.0
 * @category utils
 */
export const retryLine = (notice: Retry.RetryNotice): string =>
  JSON.stringify({
    type: "notice/retry",
    ...(notice.provider === undefined ? {} : { provider: notice.provider }),
    attempt: notice.attempt,
    delayMs: notice.delayMs,
    code: notice.code,
    message: notice.message
  })

/**
 * Creates a printer for a mode.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  mode: "text" | "json",
  sinks: Sinks = mode === "json" ? processSinks : terminalSinks,
  model?: ModelCatalog.ModelFacts
): Printer => {
  if (mode === "json") {
    return {
      observe: (event) => Effect.sync(() => sinks.stdout(`${JSON.stringify(event)}\n`)),
      retry: (notice) => Effect.sync(() => sinks.stdout(`${retryLine(notice)}\n`))
    }
  }
  let usage: Message.TokenUsage | undefined
  let atLineStart = true
  let compactStarted = 0
  // K-15: context use of the latest request and the turn's cost, when the model's facts are known
  let context: number | undefined
  let cost: number | undefined
  const names = new Map<string, string>()
  const out = (text: string) => {
    if (text === "") return
    sinks.stdout(text)
    atLineStart = text.endsWith("\n")
  }
  const endLine = () => {
    if (!atLineStart) out("\n")
  }
  return {
    retry: () => Effect.void,
    observe: (event) =>
      Effect.sync(() => {
        switch (event.type) {
          case "assistant/chunk":
            if (event.data.chunk.type === "text-delta") out(event.data.chunk.text)
            break
          case "assistant/message":
            if (event.data.usage !== undefined) {
              const u = event.data.usage
              usage = addUsage(usage, u)
              context = u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + u.outputTokens
              // the cost logged with the usage (issue 19), else priced from the model's facts
              const c = event.data.cost ?? (model === undefined ? undefined : ModelCatalog.costOf(model, u))
              if (c !== undefined) cost = (cost ?? 0) + c
            }
            break
          case "tool/call":
            endLine()
            names.set(event.data.callId, event.data.name)
            sinks.stderr(`→ ${event.data.name}(${firstLine(event.data.arguments, 100)})\n`)
            break
          case "tool/result": {
            if (event.surfaceOp !== "append") break // a compaction trim of an old result (K-5), not a new result
            const name = names.get(event.data.callId) ?? event.data.callId
            const text = Transcript.renderBlocks(event.data.content, 400)
            sinks.stderr(`${Transcript.resultFailed(event.data) ? "✗" : "✓"} ${name}: ${firstLine(text)}\n`)
            break
          }
          case "compact/summary":
            if (event.data.cost !== undefined) cost = (cost ?? 0) + event.data.cost
            break
          case "request/cache": {
            // issue 30: a request that breaks the warm cache says so before it is sent
            const line = CacheNotice.breakLine(event.data, model?.pricing)
            if (line !== undefined) {
              endLine()
              sinks.stderr(`${line}\n`)
            }
            break
          }
          case "compact/start":
            endLine()
            compactStarted = event.time
            break
          case "compact/end": {
            // one line per compaction (K-15): outcome, before → after, duration
            const took = ((event.time - compactStarted) / 1000).toFixed(1)
            sinks.stderr(
              event.data.error === undefined
                ? `compacted context: ${event.data.pressureBefore} → ${event.data.pressureAfter} tokens (${took}s)\n`
                : event.data.error.code === "COMPACTION_NOTHING_TO_DO"
                ? `nothing to compact: ${event.data.error.message}\n`
                : `compaction failed: ${event.data.error.message} (${took}s)\n`
            )
            break
          }
          case "turn/end": {
            // the turn's outcome line (error, cancelled, …) is the command's job (`TurnOutcome`),
            // printed once; the printer only closes the text line and reports usage
            endLine()
            if (usage !== undefined) {
              sinks.stderr(`usage: ${Transcript.renderUsage(usage)}\n`)
              // the status line (K-15): context use of the latest request, and the turn's cost when priced
              if (model !== undefined && context !== undefined) {
                const dollars = cost === undefined ? "" : ` · cost $${cost.toFixed(4)}`
                sinks.stderr(
                  `ctx ${Math.round((100 * context) / model.contextWindow)}% of ${Math.round(model.contextWindow / 1000)}k${dollars}\n`
                )
              }
            }
            usage = undefined
            cost = undefined
            break
          }
          default:
            break
        }
      })
  }
}
