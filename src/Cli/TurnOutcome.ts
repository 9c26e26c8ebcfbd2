/**
 * How a finished turn maps to the CLI's one-line report and exit code.
 *
 * @since 0.1.0
 */
import * as LlmError from "../Llm/LlmError.js"
import type { TurnEndReason } from "../Session/SessionEvent.js"
import { ExitCode } from "./ExitCode.js"

// the canonical model-request codes, plus the registry's "no adapter for this route"
const providerCodes: ReadonlySet<string> = new Set<string>([...LlmError.canonicalCodes, "NO_ADAPTER"])

/**
 * `true` for a canonical provider (model-request) error code, including `HTTP_<n>` and upper-cased
 * in-band finish reasons such as `CONTENT_FILTER`.
 *
 * @since 0.1.0
 * @category utils
 */
export const isProviderCode = (code: string): boolean =>
  providerCodes.has(code) || /^HTTP_\d{3}$/.test(code) ||
  (/^[A-Z][A-Z0-9_]*$/.test(code) && !harnessPrefixes.some((prefix) => code.startsWith(prefix)))

// codes the loop, session and tools produce themselves (never a provider's in-band finish reason)
const harnessPrefixes = [
  "COMPACTION_",
  "INVALID_",
  "SESSION_",
  "TOOL_",
  "UNKNOWN_TOOL",
  "HOOK",
  "SYSTEM_PROMPT",
  "INVARIANT",
  "OPEN_TURN",
  "REENTRANT",
  "PERSISTENCE_",
  "APPROVAL_"
]

/**
 * The report of a turn end: the exit code and the line for stderr (`undefined` when all is well).
 *
 * @since 0.1.0
 * @category utils
 */
export const outcome = (reason: TurnEndReason | undefined): { readonly exitCode: ExitCode; readonly line?: string } => {
  if (reason === undefined) return { exitCode: ExitCode.Internal, line: "error: the turn did not end" }
  switch (reason.kind) {
    case "completed":
      return { exitCode: ExitCode.Ok }
    case "max-tokens":
      return { exitCode: ExitCode.Ok, line: "note: the model stopped at its output token limit" }
    case "aborted":
      return { exitCode: ExitCode.Cancelled, line: `cancelled${reason.reason !== undefined ? `: ${reason.reason}` : ""}` }
    case "disposed":
      return { exitCode: ExitCode.Cancelled, line: "cancelled: the agent was shut down" }
    case "rejected":
      return { exitCode: ExitCode.TurnError, line: `error: prompt rejected: ${reason.reason}` }
    case "interrupted":
      return { exitCode: ExitCode.TurnError, line: "error: the turn was interrupted" }
    case "max-steps":
      return {
        exitCode: ExitCode.TurnError,
        line: `stopped after ${reason.steps} step${reason.steps === 1 ? "" : "s"} (--max-steps); send another prompt to continue`
      }
    case "error": {
      const code = reason.code
      if (code === "PERSISTENCE_FAILED") {
        return { exitCode: ExitCode.Session, line: `error: the session could not be saved: ${reason.message}` }
      }
      // the harness cut a runaway stream: the turn failed, the provider did not
      if (code === "OUTPUT_LIMIT") return { exitCode: ExitCode.TurnError, line: `error: ${reason.message} [${code}]` }
      if (code !== undefined && isProviderCode(code)) {
        return { exitCode: ExitCode.Provider, line: `error: provider error ${code}: ${reason.message}` }
      }
      return { exitCode: ExitCode.TurnError, line: `error: ${reason.message}${code !== undefined ? ` [${code}]` : ""}` }
    }
    default:
      return { exitCode: ExitCode.Ok }
  }
}
