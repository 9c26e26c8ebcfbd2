/**
 * `harness run [options] <prompt>`: one turn to completion. The prompt `-` reads stdin.
 * `harness run --resume <id>` without a prompt continues the session's interrupted turn (DEC-16);
 * `--resume`/`--continue` restore the session's provider, model, base URL and directory
 * (`SessionRoute`), flags override them with a notice.
 *
 * `--input-format stream-json` reads user messages from stdin as JSON Lines (Claude Code's format,
 * `StreamJsonInput`) instead of the prompt argument: each starts a turn, or steers the running one.
 *
 * `--output-format` (DEC-10, `docs/cli-json.md`):
 * - `text` (default): the assistant's text streams to stdout, tool activity plus a final usage
 *   line and `resume with: harness run --resume <id>` go to stderr;
 * - `stream-json` (alias `--json`): an `init` line, every session event (and retry notices) as one
 *   JSON line, then a `result` line;
 * - `json`: one JSON object (the `result` object) on stdout at the end, nothing before it.
 * Ctrl-C, SIGTERM, SIGHUP and a closed stdout cancel the turn (the log stays balanced:
 * `turn/end aborted`), save the session, release its lock and exit 130 / 143 / 129 / 141; a second
 * signal while the cancellation settles exits at once. A session that could not be saved exits 4.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import { identity } from "../../Adapter/HttpEdge.js"
import * as ContentBlock from "../../Llm/ContentBlock.js"
import * as Retry from "../../Llm/Retry.js"
import * as Agent from "../../Loop/Agent.js"
import type * as ResumePlan from "../../Session/ResumePlan.js"
import * as ToolRegistry from "../../Loop/ToolRegistry.js"
import * as ToolRuntime from "../../Loop/ToolRuntime.js"
import * as CacheAttribution from "../../Session/CacheAttribution.js"
import type { TurnEndReason } from "../../Session/SessionEvent.js"
import { CliError } from "../CliError.js"
import * as CacheNotice from "../CacheNotice.js"
import * as CommandDoc from "../CommandDoc.js"
import * as CommonOptions from "../CommonOptions.js"
import { ExitCode } from "../ExitCode.js"
import * as HarnessLayer from "../HarnessLayer.js"
import * as Logger from "../Logger.js"
import * as Output from "../Output.js"
import * as ProviderChoice from "../ProviderChoice.js"
import * as RunSummary from "../RunSummary.js"
import * as SaveCheck from "../SaveCheck.js"
import * as SessionRoute from "../SessionRoute.js"
import * as Signals from "../Signals.js"
import * as StreamJsonInput from "../StreamJsonInput.js"
import * as ApprovalPrompt from "../ApprovalPrompt.js"
import * as Approval from "../../Policy/Approval.js"
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
 * How a `run` ended: the turn's end reason and the first stop request (signal or closed stdout).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunResult {
  readonly sessionId: string
  readonly reason: TurnEndReason | undefined
  readonly stop: Option.Option<Signals.Stop>
  /** the turn's events folded for the `result` line */
  readonly summary: RunSummary.Summary
  readonly durationMs: number
  /** the session could not be saved (exit 4) */
  readonly saveFailure: CliError | undefined
}

/**
 * Runs one prompt as one turn over the agent built from `setup`.
 *
 * SIGINT, SIGTERM, SIGHUP and a closed stdout cancel the turn by interruption (tool process groups
 * are killed, the turn ends `aborted` with the stop's reason); the session is then saved and
 * released with the scope. A second signal during that shutdown exits at once (`Signals`). Before
 * returning, unsaved events are flushed once more; a failure is returned as `saveFailure` (exit 4).
 * In `--json` mode the first line on stdout is the `{"type":"init", …}` line (`docs/cli-json.md`).
 *
 * @since 0.1.0
 * @category handlers
 */
export const runOnce = (options: {
  readonly common: CommonOptions.Common
  readonly choice: ProviderChoice.Choice
  readonly cwd: string
  /** the prompt of a new turn; absent: continue the session's interrupted turn (DEC-16) */
  readonly prompt: string | undefined
  /** what the resumed turn does with a side-effecting call in doubt (default `report`) */
  readonly inDoubt?: ResumePlan.InDoubtPolicy
  /** feeds the agent in place of `prompt` and returns once its last turn ended (`--input-format stream-json`) */
  readonly feed?: (agent: Agent.Agent) => Effect.Effect<void, CliError>
  /** `true` = `stream-json` (kept for callers of the boolean form) */
  readonly json: boolean
  readonly format?: OutputFormat
  readonly sinks?: Output.Sinks
}): Effect.Effect<RunResult, CliError, HarnessLayer.Services> => {
  const format: OutputFormat = options.format ?? (options.json ? "stream-json" : "text")
  const printer: Output.Printer = format === "json"
    ? { observe: () => Effect.void, retry: () => Effect.void }
    : Output.make(
      format === "stream-json" ? "json" : "text",
      options.sinks,
      CommonOptions.modelFacts(options.common, HarnessLayer.routeOf(options.choice), options.choice.model)
    )
  const sinks = options.sinks ?? Output.processSinks
  return Effect.scoped(Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const stops = yield* Signals.listen()
    const session = yield* CommonOptions.sessionChoice(options.common, options.cwd)
    // after every usage and session check: the banner never precedes an unrelated error
    yield* announce(options.choice)
    const agent = yield* Agent.make({
      provider: HarnessLayer.routeOf(options.choice),
      model: options.choice.model,
      session,
      label: "harness",
      route: SessionRoute.of(options.choice, options.common.store, options.cwd),
      ...CommonOptions.agentLimits(options.common)
    }).pipe(Effect.mapError((e) =>
      e._tag === "SessionError" ? CommonOptions.sessionFailure(e) : new CliError({ message: e.message, exitCode: ExitCode.Usage })
    ))
    if (format === "stream-json") {
      const runtime = yield* ToolRuntime.ToolRuntime
      const tools = yield* ToolRegistry.view({ global: runtime.globals }).tools()
      sinks.stdout(`${
        JSON.stringify({
          type: "init",
          session_id: agent.id,
          cwd: options.cwd,
          provider: HarnessLayer.routeOf(options.choice),
          model: options.choice.model,
          tools: tools.map((t) => t.name),
          version: identity.version
        })
      }\n`)
    }
    // resuming (DEC-16): the summary is the turn's, so it starts from what the log holds of the
    // interrupted turn (a resume that only closes the turn still reports its logged answer)
    const resuming = options.prompt === undefined && options.feed === undefined
    const summary = yield* Ref.make(resuming ? RunSummary.ofLastTurn(yield* Effect.orElseSucceed(agent.session.events, () => [])) : RunSummary.empty)
    // one observer per append on the hot path: print, and fold the run's summary
    yield* agent.session.observe((event) =>
      Effect.andThen(printer.observe(event), Ref.update(summary, (s) => RunSummary.step(s, event)))
    )
    const prompt = options.prompt
    if (prompt !== undefined && options.feed === undefined) {
      yield* agent.send([ContentBlock.text(prompt)]).pipe(
        Effect.mapError((e) => new CliError({ message: e.message, exitCode: ExitCode.Usage }))
      )
    }
    const firstStop = yield* Ref.make(Option.none<Signals.Stop>())
    const cancelOnStop = Queue.take(stops).pipe(
      Effect.tap((stop) => Ref.set(firstStop, Option.some(stop))),
      Effect.tap(() => Signals.armHardExit),
      Effect.flatMap((stop) => agent.cancel(Signals.reason(stop)))
    )
    const work: Effect.Effect<void, CliError> = options.feed !== undefined
      ? options.feed(agent)
      : prompt !== undefined ? agent.whenIdle : Effect.flatMap(
      agent.resumeTurn({ inDoubt: options.inDoubt ?? "report" }).pipe(
        Effect.mapError((e) =>
          e._tag === "SessionError" ? CommonOptions.sessionFailure(e) : new CliError({ message: e.message, exitCode: ExitCode.Usage })
        )
      ),
      (resumed) =>
        resumed ? Effect.void : Effect.fail(
          new CliError({
            message: `error: session ${agent.id} has no interrupted turn to resume; give a prompt to continue it`,
            exitCode: ExitCode.Usage
          })
        )
    )
    // a stop cancels the turn; a feed (stdin still open) ends with the cancelled turn
    yield* Effect.raceFirst(work, Effect.andThen(cancelOnStop, options.feed === undefined ? Effect.never : agent.whenIdle))
    const saved = yield* Effect.result(SaveCheck.ensureSaved(agent.id))
    const folded = yield* Ref.get(summary)
    return {
      sessionId: agent.id,
      reason: folded.reason,
      stop: yield* Ref.get(firstStop),
      summary: folded,
      durationMs: (yield* Clock.currentTimeMillis) - started,
      saveFailure: Result.isFailure(saved) ? saved.failure : undefined
    }
  })).pipe(
    Effect.provideService(Retry.Notices, printer.retry),
    Effect.provideService(CacheAttribution.Ttl, CacheNotice.ttlOf(Option.getOrUndefined(options.common.cacheTtl ?? Option.none())))
  )
}

/**
 * The output formats of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export type OutputFormat = "text" | "json" | "stream-json"

/**
 * The output formats, in help order.
 *
 * @since 0.1.0
 * @category constants
 */
export const outputFormats: ReadonlyArray<OutputFormat> = ["text", "json", "stream-json"]

/**
 * The input formats of `run`: the prompt argument, or Claude Code's stream-json user messages on
 * stdin (`StreamJsonInput`).
 *
 * @since 0.1.0
 * @category constants
 */
export const inputFormats: ReadonlyArray<"text" | "stream-json"> = ["text", "stream-json"]

/**
 * The format the flags ask for: `--output-format`, else `--json` (an alias of `stream-json`), else
 * `text`; `--json` with another `--output-format` is a usage error.
 *
 * @since 0.1.0
 * @category utils
 */
export const formatOf = (flags: {
  readonly json: boolean
  readonly outputFormat: Option.Option<OutputFormat>
}): Result.Result<OutputFormat, string> => {
  if (Option.isNone(flags.outputFormat)) return Result.succeed(flags.json ? "stream-json" : "text")
  const format = flags.outputFormat.value
  if (flags.json && format !== "stream-json") {
    return Result.fail(`--json is --output-format stream-json; it cannot be combined with --output-format ${format}`)
  }
  return Result.succeed(format)
}

/**
 * The report of a run: the exit code and the line for stderr. A stop decides the exit code
 * (`Signals.exitCode`) even when the turn finished before the cancellation took effect.
 *
 * @since 0.1.0
 * @category utils
 */
export const report = (result: Pick<RunResult, "reason" | "stop">): { readonly exitCode: ExitCode; readonly line?: string } => {
  const turn = TurnOutcome.outcome(result.reason)
  if (Option.isNone(result.stop) || turn.exitCode === ExitCode.Session) return turn
  const stop = result.stop.value
  const line = turn.line ?? `stopped: ${Signals.reason(stop)}`
  return { exitCode: Signals.exitCode(stop), line }
}

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
    json: CommandDoc.boolean("json").pipe(Flag.withDescription("same as --output-format stream-json")),
    outputFormat: Flag.Literals("output-format", outputFormats).pipe(
      Flag.withDescription(
        "text (the answer; default) | json (one result object at the end) | stream-json (JSON Lines: init, every event, result); see docs/cli-json.md"
      ),
      Flag.optional
    ),
    inDoubt: Flag.Literals("in-doubt", ["report", "rerun"] as const).pipe(
      Flag.withDescription(
        "resuming without a prompt: report tells the model a side-effecting tool call cut off by a crash has an unknown effect, rerun runs it again (default: the settings' \"resume.inDoubtTools\", else report)"
      ),
      CommandDoc.fromSettings(Config.Literals(["report", "rerun"] as const, "inDoubtTools").pipe(Config.nested("resume"))),
      Flag.withDefault("report" as const)
    ),
    inputFormat: Flag.Literals("input-format", inputFormats).pipe(
      Flag.withDescription(
        "text (the prompt argument; default) | stream-json (user messages as JSON Lines on stdin, Claude Code's format; a line while a turn runs steers it)"
      ),
      Flag.withDefault("text" as const)
    ),
    prompt: Argument.String("prompt").pipe(
      Argument.withDescription(
        "the prompt, or - to read it from stdin; none with --resume: continue its interrupted turn; none with --input-format stream-json"
      ),
      Argument.optional
    )
  },
  (args) =>
    Effect.gen(function*() {
      const format = yield* Result.match(formatOf(args), {
        onFailure: (message) => Effect.fail(new CliError({ message: `error: ${message}`, exitCode: ExitCode.Usage })),
        onSuccess: Effect.succeed
      })
      yield* CommonOptions.validate(args)
      const given = Option.getOrUndefined(args.prompt)
      const streamJson = args.inputFormat === "stream-json"
      if (streamJson && given !== undefined) {
        return yield* new CliError({
          message: "error: --input-format stream-json reads the prompts from stdin; give no prompt argument",
          exitCode: ExitCode.Usage
        })
      }
      if (!streamJson && given === undefined && Option.isNone(args.resume) && !args.continue) {
        return yield* new CliError({
          message: "error: missing prompt (give one, or --resume <id> to continue an interrupted turn)",
          exitCode: ExitCode.Usage
        })
      }
      // DEC-16: a resumed session runs where it ran, unless a flag says otherwise
      const restored = yield* SessionRoute.restoreFor(args, process.argv.slice(2))
      const flags = restored.flags
      const cwd = restored.cwd
      const choice = yield* ProviderChoice.resolve(flags)
      const prompt = given === "-" ? yield* readStdin : given
      if (prompt !== undefined && prompt.trim() === "") {
        return yield* new CliError({ message: "error: empty prompt", exitCode: ExitCode.Usage })
      }
      const interactive = process.stdin.isTTY === true && given !== "-" && !streamJson
      const approval = Approval.modeFor({ yes: args.yes, interactive })
      // start-up questions need a person on both ends of the terminal
      const consent = interactive && process.stderr.isTTY === true
      const setup: HarnessLayer.Setup = {
        choice,
        cwd,
        store: args.store,
        approval,
        // with --yes on a terminal the prompt still answers what only a person may approve (hard asks)
        prompt: interactive ? ApprovalPrompt.terminalPrompt(process.stdin, process.stderr) : undefined,
        workspaceTrust: CommonOptions.workspaceTrustOf(args, consent),
        consentPrompt: consent ? CommonOptions.yesNo(ApprovalPrompt.terminalPrompt(process.stdin, process.stderr)) : undefined,
        mcpConfig: args.mcpConfig,
        sandbox: CommonOptions.sandboxOf(args),
        ...CommonOptions.settingsOf(args)
      }
      const result = yield* runOnce({
        common: flags,
        choice,
        cwd,
        prompt,
        inDoubt: args.inDoubt,
        json: format === "stream-json",
        format,
        ...(streamJson ? { feed: (agent: Agent.Agent) => StreamJsonInput.drive(agent, process.stdin) } : {})
      }).pipe(Effect.provide(HarnessLayer.layer(setup)))
      if (format !== "text") {
        const line = RunSummary.resultLine({ ...result, saveError: result.saveFailure?.message })
        Output.processSinks.stdout(`${JSON.stringify(line)}\n`)
      } else if (result.saveFailure === undefined) {
        Output.processSinks.stderr(`${SessionRoute.hint("run", result.sessionId, args.store)}\n`)
      }
      if (result.saveFailure !== undefined) return yield* result.saveFailure
      const outcome = report(result)
      if (outcome.line !== undefined) Output.terminalSinks.stderr(`${outcome.line}\n`)
      if (outcome.exitCode !== ExitCode.Ok) return yield* new CliError({ message: "", exitCode: outcome.exitCode })
    }).pipe(Logger.verbose(args.verbose))
).pipe(Command.withDescription("run one prompt as one agent turn"))
