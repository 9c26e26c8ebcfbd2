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
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Message from "../Llm/Message.js"
import type * as Retry from "../Llm/Retry.js"
import type { SessionEvent } from "../Session/SessionEvent.js"
import * as Signals from "./Signals.js"
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

const addUsage = (a: Message.TokenUsage | undefined, b: Message.TokenUsage): Message.TokenUsage => {
  if (a === undefined) return b
  const sum = (x: number | undefined, y: number | undefined) => x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0)
  const cacheRead = sum(a.cacheReadTokens, b.cacheReadTokens)
  const cacheWrite = sum(a.cacheWriteTokens, b.cacheWriteTokens)
  const reasoning = sum(a.reasoningTokens, b.reasoningTokens)
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cacheRead === undefined ? {} : { cacheReadTokens: cacheRead }),
    ...(cacheWrite === undefined ? {} : { cacheWriteTokens: cacheWrite }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning })
  }
}

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
export const make = (mode: "text" | "json", sinks: Sinks = processSinks): Printer => {
  if (mode === "json") {
    return {
      observe: (event) => Effect.sync(() => sinks.stdout(`${JSON.stringify(event)}\n`)),
      retry: (notice) => Effect.sync(() => sinks.stdout(`${retryLine(notice)}\n`))
    }
  }
  let usage: Message.TokenUsage | undefined
  let atLineStart = true
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
            if (event.data.usage !== undefined) usage = addUsage(usage, event.data.usage)
            break
          case "tool/call":
            endLine()
            names.set(event.data.callId, event.data.name)
            sinks.stderr(`→ ${event.data.name}(${firstLine(event.data.arguments, 100)})\n`)
            break
          case "tool/result": {
            const name = names.get(event.data.callId) ?? event.data.callId
            const text = Transcript.renderBlocks(event.data.content, 400)
            sinks.stderr(`${event.data.isError ? "✗" : "✓"} ${name}: ${firstLine(text)}\n`)
            break
          }
          case "turn/end": {
            // the turn's outcome line (error, cancelled, …) is the command's job (`TurnOutcome`),
            // printed once; the printer only closes the text line and reports usage
            endLine()
            if (usage !== undefined) sinks.stderr(`usage: ${Transcript.renderUsage(usage)}\n`)
            usage = undefined
            break
          }
          default:
            break
        }
      })
  }
}
