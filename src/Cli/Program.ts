/**
 * The `harness` program: the only place that runs effects (convention 12). It parses the command
 * line with `@effect/cli`, runs the chosen command, and maps the outcome to the documented exit
 * codes (`ExitCode`): an expected failure prints one line on stderr, never a stack trace; only a
 * defect prints its cause. Loaded lazily by `main.ts`; importing this module runs the program.
 *
 * Before parsing, `StrictArgs` rejects unknown options and bad choices (one line, exit 2). Effect's
 * logger is replaced by the stderr `Logger` (stdout carries only answers and JSON Lines, DEC-12);
 * help and `@effect/cli` errors print through `Help.console` (plain unless colour is on), with
 * `Help.footer` and without the built-in `--wizard`. `Signals` guards the standard streams.
 *
 * @since 0.1.0
 */
import * as CliConfig from "effect/cli/CliConfig"
import * as Command from "effect/cli/Command"
import * as ValidationError from "effect/cli/ValidationError"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { identity } from "../Adapter/HttpEdge.js"
import * as TelemetryConfig from "../Telemetry/Config.js"
import { CliError } from "./CliError.js"
import { root } from "./CommandTree.js"
import * as Defaults from "./Defaults.js"
import { ExitCode } from "./ExitCode.js"
import * as Help from "./Help.js"
import * as Logger from "./Logger.js"
import * as Output from "./Output.js"
import * as Signals from "./Signals.js"
import * as StrictArgs from "./StrictArgs.js"

const cli = Command.run(root, { name: "harness", version: identity.version, footer: Help.footer })

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return ExitCode.Ok
  const cause = exit.cause
  if (Cause.isInterruptedOnly(cause)) return ExitCode.Cancelled
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof CliError) {
      if (error.message !== "") Output.terminalSinks.stderr(`${error.message.split("\n")[0]}\n`)
      return error.exitCode
    }
    // @effect/cli has already printed the usage problem and help
    if (ValidationError.isValidationError(error)) return ExitCode.Usage
    const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
    Output.terminalSinks.stderr(`error: ${message.split("\n")[0]}\n`)
    return ExitCode.Internal
  }
  Output.processSinks.stderr(`internal error:\n${Cause.pretty(cause)}\n`)
  return ExitCode.Internal
}

// a closed stdout cancels a running turn (see `Signals`); a closed stderr never crashes
Signals.installStreamGuards()

// unknown options and bad choices are usage errors naming the flag, before anything runs
const strict = StrictArgs.check(StrictArgs.specOf(root), process.argv.slice(2))

// the settings files' defaults (provider, model, store, colour) reach the options through the
// config provider; flags win (`Defaults`)
const program = Result.isFailure(strict)
  ? Effect.fail(new CliError({ message: `error: ${strict.left}`, exitCode: ExitCode.Usage }))
  : Effect.flatMap(Effect.all([Effect.console, Defaults.load(process.argv.slice(2))]), ([base, defaults]) =>
    cli(process.argv).pipe(
      Effect.provide(CliConfig.layer({ showBuiltIns: false })),
      Effect.withConsole(Help.console(base, !Help.colour(process.env, process.stdout.isTTY === true, defaults.colour))),
      Effect.withConfigProvider(Defaults.provider(defaults))
    ))

// OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter is not even loaded otherwise)
const fiber = Effect.runFork(
  program.pipe(
    Effect.provide(TelemetryConfig.layerFromEnv(process.env)),
    Effect.provide(Layer.merge(NodeServices.layer, Logger.layer))
  )
)
let settled = false
fiber.addObserver((exit) => {
  settled = true
  process.exitCode = exitCodeOf(exit)
})
// the event loop ran dry while the program still waits (e.g. for input that can never come):
// a bug, reported as one, never a silent exit 0
process.on("beforeExit", () => {
  if (settled) return
  settled = true
  Output.processSinks.stderr("internal error: the program stopped while waiting for something that cannot happen\n")
  process.exit(ExitCode.Internal)
})
