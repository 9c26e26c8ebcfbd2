/**
 * `harness run [options] <prompt>`: one turn to completion. The prompt `-` reads stdin.
 *
 * Text mode streams the assistant's text to stdout and tool activity plus a final usage line to
 * stderr; `--json` writes every session event as one JSON line on stdout instead. Ctrl-C cancels
 * the turn (the log stays balanced: `turn/end aborted`) and exits 130; a second Ctrl-C while the
 * cancellation settles disposes the agent.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as ContentBlock from "../../Llm/ContentBlock.js"
import * as Agent from "../../Loop/Agent.js"
import type { TurnEndReason } from "../../Session/SessionEvent.js"
import { CliError } from "../CliError.js"
import * as CommonOptions from "../CommonOptions.js"
import { ExitCode } from "../ExitCode.js"
import * as HarnessLayer from "../HarnessLayer.js"
import * as Output from "../Output.js"
import * as Persona from "../Persona.js"
import * as ProviderChoice from "../ProviderChoice.js"
import * as Signals from "../Signals.js"
import * as Approval from "../tools/Approval.js"
import * as TurnOutcome from "../TurnOutcome.js"

const readStdin: Effect.Effect<string, CliError> = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
    return Buffer.concat(chunks).toString("utf8")
  },
  catch: (e) => new CliError({ message: `cannot read the prompt from stdin: ${String(e)}`, exitCode: ExitCode.Usage })
})

/**
 * Announces the offline demo on stderr (never on stdout, which carries the answer or JSON).
 *
 * @since 0.1.0
 * @category utils
 */
export const announce = (choice: ProviderChoice.Choice): Effect.Effect<void> =>
  Effect.sync(() => {
    if (choice._tag === "Scripted" && choice.scriptFile === undefined) {
      process.stderr.write(
        "effect-harness: no API key found (DEEPSEEK_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY); using the offline demo model\n"
      )
    }
  })

/**
 * Runs one prompt as one turn over the agent built from `setup`; returns the turn's end reason.
 *
 * @since 0.1.0
 * @category handlers
 */
export const runOnce = (options: {
  readonly common: CommonOptions.Common
  readonly choice: ProviderChoice.Choice
  readonly cwd: string
  readonly prompt: string
  readonly json: boolean
  readonly sinks?: Output.Sinks
}): Effect.Effect<TurnEndReason | undefined, CliError, HarnessLayer.Services> =>
  Effect.scoped(Effect.gen(function*() {
    const session = yield* CommonOptions.sessionChoice(options.common, options.cwd)
    const agent = yield* Agent.make({
      provider: HarnessLayer.routeOf(options.choice),
      model: options.choice.model,
      session,
      label: "harness",
      systemPrompt: { persona: Persona.persona }
    }).pipe(Effect.mapError((e) =>
      e._tag === "SessionError" ? CommonOptions.sessionFailure(e) : new CliError({ message: e.message, exitCode: ExitCode.Usage })
    ))
    const printer = Output.make(options.json ? "json" : "text", options.sinks)
    const lastEnd = yield* Ref.make<TurnEndReason | undefined>(undefined)
    // one observer per append on the hot path: print, and remember how the turn ended
    yield* agent.session.observe((event) =>
      event.type === "turn/end"
        ? Effect.zipRight(printer.observe(event), Ref.set(lastEnd, event.data.reason))
        : printer.observe(event)
    )
    const interrupts = yield* Signals.interrupts
    yield* agent.send([ContentBlock.text(options.prompt)]).pipe(
      Effect.mapError((e) => new CliError({ message: e.message, exitCode: ExitCode.Usage }))
    )
    const cancelOnInterrupt = Queue.take(interrupts).pipe(
      Effect.zipRight(agent.cancel("interrupted by the user (SIGINT)")),
      Effect.zipRight(Queue.take(interrupts)),
      Effect.zipRight(agent.dispose)
    )
    yield* Effect.raceFirst(agent.whenIdle, Effect.zipRight(cancelOnInterrupt, Effect.never))
    return yield* Ref.get(lastEnd)
  }))

/**
 * The `run` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "run",
  {
    ...CommonOptions.options,
    json: Options.boolean("json").pipe(Options.withDescription("write every session event as one JSON line on stdout")),
    prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("the prompt, or - to read it from stdin"))
  },
  (args) =>
    Effect.gen(function*() {
      const cwd = CommonOptions.cwdOf(args)
      const choice = yield* ProviderChoice.resolve(args)
      yield* announce(choice)
      const prompt = args.prompt === "-" ? yield* readStdin : args.prompt
      if (prompt.trim() === "") return yield* new CliError({ message: "empty prompt", exitCode: ExitCode.Usage })
      const interactive = process.stdin.isTTY === true && args.prompt !== "-"
      const approval = Approval.modeFor({ yes: args.yes, interactive })
      const setup: HarnessLayer.Setup = {
        choice,
        cwd,
        store: args.store,
        approval,
        prompt: approval === "ask" ? Approval.terminalPrompt(process.stdin, process.stderr) : undefined,
        ...CommonOptions.settingsOf(args)
      }
      const reason = yield* runOnce({ common: args, choice, cwd, prompt, json: args.json }).pipe(
        Effect.provide(HarnessLayer.layer(setup))
      )
      const result = TurnOutcome.outcome(reason)
      if (result.line !== undefined) process.stderr.write(`${result.line}\n`)
      if (result.exitCode !== ExitCode.Ok) return yield* new CliError({ message: "", exitCode: result.exitCode })
    })
).pipe(Command.withDescription("run one prompt as one agent turn"))
