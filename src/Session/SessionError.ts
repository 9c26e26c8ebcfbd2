/**
 * Typed session and persistence errors with canonical codes.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Canonical session/persistence codes.
 *
 * - `INVALID_EVENT`: an append or seed violates S-3..S-9 or S-11 (the message says which rule).
 * - `LEGACY_EVENT`: `request/header-delta` or header reason `fallback` (S-9).
 * - `REENTRANT_APPEND`: an append issued while another append's observers run (S-10).
 * - `SESSION_ALREADY_EXISTS`, `SESSION_NOT_FOUND`, `SESSION_NOT_LIVE`, `INVALID_BOUNDARY`, `OPEN_TURN`: fork/store (S-21, D-2).
 * - `SESSION_LOCKED`: another writer holds the session (DEC-4).
 * - `UNSUPPORTED_VERSION`, `CORRUPT_LOG`: load (D-4, D-5); `IO`: a storage operation failed.
 * - `OUT_OF_SEQUENCE`: a persisted batch does not continue the stored log (D-3).
 * - `PERSISTENCE_FAILED`: a write or fsync of the log failed (ENOSPC, EACCES, EROFS, EIO, …; DEC-11). `file` names
 *   the file, `osCode` the operating system's error code; the unsaved events stay in memory and are retried.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionErrorCode =
  | "INVALID_EVENT"
  | "LEGACY_EVENT"
  | "REENTRANT_APPEND"
  | "SESSION_ALREADY_EXISTS"
  | "SESSION_NOT_FOUND"
  | "SESSION_NOT_LIVE"
  | "INVALID_BOUNDARY"
  | "OPEN_TURN"
  | "SESSION_LOCKED"
  | "UNSUPPORTED_VERSION"
  | "CORRUPT_LOG"
  | "OUT_OF_SEQUENCE"
  | "NO_PERSISTENCE"
  | "PERSISTENCE_FAILED"
  | "IO"

/**
 * A session or persistence failure. `file`/`line` name the place for load errors.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionError extends Schema.TaggedError<SessionError>()("SessionError", {
  code: Schema.Literals([
    "INVALID_EVENT",
    "LEGACY_EVENT",
    "REENTRANT_APPEND",
    "SESSION_ALREADY_EXISTS",
    "SESSION_NOT_FOUND",
    "SESSION_NOT_LIVE",
    "INVALID_BOUNDARY",
    "OPEN_TURN",
    "SESSION_LOCKED",
    "UNSUPPORTED_VERSION",
    "CORRUPT_LOG",
    "OUT_OF_SEQUENCE",
    "NO_PERSISTENCE",
    "PERSISTENCE_FAILED",
    "IO"
  ]),
  message: Schema.String,
  sessionId: Schema.optionalKey(Schema.String),
  file: Schema.optionalKey(Schema.String),
  line: Schema.optionalKey(Schema.Number),
  osCode: Schema.optionalKey(Schema.String),
  /** the behaviour rules the failure cites (`docs/behaviour/`), for debugging; never part of `message` */
  rule: Schema.optionalKey(Schema.String),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

// a rule citation inside a message: "S-21: …", "… (S-12)", "…, before a later turn/end (D-5)"
const citation = /\b((?:AC|DEC|HB|[ACDEHKLPSTUVWX])-\d+(?:\.\d+)?): |\s?\(((?:AC|DEC|HB|[ACDEHKLPSTUVWX])-\d+(?:\.\d+)?)\)/g

/**
 * Splits the rule citations out of a message written for developers: the message users see keeps the words,
 * the cited ids go to {@link SessionError}'s `rule` field (comma-separated, in order).
 *
 * @since 0.1.0
 * @category utils
 */
export const splitRules = (text: string): { readonly message: string; readonly rule?: string } => {
  const rules: Array<string> = []
  const message = text.replace(citation, (_, prefix: string | undefined, paren: string | undefined) => {
    rules.push((prefix ?? paren)!)
    return ""
  })
  return rules.length === 0 ? { message } : { message, rule: [...new Set(rules)].join(", ") }
}

/**
 * Builds a {@link SessionError}. Rule citations in `message` ("S-21: …") move to the `rule` field (see
 * {@link splitRules}), so messages shown to users never carry rule ids.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  code: SessionErrorCode,
  message: string,
  extra: {
    readonly sessionId?: string
    readonly file?: string
    readonly line?: number
    readonly osCode?: string
    readonly cause?: unknown
  } = {}
): SessionError => new SessionError({ code, ...splitRules(message), ...extra })
