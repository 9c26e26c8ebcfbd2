/**
 * The CLI's expected failure: one line for stderr and a documented exit code.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * An expected CLI failure. `message` is printed as-is on one line; `exitCode` per `ExitCode`.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  exitCode: Schema.Number
}) {}
