/**
 * The `harness` program: the only place that runs effects (convention 12). It parses the command
 * line with `effect/cli`, runs the chosen command, and maps the outcome to the documented exit
 * codes (`ExitCode`): an expected failure prints one line on stderr, never a stack trace; only a
 * defect prints its cause. Loaded lazily by `main.ts`; importing this module runs the program.
 *
 * Before parsing, `StrictArgs` rejects unknown options and bad choices (one line, exit 2). Effect's
 * logger is replaced by the stderr `Logger` (stdout carries only answers and JSON Lines, DEC-12);
 * help and `effect/cli`'s usage errors print through `Help.presenter` (plain unless colour is on),
 * with `Help.footer` and without the built-in `--wizard`. `Signals` guards the standard streams.
 *
 * Every exit path ends the process with its code (DEC-10): once the program's fiber is done, the
 * standard streams are flushed and the process exits, so a fiber or timer left behind (Effect 4
 * fibers may hold the event loop) never keeps it running.
 *
 * @since 0.1.0
 */
import * as CliConfig from "effect/cli/CliConfig"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as EffectCliError from "effect/cli/CliError"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { identity } from "../Adapter/HttpEdge.js"
import * as TelemetryConfig from "../Telemetry/Config.js"
import { CliError } from "./CliError.js"
import * as CommandDoc from "./CommandDoc.js"
import { root } from "./CommandTree.js"
import * as Defaults from "./Defaults.js"
import { ExitCode } from "./ExitCode.js"
import * as Help from "./Help.js"
import * as Logger from "./Logger.js"
import * as Output from "./Output.js"
import * as Signals from "./Signals.js"
import * as StrictArgs from "./StrictArgs.js"
import * as Scheduling from "../Loop/Scheduling.js"

const args = process.argv.slice(2)

const failureCode = (error: unknown): number => {
  if (error instanceof CliError) {
    if (error.message !== "") Output.terminalSinks.stderr(`${error.message.split("\n")[0]}\n`)
    return error.exitCode
  }
  // effect/cli has already printed the usage problem (`Help.presenter`), or the help it shows
  // instead of running a command group without a subcommand
  if (EffectCliError.isCliError(error)) return ExitCode.Usage
  const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
  Output.terminalSinks.stderr(`error: ${message.split("\n")[0]}\n`)
  return ExitCode.Internal
}

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return ExitCode.Ok
  const cause = exit.cause
  if (Cause.hasInterruptsOnly(cause)) return ExitCode.Cancelled
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) return failureCode(failure.value)
  Output.processSinks.stderr(`internal error:\n${Cause.pretty(cause)}\n`)
  return ExitCode.Internal
}

// a closed stdout cancels a running turn (see `Signals`); a closed stderr never crashes
Signals.installStreamGuards()

// unknown options and bad choices are usage errors naming the flag, before anything runs
const strict = StrictArgs.check(StrictArgs.specOf(root), args)

// the settings files' defaults (provider, model, store, colour) reach the options through the
// config provider; flags win (`Defaults`)
const program = Result.isFailure(strict)
  ? Effect.fail(new CliError({ message: `error: ${strict.failure}`, exitCode: ExitCode.Usage }))
  : Effect.flatMap(Defaults.load(args), (defaults) => {
    const format = Help.formatter(Help.colour(process.env, process.stdout.isTTY === true, defaults.colour))
    return Command.runWith(root, { version: identity.version })(args).pipe(
      Effect.provide(Layer.mergeAll(
        CliConfig.layer({ builtIns: Help.builtIns }),
        CliOutput.layer(format),
        CliOutput.layerPresenter(Help.presenter(CommandDoc.of(root), format))
      )),
      Effect.provideService(ConfigProvider.ConfigProvider, Defaults.provider(defaults))
    )
  })

// waits until both standard streams have handed over what they buffer, then exits
const exitWith = (code: number): void => {
  process.exitCode = code
  let pending = 2
  const done = () => {
    if (--pending === 0) process.exit(code)
  }
  const streams = [[process.stdout, Signals.stdoutOpen()], [process.stderr, Signals.stderrOpen()]] as const
  for (const [stream, open] of streams) {
    if (!open || stream.destroyed || stream.writableLength === 0) done()
    else stream.once("drain", done)
  }
  // a reader that never drains must not hold the exit
  setTimeout(() => process.exit(code), 2_000).unref()
}

// OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter is not even loaded otherwise)
// the CLI's agents run on the loop's fair scheduler (opt-in for embedders, `Scheduling`)
const fiber = Effect.runFork(
  program.pipe(
    Effect.provideService(Scheduling.FairScheduler, true),
    Effect.provide(
      Layer.provideMerge(TelemetryConfig.layerFromEnv(process.env), Layer.merge(NodeServices.layer, Logger.layer))
    )
  )
)
let settled = false
fiber.addObserver((exit) => {
  settled = true
  exitWith(exitCodeOf(exit))
})
// the event loop ran dry while the program still waits (e.g. for input that can never come):
// a bug, reported as one, never a silent exit 0
process.on("beforeExit", () => {
  if (settled) return
  settled = true
  Output.processSinks.stderr("internal error: the program stopped while waiting for something that cannot happen\n")
  process.exit(ExitCode.Internal)
})
