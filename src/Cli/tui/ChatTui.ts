/**
 * `harness chat` on a terminal: a terminal UI on pi-tui (decision 0013). Loaded lazily by
 * `commands/Chat` only when stdin and stdout are both terminals.
 *
 * The screen, top to bottom: a banner (provider/model, session id), the transcript
 * ({@link ChatView.ChatView}), an activity line (a spinner with the turn's elapsed time while it
 * runs), the approval panel while a tool call waits for an answer, the input editor, and a status
 * line (provider/model, tokens used, context use, cost when known).
 *
 * Behaviour:
 * - The input editor is its own region: streamed output is drawn above it and never lands in it;
 *   text typed while an answer streams stays in the editor (and survives every redraw) until
 *   Enter. Enter while the agent works STEERS the running turn (the model reads the message before
 *   its next step; if the turn ends first, the message starts the next turn), as in the line mode.
 *   Shift/Alt+Enter adds a line.
 * - Bracketed paste: a multi-line paste is inserted into the editor as text (a long one as a
 *   `[paste #1 +20 lines]` marker) and sent as ONE message on Enter.
 * - Approval questions open a separate panel answered with single keys (`y`, `n`/Esc, `a`, `p`,
 *   `v`); the panel names the exact rule `a` (this chat) and `p` (saved to the project's
 *   `.effect-harness/settings.local.json`) allow and what it covers (`tui/ApprovalText`); every
 *   answer is logged as an `approval/answer` event (`ApprovalLog`). The editor's draft is kept
 *   untouched. Keys typed in the first {@link ApprovalPrompt.DEFAULT_DISCARD_MS} ms after the panel
 *   appears still go to the draft, so a key meant for the draft cannot answer a question that just
 *   popped up; other keys never reach the draft or the answer while the panel has the focus.
 * - Esc interrupts the running turn (or a running `!command`). Ctrl-C cancels the running turn (a
 *   second one while it settles exits); while idle it clears a non-empty input, and on an empty
 *   input it warns, a second Ctrl-C within 3 s exits. Ctrl-D on an empty input exits after the
 *   running turn. Ctrl-T shows or hides reasoning. SIGTERM / SIGHUP cancel, save and exit 143 / 129
 *   as in line mode.
 * - Tab completes `/commands` and `@paths` (`tui/Commands`); `!command` runs a shell command in the
 *   workspace, shows its output and adds it to the session as context (`tui/Shell`); the input
 *   history is kept across chats in the harness home and searched with Ctrl-R (`tui/History`).
 * - Slash commands (`tui/Commands`): `/help`, `/model [id]` (a picker without an id),
 *   `/resume [id prefix]` (a unique prefix of the id, else a picker), `/sessions`, `/new`, `/clear`,
 *   `/compact [instructions]`, `/cost`, `/status`, `/mcp`, `/exit`.
 * - The screen repaints only what changed (pi-tui's differential rendering): streaming appends
 *   lines, no full-screen clear; while idle no timer runs.
 * - Anything else written to stderr while the UI runs (warnings, diagnostics) is shown as a dim
 *   line in the transcript instead of tearing the screen.
 *
 * @since 0.1.0
 */
// deep imports: only the modules used reach the bundle (the package index also pulls in image
// support; the Markdown component brings its parser, `marked`)
import { Editor } from "@mariozechner/pi-tui/dist/components/editor.js"
import { decodeKittyPrintable, matchesKey } from "@mariozechner/pi-tui/dist/keys.js"
import { ProcessTerminal } from "@mariozechner/pi-tui/dist/terminal.js"
import type { SelectListTheme } from "@mariozechner/pi-tui/dist/components/select-list.js"
import type { Component } from "@mariozechner/pi-tui/dist/tui.js"
import { TUI } from "@mariozechner/pi-tui/dist/tui.js"
import { wrapTextWithAnsi } from "@mariozechner/pi-tui/dist/utils.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ContentBlock from "../../Llm/ContentBlock.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type * as Agent from "../../Loop/Agent.js"
import * as CacheAttribution from "../../Session/CacheAttribution.js"
import * as CacheNotice from "../CacheNotice.js"
import { CliError } from "../CliError.js"
import * as ApprovalLog from "../ApprovalLog.js"
import * as ChatSession from "../ChatSession.js"
import * as CommonOptions from "../CommonOptions.js"
import * as Mcp from "../../Mcp/Mcp.js"
import * as DataDir from "../../Session/persistence/DataDir.js"
import * as ResumePlan from "../../Session/ResumePlan.js"
import * as HarnessLayer from "../HarnessLayer.js"
import type * as ProviderChoice from "../ProviderChoice.js"
import * as SaveCheck from "../SaveCheck.js"
import * as List from "../sessions/List.js"
import * as RewindCommand from "../sessions/Rewind.js"
import * as SessionRoute from "../SessionRoute.js"
import * as Signals from "../Signals.js"
import * as ApprovalPrompt from "../ApprovalPrompt.js"
import * as Approval from "../../Policy/Approval.js"
import * as Transcript from "../Transcript.js"
import { ChatView } from "./ChatView.js"
import * as ApprovalText from "./ApprovalText.js"
import * as Commands from "./Commands.js"
import * as History from "./History.js"
import * as Info from "./Info.js"
import * as Picker from "./Picker.js"
import * as Shell from "./Shell.js"
import * as Style from "./Style.js"

/**
 * What `commands/Chat` hands over.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  readonly args: CommonOptions.Common
  readonly choice: ProviderChoice.Choice
  readonly cwd: string
}

type Input = ChatSession.Input

/** after a key typed into the draft, the approval panel takes keys only after this pause (ms) */
const TYPING_PAUSE_MS = 1000

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** a second Ctrl-C within this time (ms) of the first, on an empty input, exits */
const EXIT_WINDOW_MS = 3000

const component = (render: (width: number) => Array<string>): Component => ({ render, invalidate: () => {} })

const wrapAll = (lines: ReadonlyArray<string>, width: number): Array<string> =>
  lines.flatMap((line) => wrapTextWithAnsi(line, Math.max(10, width)))

const keyOf = (data: string): string => decodeKittyPrintable(data) ?? data

/** one pending approval question */
interface Question {
  readonly text: string
  readonly details: Approval.Rendered | undefined
  readonly answer: (answer: Approval.Answer) => void
  expanded: boolean
}

/**
 * The terminal UI's screen: the pi-tui tree and its state (imperative, driven by the Effect loop
 * of {@link run}).
 */
class Screen {
  readonly tui: TUI
  readonly editor: Editor
  readonly view: ChatView
  readonly questions: Array<Question> = []
  running = false
  runningSince = 0
  cancelling = false
  sessionId = ""
  model: string
  facts: ModelCatalog.ModelFacts
  private readonly panel: Component & { handleInput: (data: string) => void }
  readonly selectTheme: SelectListTheme
  /** the open picker (`/model`, `/resume`, Ctrl-R), drawn above the editor */
  picker: Picker.Picker | undefined
  /** when the last Ctrl-C on an empty, idle input was pressed (a second one soon after exits) */
  lastCtrlC = 0
  /** a `!command` runs (Esc and Ctrl-C stop it) */
  shellRunning = false
  private readonly activity: Component = component((width) => this.renderActivity(width))

  constructor(
    readonly style: Style.Style,
    readonly context: Context,
    readonly provider: string
  ) {
    this.tui = new TUI(new ProcessTerminal())
    this.model = context.choice.model
    this.facts = CommonOptions.modelFacts(context.args, provider, this.model)
    this.view = new ChatView(style, context.cwd)
    const s = style
    this.selectTheme = {
      selectedPrefix: s.cyan,
      selectedText: s.bold,
      description: s.dim,
      scrollInfo: s.dim,
      noMatch: s.dim
    }
    this.editor = new Editor(this.tui, { borderColor: s.dim, selectList: this.selectTheme })
    this.editor.setAutocompleteProvider(Commands.provider(context.cwd))
    this.panel = {
      invalidate: () => {},
      render: (width) => this.renderQuestion(width),
      handleInput: (data) => this.answerKey(data)
    }
    this.tui.addChild(component((width) =>
      wrapAll([
        `${s.bold("effect-harness")} ${s.dim("·")} ${s.cyan(`${this.provider}/${this.model}`)} ${s.dim(`· session ${this.sessionId}`)}`,
        s.dim("Enter sends · Enter while working steers · Esc interrupts · Ctrl-C twice exits · /help")
      ], width)
    ))
    this.tui.addChild(this.view)
    this.tui.addChild(this.activity)
    this.tui.addChild(this.panel)
    this.tui.addChild(component((width) => this.picker?.render(width) ?? []))
    this.tui.addChild(this.editor)
    this.tui.addChild(component((width) => this.renderStatus(width)))
    this.focus("editor")
  }

  private restoreStderr: (() => void) | undefined
  private started = false

  /** takes the terminal: raw input, bracketed paste, and stderr shown in the transcript */
  start(): void {
    if (this.started) return
    this.started = true
    // stderr writes (warnings, diagnostics) become transcript lines while the UI owns the terminal
    const original = process.stderr.write
    const capture = (chunk: string | Uint8Array, ..._rest: Array<unknown>): boolean => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
      // made inert by `notice`
      const clean = Style.strip(text).replace(/\n+$/, "")
      if (clean !== "") this.notice(clean)
      return true
    }
    process.stderr.write = capture as typeof process.stderr.write
    this.restoreStderr = () => {
      process.stderr.write = original
    }
    this.tui.start()
  }

  /** gives the terminal back (idempotent): the transcript stays, the cursor on a fresh line */
  stop(): void {
    if (!this.started) return
    this.started = false
    this.cancelQuestions()
    if (this.armTimer !== undefined) clearTimeout(this.armTimer)
    this.setRunning(false)
    this.tui.stop()
    this.restoreStderr?.()
    this.restoreStderr = undefined
  }

  private ticker: ReturnType<typeof setInterval> | undefined

  /** the spinner and elapsed times move while a turn runs; idle, nothing wakes the process */
  setRunning(running: boolean): void {
    this.running = running
    if (running && this.ticker === undefined) this.ticker = setInterval(() => this.render(), 100)
    if (!running && this.ticker !== undefined) {
      clearInterval(this.ticker)
      this.ticker = undefined
    }
  }

  render(): void {
    this.view.awaitingApproval = this.questions.length > 0
    this.tui.requestRender()
  }

  /** the last frame: the transcript and the status line, without the input and activity lines */
  lastFrame(): void {
    this.setRunning(false)
    this.tui.removeChild(this.activity)
    this.tui.removeChild(this.panel)
    this.tui.removeChild(this.editor)
    this.picker = undefined
    this.render()
  }

  notice(text: string, paint?: Style.Paint): void {
    this.view.notice(text, paint)
    this.render()
  }

  private renderActivity(width: number): Array<string> {
    const s = this.style
    if (!this.running) return []
    const elapsed = Date.now() - this.runningSince
    const frame = FRAMES[Math.floor(elapsed / 80) % FRAMES.length]!
    const what = this.cancelling ? "cancelling" : this.questions.length > 0 ? "waiting for your answer" : "working"
    return wrapAll(["", `${s.cyan(frame)} ${what} ${s.dim(`${(elapsed / 1000).toFixed(1)}s · Esc interrupts`)}`], width)
  }

  private renderStatus(width: number): Array<string> {
    const s = this.style
    const parts = [`${this.provider}/${this.model}`]
    const total = this.view.totalUsage
    if (total !== undefined) parts.push(Transcript.renderUsage(total))
    const last = this.view.lastUsage
    if (last !== undefined) {
      const context = last.inputTokens + (last.cacheReadTokens ?? 0) + (last.cacheWriteTokens ?? 0) + last.outputTokens
      parts.push(`ctx ${Math.round((100 * context) / this.facts.contextWindow)}% of ${Math.round(this.facts.contextWindow / 1000)}k`)
      const cost = total === undefined ? undefined : ModelCatalog.costOf(this.facts, total)
      if (cost !== undefined) parts.push(`$${cost.toFixed(4)}`)
    }
    return wrapAll([s.dim(parts.join(" · "))], width)
  }

  private renderQuestion(width: number): Array<string> {
    const q = this.questions[0]
    if (q === undefined) return []
    const s = this.style
    const keys = `y yes once · n no${
      q.details !== undefined && q.details.hidden > 0 && !q.expanded ? " · v view all" : ""
    } · Esc no`
    // "always" says exactly which rule it saves, and where
    const always = q.details?.rule === undefined ? [] : ApprovalText.alwaysLines(q.details.rule)
    const shown = q.details === undefined ? q.text : q.text.split("\n").slice(0, -1).join("\n")
    const body = q.expanded && q.details !== undefined ? q.details.full : shown
    const inner = Math.max(10, width - 2)
    const lines = wrapAll(body.split("\n"), inner).map((l) => `${s.yellow("│")} ${l}`)
    return [
      s.yellow(`╭─ approval ${"─".repeat(Math.max(0, width - 13))}`).slice(0, width + 20),
      ...lines,
      ...wrapAll([s.yellow("│ ") + s.bold(keys)], width),
      ...wrapAll(always.map((line) => s.yellow("│ ") + s.bold(line)), width),
      ...(this.armed() ? [] : wrapAll([s.yellow("│ ") + s.dim("(typing goes to your draft below; answer after a pause)")], width)),
      s.yellow(`╰${"─".repeat(Math.max(0, width - 1))}`)
    ]
  }

  private answerKey(data: string): void {
    const q = this.questions[0]
    if (q === undefined) return
    const key = keyOf(data).toLowerCase()
    const offersRule = q.details?.rule !== undefined
    if (key === "y") return this.settle(true)
    if (key === "n" || matchesKey(data, "escape")) return this.settle(false)
    if (offersRule && key === "a") return this.settle("always-session")
    if (offersRule && key === "p") return this.settle("always-project")
    if (key === "v" && q.details !== undefined && q.details.hidden > 0) {
      q.expanded = true
      this.render()
      return
    }
    // any other key belongs to the draft: it goes to the editor, and the panel takes keys again
    // only after a pause in typing (so a "y" inside a word never answers)
    this.focus("editor")
    this.editor.handleInput(data)
    this.arm(TYPING_PAUSE_MS)
  }

  /** a key reached the editor while a question waits: the panel waits for a pause in typing */
  typedWhileAsked(): void {
    if (this.questions.length > 0) this.arm(TYPING_PAUSE_MS)
  }

  private settle(answer: Approval.Answer): void {
    const q = this.questions.shift()
    if (q === undefined) return
    this.focus("editor")
    if (this.questions.length > 0) this.arm(ApprovalPrompt.DEFAULT_DISCARD_MS)
    this.render()
    q.answer(answer)
  }

  private armTimer: ReturnType<typeof setTimeout> | undefined
  private panelFocused = false

  /** `true` when the approval panel takes keys */
  armed(): boolean {
    return this.panelFocused
  }

  private focus(target: "editor" | "panel"): void {
    this.panelFocused = target === "panel"
    this.tui.setFocus(target === "panel" ? this.panel : this.picker ?? this.editor)
  }

  /** opens a picker (it takes the keys until it closes; an approval question still comes first) */
  openPicker(options: Omit<ConstructorParameters<typeof Picker.Picker>[2], "onClose"> & { readonly onClose?: () => void }): void {
    const close = () => {
      this.picker = undefined
      if (!this.panelFocused) this.tui.setFocus(this.editor)
      this.render()
    }
    this.picker = new Picker.Picker(this.style, this.selectTheme, {
      ...options,
      onPick: (item) => {
        close()
        options.onPick(item)
      },
      onClose: () => {
        close()
        options.onClose?.()
      }
    })
    if (!this.panelFocused) this.tui.setFocus(this.picker)
    this.render()
  }

  // the panel takes the focus after `ms` (keys typed meanwhile still go to the draft)
  private arm(ms: number): void {
    if (this.armTimer !== undefined) clearTimeout(this.armTimer)
    this.armTimer = setTimeout(() => {
      this.armTimer = undefined
      if (this.questions.length > 0) this.focus("panel")
      this.render()
    }, ms)
    this.render()
  }

  private unarm(): void {
    if (this.armTimer !== undefined) clearTimeout(this.armTimer)
    this.armTimer = undefined
    this.focus("editor")
    this.render()
  }

  ask(text: string, details: Approval.Rendered | undefined, answer: (answer: Approval.Answer) => void): Question {
    const q: Question = { text, details, answer, expanded: false }
    this.questions.push(q)
    if (this.questions.length === 1) this.arm(ApprovalPrompt.DEFAULT_DISCARD_MS)
    return q
  }

  withdraw(q: Question): void {
    const index = this.questions.indexOf(q)
    if (index < 0) return
    this.questions.splice(index, 1)
    if (index === 0) {
      if (this.questions.length > 0) this.arm(ApprovalPrompt.DEFAULT_DISCARD_MS)
      else this.unarm()
    }
  }

  /** answers every open question "cancelled" (end of input) */
  cancelQuestions(): void {
    const open = this.questions.splice(0)
    this.unarm()
    for (const q of open) q.answer(undefined)
  }
}

/**
 * Runs the chat on the terminal until `/exit`, Ctrl-C while idle, Ctrl-D or a signal.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (context: Context) =>
  Effect.gen(function*() {
    const { args, choice, cwd } = context
    const style = Style.make(Style.colorEnabled(process.env, true))
    const provider = HarnessLayer.routeOf(choice)
    const inputs = yield* Queue.unbounded<Input>()
    const interrupts = yield* Queue.unbounded<Input>()
    let inputClosed = false
    // the input history, kept across chats (a history that cannot be read or written is reported once)
    const historyFile = History.fileOf(yield* DataDir.harnessHome.pipe(Effect.orElseSucceed(() => cwd)))
    let historyProblem: string | undefined
    const history: Array<string> = [...yield* History.load(historyFile).pipe(
      Effect.catch((e) => Effect.sync(() => (historyProblem = e.message, [])))
    )]
    let historyReported = false
    // appended by the input loop; the first failure is reported, the chat goes on
    const remember = (text: string) =>
      History.append(historyFile, text).pipe(
        Effect.catch((e) =>
          Effect.sync(() => {
            if (historyReported) return
            historyReported = true
            screen.notice(e.message, style.yellow)
          })
        )
      )

    const screen = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const screen = new Screen(style, context, provider)
        for (const entry of history) screen.editor.addToHistory(entry)
        screen.editor.onSubmit = (text) => {
          if (text.trim() === "") return
          screen.editor.addToHistory(text)
          history.push(text)
          Queue.offerUnsafe(inputs, { _tag: "Line", text })
        }
        screen.tui.addInputListener((data) => {
          // a picker handles its own keys (Esc and Ctrl-C close it)
          if (screen.picker !== undefined && !screen.armed()) return undefined
          if (matchesKey(data, "ctrl+c")) {
            if (screen.running || screen.shellRunning || screen.questions.length > 0) Queue.offerUnsafe(interrupts, { _tag: "Interrupt" })
            else if (screen.editor.getText() !== "") {
              screen.editor.setText("")
              screen.render()
            } else if (Date.now() - screen.lastCtrlC < EXIT_WINDOW_MS) Queue.offerUnsafe(interrupts, { _tag: "Interrupt" })
            else {
              screen.lastCtrlC = Date.now()
              screen.notice("press Ctrl-C again to exit (or Ctrl-D)")
            }
            return { consume: true }
          }
          // Esc interrupts the running turn (unless it closes a completion list or answers a question)
          if (
            matchesKey(data, "escape") && (screen.running || screen.shellRunning) && !screen.cancelling && screen.questions.length === 0 &&
            !screen.editor.isShowingAutocomplete()
          ) {
            Queue.offerUnsafe(interrupts, { _tag: "Interrupt" })
            return { consume: true }
          }
          if (matchesKey(data, "ctrl+r") && screen.questions.length === 0) {
            const draft = screen.editor.getText()
            screen.openPicker({
              title: "input history",
              items: (query) => History.search(history, `${draft}${query}`).map((h) => ({ value: h, label: h.replace(/\s*\n\s*/g, " ⏎ ") })),
              onPick: (item) => screen.editor.setText(item.value)
            })
            return { consume: true }
          }
          if (matchesKey(data, "ctrl+d") && screen.editor.getText() === "" && screen.questions.length === 0) {
            inputClosed = true
            Queue.offerUnsafe(inputs, { _tag: "Eof" })
            return { consume: true }
          }
          screen.typedWhileAsked()
          if (matchesKey(data, "ctrl+t")) {
            screen.view.toggleReasoning()
            screen.render()
            return { consume: true }
          }
          return undefined
        })
        screen.start()
        if (historyProblem !== undefined) {
          historyReported = true
          screen.notice(historyProblem, style.yellow)
        }
        return screen
      }),
      (screen) => Effect.sync(() => screen.stop())
    )
    // a SIGINT from outside the terminal (kill -INT) counts as Ctrl-C
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const onSigint = () => Queue.offerUnsafe(interrupts, { _tag: "Interrupt" })
        process.on("SIGINT", onSigint)
        return onSigint
      }),
      (onSigint) => Effect.sync(() => void process.off("SIGINT", onSigint))
    )

    // every answer is logged in the session the chat has open (issue 34)
    let openSession: Agent.Agent["session"] | undefined
    const prompt: Approval.Prompt = ApprovalLog.logged(Object.assign(
      (question: string, details?: Approval.Rendered) =>
        Effect.callback<Approval.Answer>((resume) => {
          if (inputClosed) return resume(Effect.succeed(undefined))
          const q = screen.ask(question, details, (answer) => resume(Effect.succeed(answer)))
          return Effect.sync(() => screen.withdraw(q))
        }),
      { answersAlways: true }
    ), () => openSession)
    const setup = ChatSession.setupOf({
      args,
      choice,
      cwd,
      approval: Approval.modeFor({ yes: args.yes, interactive: true }),
      prompt,
      interactive: true
    })
    yield* ChatSession.forwardStops(interrupts)
    const stopped = yield* Ref.make<Signals.Stop | undefined>(undefined)

    const program = Effect.gen(function*() {
      const current = yield* Ref.make<{ readonly agent: Agent.Agent; readonly scope: Scope.Closeable } | undefined>(
        undefined
      )
      const open = (session: Agent.SessionChoice, model: string) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const agent = yield* ChatSession.openAgent({ args, choice, session, cwd, model }).pipe(
            Scope.provide(scope),
            Effect.onError(() => Scope.close(scope, Exit.void))
          )
          const previous = yield* Ref.getAndSet(current, { agent, scope })
          if (previous !== undefined) yield* Scope.close(previous.scope, Exit.void)
          screen.view.clear()
          openSession = agent.session
          screen.sessionId = agent.id
          screen.model = model
          screen.facts = CommonOptions.modelFacts(args, provider, model)
          // a resumed session shows what happened so far
          for (const event of yield* agent.session.events) screen.view.onEvent(event, false)
          yield* agent.session.observe((event) =>
            Effect.sync(() => {
              screen.view.onEvent(event)
              screen.render()
            })
          ).pipe(Scope.provide(scope))
          yield* agent.statusChanges.pipe(
            Stream.changes,
            Stream.runForEach((status) =>
              Effect.sync(() => {
                const running = status === "running"
                if (running && !screen.running) screen.runningSince = Date.now()
                screen.setRunning(running)
                if (!running) screen.cancelling = false
                screen.render()
              })
            ),
            Effect.forkIn(scope)
          )
          screen.render()
          return agent
        })
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(Ref.getAndSet(current, undefined), (c) => c === undefined ? Effect.void : Scope.close(c.scope, Exit.void))
      )

      let agent = yield* open(yield* CommonOptions.sessionChoice(args, cwd), choice.model)
      const stopTurn = (stop: Signals.Stop) => ChatSession.stopAgent(agent, stopped, stop)
      // switch to another session or model; on failure the current one stays
      const reopen = (session: Agent.SessionChoice, model: string, same: boolean) =>
        Effect.gen(function*() {
          yield* SaveCheck.ensureSaved(agent.id)
          if (same) {
            // the same session: its lock must be released before it is opened again
            const c = yield* Ref.getAndSet(current, undefined)
            if (c !== undefined) yield* Scope.close(c.scope, Exit.void)
          }
          agent = yield* open(session, model)
        }).pipe(
          Effect.catch((e) =>
            Effect.gen(function*() {
              screen.notice(`error: ${e.message}`, style.red)
              if ((yield* Ref.get(current)) === undefined) agent = yield* open({ _tag: "Resume", id: agent.id }, screen.model)
            })
          )
        )

      const mcpServers = yield* Effect.serviceOption(Mcp.McpServers)
      // a command a picker issues (`/resume <id>`) is not typed input: it stays out of the history
      const issued = new Set<string>()
      const line = (text: string) => {
        issued.add(text)
        Queue.offerUnsafe(inputs, { _tag: "Line", text })
      }
      const failed = (e: { readonly message: string }) => Effect.sync(() => screen.notice(`error: ${e.message}`, style.red))

      // `!command`: run it, show it, and add it to the session as model-visible context (no turn)
      const shell = (commandLine: string) =>
        Effect.gen(function*() {
          screen.notice(`$ ${commandLine}`, style.bold)
          screen.shellRunning = true
          // Esc or Ctrl-C stops it (its process group is killed)
          const result = yield* Effect.raceFirst(Shell.run(commandLine, cwd), Effect.as(Queue.take(interrupts), undefined)).pipe(
            Effect.ensuring(Effect.sync(() => (screen.shellRunning = false)))
          )
          if (result === undefined) return screen.notice("shell command interrupted", style.yellow)
          const output = result.output.replace(/\n+$/, "")
          if (output !== "") screen.notice(output, (t) => t)
          screen.notice(Shell.status(result), result.exitCode === 0 ? style.green : style.red)
          yield* agent.inject([ContentBlock.text(Shell.contextText(result))], {
            meta: { shell: { command: commandLine, exitCode: result.exitCode ?? null } }
          }).pipe(Effect.catch(failed))
        })

      const resumePicker = (ids: ReadonlyArray<string> | undefined) =>
        Effect.gen(function*() {
          const stored = yield* ChatSession.storedSessions
          const shown = stored.filter((s) => s.header.id !== agent.id && (ids === undefined || ids.includes(s.header.id)))
          if (shown.length === 0) return screen.notice("no other stored sessions", style.yellow)
          const prefixes = List.uniquePrefixes(shown.map((s) => s.header.id))
          const items = shown.map((s) => ({
            value: s.header.id,
            label: prefixes.get(s.header.id) ?? s.header.id,
            description: Info.sessionLabel(s)
          }))
          screen.openPicker({
            title: "resume a session",
            items: (query) => Picker.containing(items, query),
            onPick: (item) => line(`/resume ${item.value}`)
          })
        })

      // issue 30: an action that breaks a warm prompt cache asks first (tokens and cost of re-sending them)
      const confirmBreak = (action: string) =>
        Effect.flatMap(CacheNotice.warning(agent.session, { provider, model: screen.model }, action), (question) =>
          question === undefined
            ? Effect.succeed(true)
            : Effect.map(prompt(question), (answer) => {
              if (answer !== true) screen.notice("left as it is: the cache stays warm")
              return answer === true
            }))

      const command = (name: string, rest: string, idle: boolean) =>
        Effect.gen(function*() {
          switch (name) {
            case "/help":
              return screen.notice(Commands.help())
            case "/compact":
              if (!(yield* confirmBreak("compacting"))) return
              screen.notice("compacting…")
              return yield* agent.compact(rest === "" ? {} : { instructions: rest }).pipe(Effect.catch(failed))
            case "/sessions": {
              const lines = yield* ChatSession.storedSessionLines
              return screen.notice(lines.length === 0 ? "no stored sessions" : lines.join("\n"))
            }
            case "/cost":
              return screen.notice(Info.cost(screen.facts, screen.view.totalUsage))
            case "/status":
              return screen.notice(Info.status({
                sessionId: agent.id,
                provider,
                model: screen.model,
                cwd,
                approval: args.yes ? "every call allowed (--yes)" : "mutating calls ask (settings rules apply)",
                facts: screen.facts,
                last: screen.view.lastUsage,
                total: screen.view.totalUsage
              }))
            case "/mcp":
              return screen.notice(Info.mcp(
                mcpServers._tag === "Some" ? yield* mcpServers.value.offered : undefined
              ))
          }
          if (name === "/rewind") {
            // issue 33: files (the journal) and/or conversation (a fork, continued here)
            if (!idle) return screen.notice(`${name} waits for the running turn: let it finish or press Esc`, style.yellow)
            const done = yield* RewindCommand.inChat(agent.session, rest)
            if (done.fork !== undefined) yield* reopen({ _tag: "Resume", id: done.fork }, screen.model, false)
            return screen.notice(done.text)
          }
          if (!["/model", "/resume", "/new", "/clear"].includes(name)) {
            return screen.notice(`unknown command ${name} (try /help)`, style.yellow)
          }
          if (!idle) return screen.notice(`${name} waits for the running turn: let it finish or press Esc`, style.yellow)
          if (name === "/model") {
            if (rest !== "") {
              if (rest !== screen.model && !(yield* confirmBreak(`switching to ${rest}`))) return
              yield* reopen({ _tag: "Resume", id: agent.id }, rest, true)
              return screen.notice(`model: ${provider}/${screen.model}`)
            }
            const items = ModelCatalog.builtIn.filter((e) => e.provider === provider).map((e) => ({
              value: e.model,
              label: e.model,
              description: `${Math.round(e.contextWindow / 1000)}k context${e.model === screen.model ? " · current" : ""}`
            }))
            screen.notice(`model: ${provider}/${screen.model}`)
            if (items.length === 0) return
            return screen.openPicker({
              title: `model for ${provider} (any other id: /model <id>)`,
              items: (query) => Picker.containing(items, query),
              onPick: (item) => line(`/model ${item.value}`)
            })
          }
          if (name === "/resume") {
            if (rest === "") {
              // this session's interrupted turn first (DEC-16); the screen stays live meanwhile
              const plan = ResumePlan.plan(yield* Effect.orElseSucceed(agent.session.events, () => []))
              if (plan._tag === "Nothing") return yield* resumePicker(undefined)
              return yield* Effect.asVoid(Effect.forkChild(
                ChatSession.resumeTurn(agent, prompt, (line) => Effect.sync(() => screen.notice(line, style.yellow)))
              ))
            }
            if (rest === agent.id) return screen.notice("that is the current session")
            const found = Info.resolvePrefix(yield* ChatSession.storedSessions, rest)
            if (found._tag === "One") return yield* reopen({ _tag: "Resume", id: found.id }, screen.model, false)
            if (found.ids.length === 0) return screen.notice(`no stored session starts with ${rest} (try /resume)`, style.yellow)
            screen.notice(`${found.ids.length} sessions start with ${rest}: pick one`)
            return yield* resumePicker(found.ids)
          }
          return yield* reopen({ _tag: "New", cwd }, screen.model, false)
        })

      while (true) {
        const input = yield* Effect.raceFirst(Queue.take(interrupts), Queue.take(inputs))
        const status = yield* agent.status
        if (input._tag === "Eof") {
          screen.cancelQuestions()
          yield* ChatSession.endOfInput(agent, interrupts, stopped)
          break
        }
        if (input._tag === "Stop") {
          yield* stopTurn(input.stop)
          break
        }
        if (input._tag === "Interrupt") {
          if (status === "running" && !screen.cancelling) {
            screen.cancelling = true
            screen.render()
            yield* agent.cancel("cancelled by the user")
            continue
          }
          if (status === "running") {
            yield* Signals.armHardExit
            yield* agent.cancel("cancelled by the user")
            yield* agent.whenIdle
          }
          break
        }
        if (!issued.delete(input.text)) yield* remember(input.text)
        const text = input.text.trim()
        const [name = ""] = text.split(/\s+/)
        const rest = text.slice(name.length).trim()
        const idle = status !== "running"
        if (text.startsWith("!") && text.length > 1) {
          yield* shell(text.slice(1).trim())
          continue
        }
        if (text.startsWith("/") && !text.includes("\n")) {
          if (name === "/exit" || name === "/quit") break
          yield* command(name, rest, idle)
          continue
        }
        const content = [ContentBlock.text(input.text)]
        yield* (idle ? agent.send(content) : agent.steer(content)).pipe(
          Effect.catch((e) => Effect.sync(() => screen.notice(`error: ${e.message}`, style.red)))
        )
      }
      yield* SaveCheck.ensureSaved(agent.id)
      return agent.id
    })
    const id = yield* program.pipe(
      Effect.provide(HarnessLayer.layer(setup)),
      Effect.provideService(CacheAttribution.Ttl, CacheNotice.ttlOf(Option.getOrUndefined(args.cacheTtl ?? Option.none())))
    )
    // leave the screen: the transcript stays, the prompt returns on a fresh line
    yield* Effect.sync(() => screen.lastFrame())
    yield* Effect.sleep("50 millis") // one render frame (pi-tui renders at most every 16 ms)
    yield* Effect.sync(() => screen.stop())
    const stop = yield* Ref.get(stopped)
    yield* Effect.sync(() => void process.stderr.write(`${SessionRoute.hint("chat", id, args.store)}\n`))
    if (stop !== undefined) return yield* new CliError({ message: "", exitCode: Signals.exitCode(stop) })
  }).pipe(Effect.scoped)
