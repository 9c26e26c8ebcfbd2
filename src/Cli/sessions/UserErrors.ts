/**
 * Session errors in the user's words (one line, no rule ids): what the `sessions` commands and
 * `run`/`chat --resume` print. The typed `SessionError` keeps its code (and the cited rules in its
 * `rule` field) for programs; here the code decides the sentence.
 *
 * @since 0.1.0
 */
import { type SessionError, splitRules } from "../../Session/SessionError.js"
import { CliError } from "../CliError.js"
import { ExitCode } from "../ExitCode.js"

/**
 * A message without rule ids (`S-21: boundary …` → `boundary …`; `SessionError.make` already moves them to the
 * error's `rule` field, this also covers messages built elsewhere).
 *
 * @since 0.1.0
 * @category utils
 */
export const withoutRuleId = (message: string): string => splitRules(message).message

/**
 * The one-line sentence for a session error.
 *
 * @since 0.1.0
 * @category utils
 */
export const sentence = (error: Pick<SessionError, "code" | "message" | "sessionId">): string => {
  const id = error.sessionId === undefined ? "" : ` ${error.sessionId}`
  switch (error.code) {
    case "SESSION_NOT_FOUND":
      return `no session${id === "" ? " with that id" : id} is stored (see harness sessions list)`
    case "SESSION_LOCKED":
      return `session${id} is in use by another harness process; try again when it has finished (${withoutRuleId(error.message)})`
    case "SESSION_ALREADY_EXISTS":
      return `a session${id} already exists`
    case "OPEN_TURN":
    case "INVALID_BOUNDARY":
      return `cannot fork there: ${withoutRuleId(error.message)} (use --turn N, see harness sessions show)`
    case "UNSUPPORTED_VERSION":
      return `session${id} was written by a newer harness version (${withoutRuleId(error.message)})`
    case "CORRUPT_LOG":
      return `session${id} is damaged: ${withoutRuleId(error.message)}`
    default:
      return withoutRuleId(error.message)
  }
}

/**
 * A session error as the CLI error it exits with (exit 4).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toCli = (error: Pick<SessionError, "code" | "message" | "sessionId">): CliError =>
  new CliError({ message: `error: ${sentence(error)}`, exitCode: ExitCode.Session })
