/**
 * `harness sessions show`: a session's transcript, by turn. Every turn is numbered (the number
 * `sessions fork --turn N` takes) and ends with a line saying how it ended — completed,
 * CANCELLED, FAILED, INTERRUPTED (the process stopped mid-turn), … — and the event number of its
 * end (what `--at` takes). The partial answer of a step that never got its final message (a
 * cancelled, failed or crashed turn) is shown where it stopped. Compactions and the events they
 * shadowed are marked. Pure: events in, text out; control characters from prompts and answers
 * are escaped (`TerminalText.neutralize`).
 *
 * @since 0.1.0
 */
import type { SessionEvent, TurnEndReason } from "../../Session/SessionEvent.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type * as CacheAttribution from "../../Session/CacheAttribution.js"
import * as Surface from "../../Session/Surface.js"
import * as SessionStats from "../commands/SessionStats.js"
import * as TerminalText from "../../Tools/TerminalText.js"
import * as Transcript from "../Transcript.js"
import * as Title from "./Title.js"

const indent = (text: string, prefix = "  "): string =>
  text.split("\n").map((line) => `${prefix}${line}`).join("\n")

/**
 * How a turn ended, in words (upper case for what went wrong).
 *
 * @since 0.1.0
 * @category utils
 */

/**
 * The line a `request/cache` event shows: how much of the request its predecessor cached, and a break's cause
 * and place (issue 30).
 *
 * @since 0.1.0
 * @category utils
 */
export const cacheNote = (a: CacheAttribution.Attribution): string => {
  const reuse = `~${a.prefixTokens} of ~${a.requestTokens} tokens`
  if (a.cause === undefined) {
    return a.prefixBytes === 0 && a.divergence === undefined
      ? `prompt cache: first request (~${a.requestTokens} tokens)`
      : `prompt cache: reuses ${reuse} of the previous request`
  }
  const d = a.divergence
  const where = d === undefined
    ? ""
    : ` at ${d.part}${d.messageIndex === undefined ? "" : ` message ${d.messageIndex}`}${d.eventSeq === undefined ? "" : ` (event #${d.eventSeq})`}`
  return `CACHE BREAK (${a.cause})${where}: reuses ${reuse}`
}
export const endWords = (reason: TurnEndReason): string => {
  switch (reason.kind) {
    case "completed":
      return "completed"
    case "max-tokens":
      return "completed (stopped at the output token limit)"
    case "aborted":
      return `CANCELLED${reason.reason === undefined ? "" : ` (${reason.reason})`}`
    case "disposed":
      return "CANCELLED (the agent was closed)"
    case "error":
      return `FAILED in step ${reason.step}: ${reason.message}${reason.code === undefined ? "" : ` [${reason.code}]`}`
    case "rejected":
      return `REJECTED: ${reason.reason}`
    case "interrupted":
      return "INTERRUPTED (the process stopped during the turn)"
    case "max-steps":
      return `STOPPED after ${reason.steps} steps (--max-steps)`
    default:
      return (reason as { readonly kind: string }).kind
  }
}

const source = (s: { readonly kind: string; readonly plugin?: string }): string =>
  s.kind === "plugin" && s.plugin !== undefined ? `plugin:${s.plugin}` : s.kind

/**
 * Renders a log as the `show` transcript.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (events: ReadonlyArray<SessionEvent>): string => renderLines(events).join("\n")

/**
 * The characters of a partial answer shown (64 Ki); the rest is counted, not held (issue 26: a
 * step cut at the output cap, or a log of any size).
 *
 * @since 0.1.0
 * @category constants
 */
export const PARTIAL_SHOWN_CHARS = 64 * 1024

/**
 * {@link render} as lines, for a caller that writes them a few at a time.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderLines = (events: ReadonlyArray<SessionEvent>): Array<string> => {
  const lines: Array<string> = []
  const push = (...texts: ReadonlyArray<string>) => lines.push(...texts.map((t) => TerminalText.neutralize(t, "keep")))
  const shadowed = new Set(Surface.foldSurface(events).replacements.flatMap((r) => r.shadowedSeqs))
  let partial = ""
  let hidden = 0
  let answered = false
  const flushPartial = (why: string) => {
    if (!answered && partial !== "") {
      push(`assistant (partial answer, ${why}):`, indent(partial))
      if (hidden > 0) push(indent(`… [${hidden} more characters not shown]`))
    }
    partial = ""
    hidden = 0
    answered = false
  }
  for (const e of events) {
    switch (e.type) {
      case "turn/start":
        push(`── turn ${e.data.turn}${e.data.trigger.kind === "message" ? "" : ` (${e.data.trigger.kind})`} ──`)
        break
      case "turn/end":
        flushPartial("cut off")
        push(`── turn ${e.data.turn} ${endWords(e.data.reason)} · event #${e.seq} ──`, "")
        break
      case "step/start":
        partial = ""
        hidden = 0
        answered = false
        break
      case "step/end":
        flushPartial("cut off")
        break
      case "assistant/chunk":
        if (e.data.chunk.type === "text-delta") {
          const text = e.data.chunk.text
          const room = PARTIAL_SHOWN_CHARS - partial.length
          if (room >= text.length) partial += text
          else {
            if (room > 0) partial += text.slice(0, room)
            hidden += text.length - Math.max(room, 0)
          }
        }
        break
      case "assistant/message":
        answered = true
        push(`assistant [${e.data.provenance.provider}/${e.data.provenance.model}]:`)
        if (e.data.content.length > 0) push(indent(Transcript.renderBlocks(e.data.content)))
        if (e.data.usage !== undefined) {
          const rate = ModelCatalog.hitRate(e.data.usage)
          push(indent(`usage: ${Transcript.renderUsage(e.data.usage)}${rate === undefined ? "" : ` · cache hit ${SessionStats.percent(rate)}`}`))
        }
        break
      case "request/cache":
        push(indent(cacheNote(e.data)))
        break
      case "tool/result":
        push(indent(`${e.data.isError ? "✗ FAILED" : "✓"} ${e.data.callId}:`), indent(Transcript.renderBlocks(e.data.content, 600), "    "))
        break
      case "user/message":
        push(`user${e.data.source.kind === "user" ? "" : ` (${source(e.data.source)})`}:`, indent(Transcript.renderBlocks(e.data.content)))
        break
      case "prompt/blocked":
        push(`blocked prompt (${e.data.reason}):`, indent(Transcript.renderBlocks(e.data.content)))
        break
      case "context/message":
        push(`context (${source(e.data.source)}):`, indent(Transcript.renderBlocks(e.data.content, 400)))
        break
      case "steering/message":
        push(`steering (${source(e.data.source)}):`, indent(Transcript.renderBlocks(e.data.content)))
        break
      case "compact/start":
        push(`── COMPACTION (${e.data.trigger}) at ${e.data.pressureTokens} of ${e.data.contextWindow} tokens ──`)
        break
      case "compact/summary":
        if (e.data.summary !== "") {
          push(`summary of events #${e.data.shadowedSeqs[0]}-#${e.data.shadowedSeqs[1]}:`, indent(e.data.summary.slice(0, 2000)))
        }
        break
      case "compact/end":
        push(
          e.data.error === undefined
            ? `── COMPACTED: ${e.data.pressureBefore} → ${e.data.pressureAfter} tokens ──`
            : `── COMPACTION FAILED [${e.data.error.code}]: ${e.data.error.message} ──`
        )
        break
      default:
        if (e.type === Title.TYPE) push(`(renamed: ${String((e.data as { readonly title?: unknown }).title ?? "")})`)
        break
    }
    if (shadowed.has(e.seq)) push("  (compacted: the model now sees a summary or a trimmed copy)")
  }
  flushPartial("the log ends here")
  return lines
}
