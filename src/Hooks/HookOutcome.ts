/**
 * What a hook run means (HB-6, HB-7) and how the results of several handlers merge (HB-8).
 *
 * - Exit 0: stdout is parsed as JSON only when it starts with `{`; otherwise, for
 *   `UserPromptSubmit` and `SessionStart`, plain stdout becomes added context.
 * - Exit 2: block; stderr is the reason; stdout is ignored.
 * - Any other exit, a timeout, a crash or malformed JSON: a non-blocking error shown to the user,
 *   unless the handler says `onFailure: "block"` (then it blocks: security hooks fail closed).
 * - JSON: `continue:false` (+`stopReason`) stops the turn; `systemMessage` is shown to the user;
 *   legacy top-level `decision: "approve"|"block"` + `reason`; `hookSpecificOutput` only when its
 *   `hookEventName` is the firing event (else ignored with a warning).
 *
 * Merging: most restrictive wins (deny/block > ask > allow > nothing); the reasons of the winning
 * rank are joined by a blank line; contexts are kept in configuration order; the first
 * `updatedInput` / `updatedToolOutput` in configuration order is used (none after a deny/block).
 *
 * @since 0.1.0
 */
import type { Json } from "../Llm/Json.js"
import type * as HookProcess from "./HookProcess.js"

/**
 * A handler's or a merged decision.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = "none" | "allow" | "ask" | "deny" | "block" | "error"

/**
 * One handler's interpreted result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly decision: Decision
  readonly reason?: string
  readonly contexts: ReadonlyArray<string>
  readonly updatedInput?: Json
  readonly updatedToolOutput?: Json
  /** `continue: false`: the stop reason */
  readonly stop?: string
  /** shown to the user (systemMessage, errors, warnings) */
  readonly notices: ReadonlyArray<string>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const firstLine = (text: string): string => {
  const t = text.trim()
  const nl = t.indexOf("\n")
  return (nl < 0 ? t : t.slice(0, nl)).slice(0, 300)
}

const plainContextEvents = new Set(["UserPromptSubmit", "SessionStart"])

const toolEvents = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure"])

/**
 * Interprets a finished process for `event`; `onFailure: "block"` turns errors into blocks.
 *
 * @since 0.1.0
 * @category constructors
 */
export const interpret = (
  event: string,
  raw: HookProcess.Raw,
  onFailure: "continue" | "block",
  handlerLabel: string
): Outcome => {
  const blocking = event === "PreToolUse" ? "deny" : "block"
  const failed = (what: string): Outcome =>
    onFailure === "block"
      ? { decision: blocking, reason: `hook failed (${what}); blocked because it fails closed`, contexts: [], notices: [`hook ${handlerLabel} ${what}`] }
      : { decision: "error", reason: what, contexts: [], notices: [`hook ${handlerLabel} ${what}`] }
  if (raw.spawnError !== undefined) return failed(`could not start: ${raw.spawnError}`)
  if (raw.timedOut) return failed(`timed out after ${Math.round(raw.durationMs / 1000)}s and was killed`)
  if (raw.exitCode === 2) {
    const reason = raw.stderr.trim() === "" ? "blocked by a hook" : raw.stderr.trim()
    return { decision: blocking, reason, contexts: [], notices: [] }
  }
  if (raw.exitCode !== 0) {
    const detail = firstLine(raw.stderr)
    const how = raw.exitCode === null
      ? "crashed"
      : raw.exitCode > 128
      ? `crashed (signal ${raw.exitCode - 128})`
      : `exited with ${raw.exitCode}`
    return failed(`${how}${detail === "" ? "" : `: ${detail}`}`)
  }
  const out = raw.stdout.trim()
  if (!out.startsWith("{")) {
    return { decision: "none", contexts: plainContextEvents.has(event) && out !== "" ? [out] : [], notices: [] }
  }
  let json: unknown
  try {
    json = JSON.parse(out)
  } catch {
    return failed("printed malformed JSON")
  }
  if (!isRecord(json)) return failed("printed JSON that is not an object")
  const notices: Array<string> = []
  const contexts: Array<string> = []
  let decision: Decision = "none"
  let reason: string | undefined
  let updatedInput: Json | undefined
  let updatedToolOutput: Json | undefined
  if (typeof json["systemMessage"] === "string") notices.push(json["systemMessage"])
  if (json["decision"] === "block") {
    decision = blocking
    reason = typeof json["reason"] === "string" && json["reason"] !== "" ? json["reason"] : "blocked by a hook"
  } else if (json["decision"] === "approve" && event === "PreToolUse") {
    decision = "allow"
    if (typeof json["reason"] === "string") reason = json["reason"]
  }
  const specific = json["hookSpecificOutput"]
  if (isRecord(specific)) {
    if (specific["hookEventName"] !== event) {
      notices.push(
        `hook ${handlerLabel}: hookSpecificOutput for ${JSON.stringify(specific["hookEventName"])} ignored during ${event}`
      )
    } else {
      const pd = specific["permissionDecision"]
      if (event === "PreToolUse" && (pd === "allow" || pd === "deny" || pd === "ask")) {
        decision = pd
        const r = specific["permissionDecisionReason"]
        reason = typeof r === "string" && r !== "" ? r : pd === "deny" ? "denied by a hook" : undefined
      }
      if (typeof specific["additionalContext"] === "string" && specific["additionalContext"] !== "") {
        contexts.push(specific["additionalContext"])
      }
      if (toolEvents.has(event) && "updatedInput" in specific && isRecord(specific["updatedInput"])) {
        updatedInput = specific["updatedInput"] as Json
      }
      if (event !== "PreToolUse" && "updatedToolOutput" in specific && specific["updatedToolOutput"] !== undefined) {
        updatedToolOutput = specific["updatedToolOutput"] as Json
      }
    }
  }
  const stop = json["continue"] === false
    ? (typeof json["stopReason"] === "string" && json["stopReason"] !== "" ? json["stopReason"] : "stopped by a hook")
    : undefined
  return {
    decision,
    ...(reason === undefined ? {} : { reason }),
    contexts,
    ...(updatedInput === undefined ? {} : { updatedInput }),
    ...(updatedToolOutput === undefined ? {} : { updatedToolOutput }),
    ...(stop === undefined ? {} : { stop }),
    notices
  }
}

/**
 * The merged result of every handler of one event.
 *
 * @since 0.1.0
 * @category models
 */
export interface Merged {
  readonly decision: Decision
  readonly reason?: string
  readonly contexts: ReadonlyArray<string>
  readonly updatedInput?: { readonly value: Json; readonly index: number }
  readonly updatedToolOutput?: { readonly value: Json; readonly index: number }
  readonly stop?: string
}

const rank = (d: Decision): number => (d === "deny" || d === "block" ? 3 : d === "ask" ? 2 : d === "allow" ? 1 : 0)

/**
 * Merges outcomes given in configuration order (HB-8).
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge = (outcomes: ReadonlyArray<Outcome>): Merged => {
  const top = outcomes.reduce((m, o) => Math.max(m, rank(o.decision)), 0)
  const winners = outcomes.filter((o) => rank(o.decision) === top && top > 0)
  const decision: Decision = winners[0]?.decision ?? (outcomes.some((o) => o.decision === "error") ? "error" : "none")
  const reasons = winners.flatMap((o) => (o.reason === undefined ? [] : [o.reason]))
  const stops = outcomes.flatMap((o) => (o.stop === undefined ? [] : [o.stop]))
  const inputAt = top === 3 ? -1 : outcomes.findIndex((o) => o.updatedInput !== undefined)
  const outputAt = top === 3 ? -1 : outcomes.findIndex((o) => o.updatedToolOutput !== undefined)
  const input = inputAt < 0 ? undefined : outcomes[inputAt]?.updatedInput
  const output = outputAt < 0 ? undefined : outcomes[outputAt]?.updatedToolOutput
  return {
    decision,
    ...(reasons.length === 0 ? {} : { reason: reasons.join("\n\n") }),
    contexts: outcomes.flatMap((o) => o.contexts),
    ...(input === undefined ? {} : { updatedInput: { value: input, index: inputAt } }),
    ...(output === undefined ? {} : { updatedToolOutput: { value: output, index: outputAt } }),
    ...(stops.length === 0 ? {} : { stop: stops.join("\n\n") })
  }
}
