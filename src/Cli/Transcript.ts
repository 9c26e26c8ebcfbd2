/**
 * `harness sessions show`: renders a human-readable transcript from a session log alone:
 * turns, prompts, context and steering messages, assistant text/reasoning, tool calls and their
 * results, usage per step and how each turn ended. Pure: events in, lines out.
 *
 * @since 0.1.0
 */
import type * as ContentBlock from "../Llm/ContentBlock.js"
import type * as Message from "../Llm/Message.js"
import type { SessionEvent } from "../Session/SessionEvent.js"
import * as Surface from "../Session/Surface.js"

const indent = (text: string, prefix = "  "): string =>
  text.split("\n").map((line) => `${prefix}${line}`).join("\n")

const clip = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`

/**
 * Renders blocks as text (tool calls and results in a compact form).
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderBlocks = (blocks: ReadonlyArray<ContentBlock.ContentBlock>, max = 2000): string =>
  blocks.map((b) => {
    switch (b.type) {
      case "text":
        return clip(b.text, max)
      case "reasoning":
        return `(thinking) ${clip(b.text, max)}`
      case "tool-call":
        return `→ ${b.name}(${clip(b.arguments, 200)}) [${b.id}]`
      case "tool-result":
        return `← ${b.isError === true ? "error " : ""}${clip(renderBlocks(b.content, max), max)}`
      default:
        return `[${(b as { readonly type: string }).type} block]`
    }
  }).join("\n")

/**
 * Renders token usage as `in 12 (+256 cached) · out 9`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderUsage = (usage: Message.TokenUsage): string => {
  const cache = [
    usage.cacheReadTokens !== undefined ? `+${usage.cacheReadTokens} cache read` : undefined,
    usage.cacheWriteTokens !== undefined ? `+${usage.cacheWriteTokens} cache write` : undefined
  ].filter((s) => s !== undefined)
  const reasoning = usage.reasoningTokens !== undefined ? ` (${usage.reasoningTokens} reasoning)` : ""
  return `in ${usage.inputTokens}${cache.length > 0 ? ` (${cache.join(", ")})` : ""} · out ${usage.outputTokens}${reasoning}`
}

/**
 * `true` when a tool result reports a failure: an error result, or a command that ran but exited
 * non-zero or was killed by a signal (`meta.exitCode` / `meta.signal`, as `bash` reports them).
 *
 * @since 0.1.0
 * @category utils
 */
export const resultFailed = (data: { readonly isError: boolean; readonly meta?: unknown }): boolean => {
  if (data.isError) return true
  const meta = data.meta
  if (typeof meta !== "object" || meta === null) return false
  const exitCode: unknown = Reflect.get(meta, "exitCode")
  const signal: unknown = Reflect.get(meta, "signal")
  return (typeof exitCode === "number" && exitCode !== 0) || typeof signal === "string"
}

const sourceLabel = (source: Message.MessageSource): string =>
  source.kind === "plugin" && "plugin" in source ? `plugin:${source.plugin}` : source.kind

/**
 * Renders a whole log.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (events: ReadonlyArray<SessionEvent>): string => {
  const lines: Array<string> = []
  // K-13: events a compaction shadowed (summarised or trimmed) stay in the log and are marked
  const shadowed = new Set(Surface.foldSurface(events).replacements.flatMap((r) => r.shadowedSeqs))
  for (const e of events) {
    switch (e.type) {
      case "compact/start":
        lines.push(`── compaction (${e.data.trigger}) at ${e.data.pressureTokens} of ${e.data.contextWindow} tokens ──`)
        break
      case "compact/summary":
        if (e.data.summary !== "") {
          lines.push(`summary of events #${e.data.shadowedSeqs[0]}-#${e.data.shadowedSeqs[1]}:`, indent(clip(e.data.summary, 2000)))
        }
        break
      case "compact/end":
        lines.push(
          e.data.error === undefined
            ? `── compacted: ${e.data.pressureBefore} → ${e.data.pressureAfter} tokens ──`
            : `── compaction failed [${e.data.error.code}]: ${e.data.error.message} ──`
        )
        break
      case "turn/start":
        lines.push(`── turn ${e.data.turn} (${e.data.trigger.kind}) ──`)
        break
      case "turn/end": {
        const r = e.data.reason
        const detail = r.kind === "error" ? `: ${r.message}${r.code !== undefined ? ` [${r.code}]` : ""}`
          : r.kind === "aborted" && r.reason !== undefined ? `: ${r.reason}`
          : r.kind === "rejected" ? `: ${r.reason}` : ""
        lines.push(`── end of turn ${e.data.turn}: ${r.kind}${detail} ──`, "")
        break
      }
      case "user/message":
        lines.push(`user${e.data.source.kind === "user" ? "" : ` (${sourceLabel(e.data.source)})`}:`, indent(renderBlocks(e.data.content)))
        break
      case "prompt/blocked":
        lines.push(`blocked prompt (${e.data.reason}):`, indent(renderBlocks(e.data.content)))
        break
      case "context/message":
        lines.push(`context (${sourceLabel(e.data.source)}):`, indent(renderBlocks(e.data.content, 400)))
        break
      case "steering/message":
        lines.push(`steering (${sourceLabel(e.data.source)}):`, indent(renderBlocks(e.data.content)))
        break
      case "assistant/message":
        lines.push(`assistant [${e.data.provenance.provider}/${e.data.provenance.model}]:`)
        if (e.data.content.length > 0) lines.push(indent(renderBlocks(e.data.content)))
        if (e.data.usage !== undefined) {
          lines.push(indent(`usage: ${renderUsage(e.data.usage)}${e.data.cost === undefined ? "" : ` · cost $${e.data.cost.toFixed(6)}`}`))
        }
        break
      case "tool/result":
        lines.push(indent(`${resultFailed(e.data) ? "✗" : "✓"} ${e.data.callId}:\n${indent(clip(renderBlocks(e.data.content, 600), 600))}`))
        break
      default:
        break
    }
    if (shadowed.has(e.seq)) lines.push("  (compacted: the model now sees a summary or a trimmed copy)")
  }
  return lines.join("\n")
}
