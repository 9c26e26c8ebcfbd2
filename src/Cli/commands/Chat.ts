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
 *   of every directory, most recent first), `/rewind` (issue 33: `sessions/Rewind.inChat`), `/exit`.
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
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as NodeReadline from "node:readline"
import * as ContentBlock from "../../Llm/ContentBlock.js"
import * as Agent from "../../Loop/Agent.js"
import * as CacheAttribution from "../../Session/CacheAttribution.js"
import * as CacheNotice from "../CacheNotice.js"
import { CliError } from "../CliError.js"
import * as ApprovalLog from "../ApprovalLog.js"
import * as CommonOptions from "../CommonOptions.js"
import * as HarnessLayer from "../HarnessLayer.js"
import * as Logger from "../Logger.js"
import * as Output from "../Output.js"
import * as ProviderChoice from "../ProviderChoice.js"
import * as SaveCheck from "../SaveCheck.js"
import * as RewindCommand from "../sessions/Rewind.js"
import * as SessionRoute from "../SessionRoute.js"
import * as Signals from "../Signals.js"
import * as Approval from "../../Policy/Approval.js"
import * as TurnOutcome from "../TurnOutcome.js"
import * as Run from "./Run.js"
import * as ChatSession from "../ChatSession.js"

type Input = ChatSession.Input

const { interrupt, help, err, setupOf, stopAgent, endOfInput, forwardStops, openAgent, storedSessionLines } = ChatSession

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
    // every answer is logged in the session the chat has open (issue 34)
    let openSession: Agent.Agent["session"] | undefined
    const prompt: Approval.Prompt = ApprovalLog.logged((question) =>
      Effect.callback<boolean | undefined>((resume) => {
        if (inputClosed) return resume(Effect.succeed(undefined))
        Output.processSinks.stderr(`${question} [y/N] `)
        answer = (line) => resume(Effect.succeed(line === undefined ? undefined : /^\s*y(es)?\s*$/i.test(line)))
        return Effect.sync(() => {
          answer = undefined
        })
      }), () => openSession)
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
      const open = (fresh: boolean | Agent.SessionChoice) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const session = typeof fresh === "object"
            ? fresh
            : fresh
            ? { _tag: "New", cwd } as const
            : yield* CommonOptions.sessionChoice(args, cwd)
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
          openSession = agent.session
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
          } else if (name === "/rewind") {
            // issue 33: files (the journal) and/or conversation (a fork, continued here)
            const done = yield* RewindCommand.inChat(agent.session, text.slice(name.length))
            yield* err(`${done.text}\n`)
            if (done.fork !== undefined) {
              yield* SaveCheck.ensureSaved(agent.id)
              yield* close
              agent = yield* open({ _tag: "Resume", id: done.fork })
            } else yield* err("› ")
          } else if (name === "/resume") {
            yield* ChatSession.resumeTurn(agent, prompt, (line) => err(`${line}\n`))
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
    yield* program.pipe(
      Effect.provide(HarnessLayer.layer(setup)),
      Effect.provideService(CacheAttribution.Ttl, CacheNotice.ttlOf(Option.getOrUndefined(args.cacheTtl ?? Option.none())))
    )
    const stop = yield* Ref.get(stopped)
    if (stop !== undefined) return yield* new CliError({ message: "", exitCode: Signals.exitCode(stop) })
  }).pipe(Logger.verbose(given.verbose)))).pipe(Command.withDescription("interactive agent session"))
