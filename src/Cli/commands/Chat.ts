/**
 * `harness chat [options]`: an interactive session.
 *
 * - Answers stream to stdout; tool activity, usage and the status line go to stderr.
 * - Enter while a turn is running STEERS it (the line joins the running turn as steering); Enter
 *   while idle sends a new prompt.
 * - Ctrl-C cancels the running turn; Ctrl-C while idle (or a second Ctrl-C while the cancellation
 *   settles) exits. End of input (Ctrl-D) waits for the running turn, then exits; an approval
 *   question open at that moment (and any later one) denies its call ("no answer: input closed").
 * - SIGTERM, SIGHUP and a closed stdout cancel the running turn, save the session and exit 143 /
 *   129 / 141; a second signal meanwhile exits at once. A session that cannot be saved exits 4.
 * - Slash commands (while idle): `/help`, `/new` (a fresh session), `/sessions` (stored sessions
 *   of every directory, most recent first), `/exit`.
 * - Mutating tools ask for approval on the terminal unless `--yes`; without a terminal they are
 *   denied with a reason the model can read.
 * - Without a terminal (stdin piped from a file or a program) chat is a script: each line waits for
 *   the previous turn to settle before it is read, so `printf 'q1\nq2\n' | harness chat` runs two
 *   turns in order (steering needs a person at a terminal).
 * - When stdin AND stdout are terminals, chat is the full-screen-width terminal UI of `tui/ChatTui`
 *   (loaded only then, so `harness run` never pays for it; decision 0013). The line mode below
 *   serves every other case (a pipe on either side) exactly as before.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as NodeReadline from "node:readline"
import * as ContentBlock from "../../Llm/ContentBlock.js"
import * as Agent from "../../Loop/Agent.js"
import type * as ResumePlan from "../../Session/ResumePlan.js"
import * as SessionStore from "../../Session/SessionStore.js"
import { CliError } from "../CliError.js"
import * as CommonOptions from "../CommonOptions.js"
import { ExitCode } from "../ExitCode.js"
import * as HarnessLayer from "../HarnessLayer.js"
import * as Logger from "../Logger.js"
import * as Output from "../Output.js"
import * as ProviderChoice from "../ProviderChoice.js"
import * as SaveCheck from "../SaveCheck.js"
import * as SessionRoute from "../SessionRoute.js"
import * as Signals from "../Signals.js"
import * as Approval from "../tools/Approval.js"
import * as TurnOutcome from "../TurnOutcome.js"
import * as Run from "./Run.js"

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

const interrupt: Input = { _tag: "Interrupt" }

const help = [
  "Type a prompt and press Enter. While the agent works, Enter steers the running turn.",
  "Ctrl-C cancels the running turn; Ctrl-C again (or while idle) exits. Ctrl-D exits.",
  "/help     this help",
  "/new      start a new session",
  "/sessions list stored sessions",
  "/compact [instructions]  summarise the conversation so far to free context",
  "/resume   continue this session's interrupted turn",
  "/exit     quit"
].join("\n")

const err = (text: string) => Effect.sync(() => Output.terminalSinks.stderr(text))

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
 * The `/sessions` listing: stored sessions of every directory, most recent first (at most 20).
 *
 * @since 0.1.0
 * @category utils
 */
export const storedSessionLines = Effect.gen(function*() {
  const store = yield* SessionStore.SessionStore
  const stored = yield* store.stored().pipe(Effect.orElseSucceed(() => []))
  return stored.slice(0, 20).map((s) =>
    `${s.header.id}  ${new Date(s.updatedAt).toISOString().slice(0, 16)}  ${s.turns} turn${s.turns === 1 ? "" : "s"}  ${s.firstPrompt ?? ""}`
  )
})

/**
 * The `chat` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("chat", CommonOptions.options, (given) =>
  Effect.scoped(Effect.gen(function*() {
    // DEC-16: a resumed session runs where it ran, unless a flag says otherwise
    const restored = yield* SessionRoute.restoreFor(given, process.argv.slice(2))
    const args = restored.flags
    const cwd = restored.cwd
    const choice = yield* ProviderChoice.resolve(args)
    yield* Run.announce(choice)
    if (process.stdin.isTTY === true && process.stdout.isTTY === true) {
      // the terminal UI, loaded only here (decision 0013)
      const tui = yield* Effect.promise(() => import("../tui/ChatTui.js"))
      return yield* tui.run({ args, choice, cwd })
    }
    const interactive = process.stdin.isTTY === true
    const inputs = yield* Queue.unbounded<Input>()
    const interrupts = yield* Queue.unbounded<Input>()
    // an approval question pending on the terminal takes the next line as its answer
    let answer: ((line: string | undefined) => void) | undefined
    // once the input ended, approval questions are answered "no answer" at once
    let inputClosed = false
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const rl = NodeReadline.createInterface({ input: process.stdin, output: process.stderr, terminal: interactive })
        rl.on("line", (text) => {
          if (answer !== undefined) {
            const reply = answer
            answer = undefined
            reply(text)
          } else Queue.offerUnsafe(inputs, { _tag: "Line", text })
        })
        rl.on("SIGINT", () => Queue.offerUnsafe(interrupts, interrupt))
        rl.on("close", () => {
          inputClosed = true
          answer?.(undefined)
          Queue.offerUnsafe(inputs, { _tag: "Eof" })
        })
        const onSigint = () => Queue.offerUnsafe(interrupts, interrupt)
        process.on("SIGINT", onSigint)
        return { rl, onSigint }
      }),
      ({ onSigint, rl }) =>
        Effect.sync(() => {
          process.off("SIGINT", onSigint)
          rl.close()
        })
    )
    const prompt: Approval.Prompt = (question) =>
      Effect.callback<boolean | undefined>((resume) => {
        if (inputClosed) return resume(Effect.succeed(undefined))
        Output.processSinks.stderr(`${question} [y/N] `)
        answer = (line) => resume(Effect.succeed(line === undefined ? undefined : /^\s*y(es)?\s*$/i.test(line)))
        return Effect.sync(() => {
          answer = undefined
        })
      })
    const approval = Approval.modeFor({ yes: args.yes, interactive })
    const setup = setupOf({ args, choice, cwd, approval, prompt, interactive })
    // SIGTERM, SIGHUP and a closed stdout end the chat like Ctrl-C ends a turn, then exit
    yield* forwardStops(interrupts)
    const stopped = yield* Ref.make<Signals.Stop | undefined>(undefined)

    const program = Effect.gen(function*() {
      const printer = Output.make("text", undefined, CommonOptions.modelFacts(args, HarnessLayer.routeOf(choice), choice.model))
      const current = yield* Ref.make<{ readonly agent: Agent.Agent; readonly scope: Scope.Closeable } | undefined>(
        undefined
      )
      const open = (fresh: boolean) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const session = fresh ? { _tag: "New", cwd } as const : yield* CommonOptions.sessionChoice(args, cwd)
          const agent = yield* openAgent({ args, choice, session, cwd }).pipe(Scope.provide(scope))
          // one observer per append on the hot path: print, and report how each turn ended
          yield* agent.session.observe((event) => {
            if (event.type !== "turn/end") return printer.observe(event)
            const line = TurnOutcome.outcome(event.data.reason).line
            return Effect.andThen(printer.observe(event), line === undefined ? Effect.void : err(`${line}\n`))
          }).pipe(Scope.provide(scope))
          yield* agent.statusChanges.pipe(
            Stream.changes,
            Stream.runForEach((status) =>
              status === "running" ? err("[working… Enter steers, Ctrl-C cancels]\n") : status === "idle" ? err("› ") : Effect.void
            ),
            Effect.forkIn(scope)
          )
          yield* err(`session ${agent.id}\n`)
          yield* Ref.set(current, { agent, scope })
          return agent
        })
      const close = Effect.flatMap(Ref.getAndSet(current, undefined), (c) =>
        c === undefined ? Effect.void : Scope.close(c.scope, Exit.void))
      yield* Effect.addFinalizer(() => close)

      let agent = yield* open(false)
      let cancelling = false
      // a stop (SIGTERM, SIGHUP, closed stdout): cancel the running turn, settle, then leave
      const stopTurn = (stop: Signals.Stop) => stopAgent(agent, stopped, stop)
      while (true) {
        const input = yield* Effect.raceFirst(Queue.take(interrupts), Queue.take(inputs))
        const status = yield* agent.status
        if (input._tag === "Eof") {
          yield* endOfInput(agent, interrupts, stopped)
          break
        }
        if (input._tag === "Stop") {
          yield* stopTurn(input.stop)
          break
        }
        if (input._tag === "Interrupt") {
          if (status === "running" && !cancelling) {
            cancelling = true
            yield* agent.cancel("cancelled by the user")
            yield* agent.whenIdle.pipe(Effect.andThen(Effect.sync(() => {
              cancelling = false
            })), Effect.forkChild)
            continue
          }
          break
        }
        const text = input.text.trim()
        if (text === "") continue
        if (status !== "running" && text.startsWith("/")) {
          const [name] = text.split(/\s+/)
          if (name === "/exit" || name === "/quit") break
          if (name === "/help") yield* err(`${help}\n› `)
          else if (name === "/new") {
            yield* SaveCheck.ensureSaved(agent.id)
            yield* close
            agent = yield* open(true)
          } else if (name === "/compact") {
            const instructions = text.slice(name.length).trim()
            yield* agent.compact(instructions === "" ? {} : { instructions }).pipe(
              Effect.catch((e) => err(`error: ${e.message}\n`))
            )
            yield* err("› ")
          } else if (name === "/resume") {
            yield* resumeTurn(agent, prompt, (line) => err(`${line}\n`))
            yield* err("› ")
          } else if (name === "/sessions") {
            const lines = yield* storedSessionLines
            yield* err(`${lines.length === 0 ? "no stored sessions" : lines.join("\n")}\n› `)
          } else yield* err(`unknown command ${name} (try /help)\n› `)
          continue
        }
        const content = [ContentBlock.text(input.text)]
        const sent = status === "running" ? agent.steer(content) : agent.send(content)
        yield* sent.pipe(Effect.catch((e) => err(`error: ${e.message}\n`)))
        if (!interactive) {
          // script mode: the next line waits for this turn; Ctrl-C still cancels it
          const settled = yield* Effect.raceFirst(
            Effect.as(agent.whenIdle, undefined),
            Queue.take(interrupts)
          )
          if (settled?._tag === "Stop") {
            yield* stopTurn(settled.stop)
            break
          }
          if (settled !== undefined) {
            yield* agent.cancel("cancelled by the user")
            yield* agent.whenIdle
          }
        }
      }
      yield* SaveCheck.ensureSaved(agent.id)
    })
    yield* program.pipe(Effect.provide(HarnessLayer.layer(setup)))
    const stop = yield* Ref.get(stopped)
    if (stop !== undefined) return yield* new CliError({ message: "", exitCode: Signals.exitCode(stop) })
  }).pipe(Logger.verbose(given.verbose)))).pipe(Command.withDescription("interactive agent session"))
