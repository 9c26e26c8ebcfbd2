/**
 * The approval policy of MCP tools: the same three modes as the built-in mutating tools.
 *
 * - `"auto"` (`--yes`): calls run without asking.
 * - `"ask"` (interactive, the default): every MCP call becomes `Ask{reason}` and is put to the
 *   `Loop/Approval` service, like `write`/`edit`/`bash`. An MCP server is third-party code that can
 *   do anything its process can, so no MCP tool is exempt (not even one annotated read-only: the
 *   annotation is the server's claim).
 * - `"deny"` (non-interactive without `--yes`): calls are denied with a reason saying how to allow
 *   them.
 *
 * The middleware delegates first (L-36): a downstream `Deny`/`Ask` from other policy (permission
 * rules, hooks) is kept; this policy only tightens.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Json } from "../Llm/Json.js"
import * as ToolHooks from "../Loop/ToolHooks.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as ToolName from "./ToolName.js"

/**
 * The approval modes (as the CLI's built-in policy).
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "auto" | "ask" | "deny"

const summarize = (name: string, args: Json): string => {
  const text = JSON.stringify(args) ?? ""
  return `${name} ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`
}

/**
 * The reason given when a call is denied in `deny` mode.
 *
 * @since 0.1.0
 * @category utils
 */
export const nonInteractiveReason = (name: string): string =>
  `tool "${name}" is provided by an MCP server and needs the user's approval, but this session is not interactive; ` +
  `the call was not run (the user can allow such calls with --yes)`

/**
 * The `pre-execute` middleware of a mode.
 *
 * @since 0.1.0
 * @category listeners
 */
export const preExecute = (mode: Mode) =>
(
  input: ToolHooks.CallInfo,
  next: (input?: ToolHooks.CallInfo) => Effect.Effect<ToolHooks.PreExecuteDecision, unknown>
): Effect.Effect<ToolHooks.PreExecuteDecision, unknown> => {
  if (mode === "auto" || !ToolName.isMcpName(input.name)) return next()
  return Effect.map(next(), (downstream) => {
    if (downstream._tag !== "Allow") return downstream
    return mode === "ask"
      ? ToolHooks.PreExecuteDecision.Ask({ reason: summarize(input.name, input.arguments) })
      : ToolHooks.PreExecuteDecision.Deny({ reason: nonInteractiveReason(input.name) })
  })
}

/**
 * Installs the policy on the tool runtime for the scope.
 *
 * @since 0.1.0
 * @category registration
 */
export const register = (mode: Mode): Effect.Effect<void, never, ToolRuntime.ToolRuntime | Scope.Scope> =>
  ToolRuntime.onPreExecute(preExecute(mode))
