/**
 * The typed failure of the built-in tools. The tool runtime turns it into an error result whose
 * text is `Error: <message>` and whose structured `error` is `{name: "BuiltinToolError", code}`
 * (T-6), so every failure is readable by the model and never crashes the loop.
 *
 * @since 0.1.0
 */
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"

/**
 * The canonical codes of {@link BuiltinToolError}.
 *
 * @since 0.1.0
 * @category models
 */
export const BuiltinToolErrorCode = Schema.Literals([
  "OUTSIDE_WORKSPACE",
  "NOT_FOUND",
  "NOT_A_FILE",
  "NOT_A_DIRECTORY",
  "BINARY_FILE",
  "FILE_TOO_LARGE",
  "PERMISSION_DENIED",
  "INVALID_ARGS",
  "INVALID_PATTERN",
  "NO_MATCH",
  "AMBIGUOUS_MATCH",
  "NO_CHANGE",
  "NOT_UTF8",
  "COMMAND_TIMEOUT",
  "SEARCH_TIMEOUT",
  "SPAWN_FAILED",
  "IO_ERROR"
])

/**
 * One of the codes of {@link BuiltinToolError}.
 *
 * @since 0.1.0
 * @category models
 */
export type BuiltinToolErrorCode = typeof BuiltinToolErrorCode.Type

/**
 * A built-in tool failed in an expected way (bad path, ambiguous edit, binary file, timeout, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class BuiltinToolError extends Schema.TaggedError<BuiltinToolError>()("BuiltinToolError", {
  code: BuiltinToolErrorCode,
  message: Schema.String
}) {}

/**
 * Shorthand constructor.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (code: BuiltinToolErrorCode, message: string): BuiltinToolError =>
  new BuiltinToolError({ code, message })

/**
 * Maps a platform file-system failure on `display` (a workspace-relative path) to a readable
 * {@link BuiltinToolError}: the wrapper's `reason` decides (`NotFound` → `NOT_FOUND`,
 * `PermissionDenied` → `PERMISSION_DENIED`, any other system error or a bad argument → `IO_ERROR`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPlatform = (error: PlatformError.PlatformError, display: string): BuiltinToolError => {
  const reason = error.reason
  if (reason._tag === "BadArgument") return make("IO_ERROR", `cannot access ${display}: ${reason.message}`)
  switch (reason._tag) {
    case "NotFound":
      return make("NOT_FOUND", `no such file or directory: ${display}`)
    case "PermissionDenied":
      return make("PERMISSION_DENIED", `permission denied: ${display}`)
    default:
      return make("IO_ERROR", `cannot access ${display}: ${reason._tag}${errorDetail(reason)}`)
  }
}

const errorDetail = (error: PlatformError.SystemError): string => {
  const cause = error.cause
  if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string") {
    return ` (${cause.code})`
  }
  return ""
}
