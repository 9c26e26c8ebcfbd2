/**
 * The texts of `/cost`, `/status` and `/mcp`, and the session choice of `/resume <prefix>` in the
 * chat terminal UI (issue 34).
 *
 * @since 0.1.0
 */
import type * as Message from "../../Llm/Message.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type * as Mcp from "../../Mcp/Mcp.js"
import type { SessionSummary } from "../../Session/SessionPersistence.js"
import * as Transcript from "../Transcript.js"

/**
 * `/cost`: the tokens of this session (as seen by this chat) and their price when the model's
 * pricing is known.
 *
 * @since 0.1.0
 * @category utils
 */
export const cost = (facts: ModelCatalog.ModelFacts, total: Message.TokenUsage | undefined): string => {
  if (total === undefined) return "no model requests yet in this session"
  const price = ModelCatalog.costOf(facts, total)
  return [
    `tokens: ${Transcript.renderUsage(total)}`,
    price === undefined ? "cost: unknown (no pricing for this model; see harness models)" : `cost: $${price.toFixed(4)}`
  ].join("\n")
}

/**
 * The facts `/status` shows.
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly sessionId: string
  readonly provider: string
  readonly model: string
  readonly cwd: string
  readonly approval: string
  readonly facts: ModelCatalog.ModelFacts
  readonly last: Message.TokenUsage | undefined
  readonly total: Message.TokenUsage | undefined
}

/**
 * `/status`: session, model, workspace, approvals, context use and tokens.
 *
 * @since 0.1.0
 * @category utils
 */
export const status = (s: Status): string => {
  const context = s.last === undefined
    ? 0
    : s.last.inputTokens + (s.last.cacheReadTokens ?? 0) + (s.last.cacheWriteTokens ?? 0) + s.last.outputTokens
  return [
    `session:   ${s.sessionId}`,
    `model:     ${s.provider}/${s.model}`,
    `workspace: ${s.cwd}`,
    `approvals: ${s.approval}`,
    `context:   ${context} of ${s.facts.contextWindow} tokens (${Math.round((100 * context) / s.facts.contextWindow)}%)`,
    `tokens:    ${s.total === undefined ? "none yet" : Transcript.renderUsage(s.total)}`
  ].join("\n")
}

/**
 * `/mcp`: each configured server with its status and tools.
 *
 * @since 0.1.0
 * @category utils
 */
export const mcp = (servers: ReadonlyArray<Mcp.OfferedServer> | undefined): string => {
  if (servers === undefined || servers.length === 0) {
    return "no MCP servers configured (add them to .mcp.json or pass --mcp-config; see harness mcp list)"
  }
  return servers.map((server) => {
    const head = `${server.name} (${server.transport}) ${server.status}${server.error === undefined ? "" : `: ${server.error}`}`
    const tools = server.tools.length === 0 ? "  no tools" : `  tools: ${server.tools.map((t) => t.name).join(", ")}`
    return `${head}\n${tools}`
  }).join("\n")
}

/**
 * What `/resume <prefix>` names: the one stored session whose id starts with the prefix (or
 * equals it), else every candidate (none, or several for a picker).
 *
 * @since 0.1.0
 * @category utils
 */
export const resolvePrefix = (
  sessions: ReadonlyArray<SessionSummary>,
  prefix: string
): { readonly _tag: "One"; readonly id: string } | { readonly _tag: "Many"; readonly ids: ReadonlyArray<string> } => {
  const exact = sessions.find((s) => s.header.id === prefix)
  if (exact !== undefined) return { _tag: "One", id: exact.header.id }
  // ids share the `harness-session-` label: the prefix may leave it out
  const ids = sessions.map((s) => s.header.id).filter((id) =>
    id.startsWith(prefix) || id.replace(/^.*?-session-/, "").startsWith(prefix)
  )
  return ids.length === 1 ? { _tag: "One", id: ids[0]! } : { _tag: "Many", ids }
}

/**
 * One line of the `/resume` picker: when, turns and the first prompt.
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionLabel = (s: SessionSummary): string =>
  `${new Date(s.updatedAt).toISOString().slice(0, 16).replace("T", " ")}  ${s.turns} turn${s.turns === 1 ? "" : "s"}  ${
    (s.firstPrompt ?? "").replace(/\s+/g, " ").slice(0, 60)
  }`
