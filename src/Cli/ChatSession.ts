/**
 * What the chat's two faces share (the line mode of `commands/Chat` and the terminal UI of `tui/ChatTui`):
 * the input events, the harness setup, opening and stopping the agent, end of input, the `/help` text and the
 * `/sessions` listing. Kept apart from both so neither imports the other's module.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Agent from "../Loop/Agent.js"
import type * as ResumePlan from "../Session/ResumePlan.js"
import type { SessionSummary } from "../Session/SessionPersistence.js"
import * as SessionStore from "../Session/SessionStore.js"
import { CliError } from "./CliError.js"
import * as CommonOptions from "./CommonOptions.js"
import { ExitCode } from "./ExitCode.js"
import * as HarnessLayer from "./HarnessLayer.js"
import * as Output from "./Output.js"
import * as ProviderChoice from "./ProviderChoice.js"
import * as SessionRoute from "./SessionRoute.js"
import * as Signals from "./Signals.js"
import * as Approval from "../Policy/Approval.js"

/**
 * What the chat loop waits for: a line, Ctrl-C, a stop signal or the end of input (both the line mode and the
 * terminal UI).
 *
 * @since 0.1.0
 * @category models
 */
export type Input =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Interrupt" }
  | { readonly _tag: "Stop"; readonly stop: Signals.Stop }
  | { readonly _tag: "Eof" }

/**
 * The harness setup of a chat (line mode and terminal UI alike).
 *
 * @since 0.1.0
 * @category constructors
 */
export const setupOf = (options: {
  readonly args: CommonOptions.Common
  readonly choice: ProviderChoice.Choice
  readonly cwd: string
  readonly approval: Approval.Mode
  readonly prompt: Approval.Prompt
  /** a person answers on the terminal (start-up questions are asked) */
  readonly interactive: boolean
}): HarnessLayer.Setup => ({
  choice: options.choice,
  cwd: options.cwd,
  store: options.args.store,
  approval: options.approval,
  prompt: options.prompt,
  workspaceTrust: CommonOptions.workspaceTrustOf(options.args, options.interactive),
  consentPrompt: options.interactive ? CommonOptions.yesNo(options.prompt) : undefined,
  mcpConfig: options.args.mcpConfig,
  sandbox: CommonOptions.sandboxOf(options.args),
  ...CommonOptions.settingsOf(options.args)
})

/**
 * A stop signal during a chat: remember it (for the exit code), arm the hard exit of a second signal, cancel the
 * running turn and wait until the agent is idle (the turn is saved).
 *
 * @since 0.1.0
 * @category utils
 */
export const stopAgent = (agent: Agent.Agent, stopped: Ref.Ref<Signals.Stop | undefined>, stop: Signals.Stop) =>
  Effect.gen(function*() {
    yield* Ref.set(stopped, stop)
    yield* Signals.armHardExit
    yield* agent.cancel(Signals.reason(stop))
    yield* agent.whenIdle
  })

/**
 * The end of input: the running turn may finish, unless Ctrl-C (cancel it) or a stop signal comes first.
 *
 * @since 0.1.0
 * @category utils
 */
export const endOfInput = (
  agent: Agent.Agent,
  interrupts: Queue.Dequeue<Input>,
  stopped: Ref.Ref<Signals.Stop | undefined>
) =>
  Effect.gen(function*() {
    const during = yield* Effect.raceFirst(Effect.as(agent.whenIdle, undefined), Queue.take(interrupts))
    if (during?._tag === "Stop") yield* stopAgent(agent, stopped, during.stop)
    else if (during !== undefined) {
      yield* agent.cancel("cancelled by the user")
      yield* agent.whenIdle
    }
  })

/**
 * SIGTERM and SIGHUP end the chat like Ctrl-C ends a turn: each becomes a `Stop` input, for the life of the
 * scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const forwardStops = (interrupts: Queue.Enqueue<Input>) =>
  Effect.flatMap(Signals.listen(["SIGTERM", "SIGHUP"]), (stops) =>
    Queue.take(stops).pipe(
      Effect.flatMap((stop) => Queue.offer(interrupts, { _tag: "Stop", stop })),
      Effect.forever,
      Effect.forkScoped
    ))

export const interrupt: Input = { _tag: "Interrupt" }

export const help = [
  "Type a prompt and press Enter. While the agent works, Enter steers the running turn.",
  "Ctrl-C cancels the running turn; Ctrl-C again (or while idle) exits. Ctrl-D exits.",
  "/help     this help",
  "/new      start a new session",
  "/sessions list stored sessions",
  "/compact [instructions]  summarise the conversation so far to free context",
  "/resume   continue this session's interrupted turn",
  "/rewind [N [code|conversation|both] [force]]  back to the end of turn N (files and/or conversation)",
  "/exit     quit"
].join("\n")

export const err = (text: string) => Effect.sync(() => Output.terminalSinks.stderr(text))

/**
 * Opens the chat's agent over `session` (with `model` instead of the chosen one when given), in the
 * current scope. Shared by the line mode and the terminal UI.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openAgent = (options: {
  readonly args: CommonOptions.Common
  readonly choice: ProviderChoice.Choice
  readonly session: Agent.SessionChoice
  readonly cwd: string
  readonly model?: string
}) =>
  Agent.make({
    provider: HarnessLayer.routeOf(options.choice),
    model: options.model ?? options.choice.model,
    session: options.session,
    label: "harness",
    route: SessionRoute.of(options.choice, options.args.store, options.cwd),
    ...CommonOptions.agentLimits(options.args)
  }).pipe(
    Effect.mapError((e) =>
      e._tag === "SessionError" ? CommonOptions.sessionFailure(e) : new CliError({ message: e.message, exitCode: ExitCode.Usage })
    )
  )

/**
 * `/resume` in a chat: the person decides about each side-effecting call a crash left in doubt
 * (yes → run it again; no or no answer → the model is told its effect is unknown).
 *
 * @since 0.1.0
 * @category utils
 */
export const askInDoubt = (prompt: Approval.Prompt): ResumePlan.InDoubtPolicy => (call) =>
  prompt(
    `The ${call.block.name} call ${call.block.id} was cut off by a crash and its effect is unknown. Run it again?`
  ).pipe(
    Effect.map((answer): "rerun" | "report" => (answer === undefined || answer === false ? "report" : "rerun")),
    // a prompt that cannot ask leaves the decision to the model, like no answer
    Effect.catch(() => Effect.succeed("report" as const))
  )

/**
 * Continues the agent's interrupted turn (`/resume`), or says there is none.
 *
 * @since 0.1.0
 * @category utils
 */
export const resumeTurn = (agent: Agent.Agent, prompt: Approval.Prompt, say: (line: string) => Effect.Effect<void>) =>
  agent.resumeTurn({ inDoubt: askInDoubt(prompt) }).pipe(
    Effect.flatMap((resumed) => resumed ? Effect.void : say("no interrupted turn to resume in this session")),
    Effect.catch((e) => say(`error: ${e.message}`))
  )

/**
 * The stored sessions of every directory, most recent first (none when the store cannot list them).
 *
 * @since 0.1.0
 * @category utils
 */
export const storedSessions = Effect.gen(function*() {
  const store = yield* SessionStore.SessionStore
  return yield* store.stored().pipe(Effect.orElseSucceed((): ReadonlyArray<SessionSummary> => []))
})

/**
 * The `/sessions` listing: stored sessions of every directory, most recent first (at most 20).
 *
 * @since 0.1.0
 * @category utils
 */
export const storedSessionLines = Effect.gen(function*() {
  const stored = yield* storedSessions
  return stored.slice(0, 20).map((s) =>
    `${s.header.id}  ${new Date(s.updatedAt).toISOString().slice(0, 16)}  ${s.turns} turn${s.turns === 1 ? "" : "s"}  ${s.firstPrompt ?? ""}`
  )
})
