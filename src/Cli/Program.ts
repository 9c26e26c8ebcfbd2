/**
 * The `harness` program: the only place that runs effects (convention 12). It parses the command
 * line with `@effect/cli`, runs the chosen command, and maps the outcome to the documented exit
 * codes (`ExitCode`): an expected failure prints one line on stderr, never a stack trace; only a
 * defect prints its cause. Loaded lazily by `main.ts`; importing this module runs the program.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { identity } from "../Adapter/HttpEdge.js"
import * as TelemetryConfig from "../Telemetry/Config.js"
import { CliError } from "./CliError.js"
import * as Chat from "./commands/Chat.js"
import * as Mcp from "./commands/Mcp.js"
import * as Run from "./commands/Run.js"
import * as Sessions from "./commands/Sessions.js"
import { ExitCode } from "./ExitCode.js"

const root = Command.make("harness").pipe(
  Command.withDescription("effect-harness: an Effect-native coding agent"),
  Command.withSubcommands([Run.command, Chat.command, Sessions.command, Mcp.command])
)

const cli = Command.run(root, { name: "harness", version: identity.version })

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return ExitCode.Ok
  const cause = exit.cause
  if (Cause.isInterruptedOnly(cause)) return ExitCode.Cancelled
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof CliError) {
      if (error.message !== "") process.stderr.write(`${error.message.split("\n")[0]}\n`)
      return error.exitCode
    }
    // @effect/cli has already printed the usage problem and help
    if (ValidationError.isValidationError(error)) return ExitCode.Usage
    const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
    process.stderr.write(`error: ${message.split("\n")[0]}\n`)
    return ExitCode.Internal
  }
  process.stderr.write(`internal error:\n${Cause.pretty(cause)}\n`)
  return ExitCode.Internal
}

// `harness run ... | head` closes stdout early: stop quietly instead of crashing on EPIPE
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? ExitCode.Ok)
    throw error
  })
}

// OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter is not even loaded otherwise)
// diagnostics (e.g. retry warnings) go to stderr: stdout carries the answer or JSON Lines only (DEC-12)
const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))
const fiber = Effect.runFork(
  cli(process.argv).pipe(
    Effect.provide(TelemetryConfig.layerFromEnv(process.env)),
    Effect.provide(Layer.merge(NodeContext.layer, stderrLogger))
  )
)
fiber.addObserver((exit) => {
  process.exitCode = exitCodeOf(exit)
})
