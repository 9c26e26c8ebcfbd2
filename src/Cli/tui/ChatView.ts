/**
 * The transcript area of the chat terminal UI: a pi-tui component fed with session events.
 *
 * What it shows, in log order:
 * - prompts (`› …`, long ones clipped with "… N more lines"), steering (`↳ …`);
 * - assistant text as it streams, rendered as Markdown (pi-tui's `Markdown`: headings, emphasis,
 *   lists, quotes, tables, fenced code blocks, links with their URL; wrapped to the width); the text
 *   of each model step is its own paragraph, so the text of consecutive steps is never glued
 *   together;
 * - reasoning, dimmed; collapsed to its last lines unless expanded ({@link ChatView.toggleReasoning});
 * - tool calls with their arguments; while a call runs, a spinner with the elapsed time; then its
 *   outcome: `bash` shows its exit code (a failing command reads `✗ exit code 2`, never "no
 *   output") and the tail of its output; `edit` / `write` show a coloured unified diff of the file
 *   (read before and after the call; from the call's arguments when the file cannot be read);
 * - the turn's outcome line (cancelled, error, …) and compaction lines; notices of the UI.
 *
 * Everything the model or a tool produced is neutralised before it reaches the terminal
 * (`TerminalText.neutralize`), so an escape sequence in an answer cannot move the cursor; tabs are
 * expanded to 4-column stops (`tui/Text`), never shown as `\t`.
 *
 * @since 0.1.0
 */
import { Markdown } from "@mariozechner/pi-tui/dist/components/markdown.js"
import type { Component } from "@mariozechner/pi-tui/dist/tui.js"
import { wrapTextWithAnsi } from "@mariozechner/pi-tui/dist/utils.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type * as Message from "../../Llm/Message.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as RunSummary from "../RunSummary.js"
import * as TerminalText from "../../Tools/TerminalText.js"
import * as Transcript from "../Transcript.js"
import * as TurnOutcome from "../TurnOutcome.js"
import * as Diff from "./Diff.js"
import type * as Style from "./Style.js"
import * as Text from "./Text.js"

/** the spinner's frames (one every 80 ms) */
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** files larger than this are not read for a diff */
const MAX_DIFF_FILE_BYTES = 512 * 1024

/** diff lines shown per call */
const MAX_DIFF_LINES = 40

/** output lines shown per tool result */
const MAX_OUTPUT_LINES = 6

/** prompt lines shown per user message */
const MAX_PROMPT_LINES = 8

/** reasoning lines shown while collapsed */
const COLLAPSED_REASONING_LINES = 2

type Block =
  | { readonly _tag: "Lines"; readonly lines: ReadonlyArray<string>; readonly indent: number }
  | MarkdownText
  | { readonly _tag: "Reasoning"; text: string }
  | Tool

/** streamed assistant text, rendered as Markdown (the component caches its lines per text and width) */
interface MarkdownText {
  readonly _tag: "Text"
  text: string
  markdown?: Markdown
  /** the length of `text` the component was last given */
  shownLength?: number
}

interface Tool {
  readonly _tag: "Tool"
  readonly callId: string
  readonly name: string
  readonly args: string
  readonly startedAt: number
  readonly before: string | undefined
  readonly path: string | undefined
  result?: {
    readonly isError: boolean
    readonly text: string
    readonly meta: unknown
    readonly tookMs: number
    readonly after: string | undefined
  }
}

const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined

const parseArgs = (json: string): Readonly<Record<string, unknown>> | undefined => {
  try {
    return record(JSON.parse(json))
  } catch {
    return undefined
  }
}

const stringField = (value: Readonly<Record<string, unknown>> | undefined, key: string): string | undefined => {
  const v = value?.[key]
  return typeof v === "string" ? v : undefined
}

const numberField = (value: Readonly<Record<string, unknown>> | undefined, key: string): number | undefined => {
  const v = value?.[key]
  return typeof v === "number" ? v : undefined
}

const readSmall = (file: string): string | undefined => {
  try {
    const stat = NodeFs.statSync(file)
    if (!stat.isFile() || stat.size > MAX_DIFF_FILE_BYTES) return undefined
    return NodeFs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`

const oneLine = (text: string, max: number): string => {
  const flat = TerminalText.neutralize(text).replace(/\s*\n\s*/g, " ⏎ ")
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/**
 * A one-line rendering of a call's arguments: the command of `bash`, the path of file tools, else
 * the JSON arguments (clipped).
 *
 * @since 0.1.0
 * @category utils
 */
export const callSummary = (name: string, args: string): string => {
  const parsed = parseArgs(args)
  const first = stringField(parsed, "command") ?? stringField(parsed, "file_path") ?? stringField(parsed, "path") ??
    stringField(parsed, "pattern")
  return `${TerminalText.neutralize(name)}(${oneLine(first ?? args, 160)})`
}

/**
 * The transcript component (see the module doc).
 *
 * @since 0.1.0
 * @category components
 */
export class ChatView implements Component {
  private readonly blocks: Array<Block> = []
  private readonly tools = new Map<string, Tool>()
  private reasoningExpanded = false
  // the open streaming block of the current step (text or reasoning), by chunk index
  private open: Map<number, Block> = new Map()
  /** usage of the latest model request (context use) */
  lastUsage: Message.TokenUsage | undefined
  /** set while an approval question is open: a call without result waits for it */
  awaitingApproval = false
  /** usage summed over the session's requests seen here */
  totalUsage: Message.TokenUsage | undefined

  private readonly theme: ReturnType<typeof Text.markdownTheme>

  constructor(
    private readonly style: Style.Style,
    private readonly cwd: string,
    private readonly now: () => number = Date.now
  ) {
    this.theme = Text.markdownTheme(style)
  }

  /** `true` while a tool call has no result yet */
  get toolRunning(): boolean {
    for (const tool of this.tools.values()) if (tool.result === undefined) return true
    return false
  }

  /** shows or collapses every reasoning block */
  toggleReasoning(): void {
    this.reasoningExpanded = !this.reasoningExpanded
  }

  /** a line of the UI itself (help, errors, session lists) */
  notice(text: string, paint: Style.Paint = this.style.dim): void {
    this.closeStream()
    // inert: a notice can carry a session title, a first prompt or a server's error text
    this.blocks.push({ _tag: "Lines", lines: Text.display(text).split("\n").map((l) => paint(l)), indent: 0 })
  }

  /** drops every block (a new session) */
  clear(): void {
    this.blocks.length = 0
    this.tools.clear()
    this.open = new Map()
    this.lastUsage = undefined
    this.totalUsage = undefined
  }

  private closeStream(): void {
    this.open = new Map()
  }

  private lines(lines: ReadonlyArray<string>, indent = 0): void {
    this.closeStream()
    this.blocks.push({ _tag: "Lines", lines, indent })
  }

  /** feeds one session event (`live: false` for a replayed one: files are not read for diffs) */
  onEvent(event: SessionEvent, live = true): void {
    const s = this.style
    switch (event.type) {
      case "user/message":
      case "steering/message": {
        const text = Text.display(Transcript.renderBlocks(event.data.content)).split("\n")
        const shown = text.length > MAX_PROMPT_LINES ? text.slice(0, MAX_PROMPT_LINES - 1) : text
        const more = text.length - shown.length
        const user = event.data.source.kind === "user"
        const mark = event.type === "steering/message" ? "↳ " : user ? "› " : `(${event.data.source.kind}) `
        this.lines(["", ...shown.map((l, i) => (i === 0 ? s.bold(s.cyan(mark)) + s.bold(l) : `  ${s.bold(l)}`)), ...(more > 0 ? [s.dim(`  … ${more} more lines`)] : [])])
        break
      }
      case "prompt/blocked":
        this.lines([s.red(`prompt blocked: ${oneLine(event.data.reason, 200)}`)])
        break
      case "step/start":
        this.closeStream()
        break
      case "assistant/chunk": {
        const chunk = event.data.chunk
        if (chunk.type !== "text-delta" && chunk.type !== "reasoning-delta") break
        const tag = chunk.type === "text-delta" ? "Text" : "Reasoning"
        const found = this.open.get(chunk.index)
        const block: MarkdownText | { _tag: "Reasoning"; text: string } =
          found !== undefined && (found._tag === "Text" || found._tag === "Reasoning") && found._tag === tag
            ? found
            : { _tag: tag, text: "" }
        if (block !== found) {
          this.open.set(chunk.index, block)
          this.blocks.push(block)
        }
        block.text += chunk.text
        break
      }
      case "assistant/message": {
        const u = event.data.usage
        if (u !== undefined) {
          this.lastUsage = u
          this.totalUsage = this.totalUsage === undefined ? u : RunSummary.addUsage(this.totalUsage, u)
        }
        break
      }
      case "tool/call": {
        const parsed = parseArgs(event.data.arguments)
        const file = event.data.name === "edit" || event.data.name === "write" ? stringField(parsed, "file_path") : undefined
        const path = file === undefined ? undefined : NodePath.resolve(this.cwd, file)
        const tool: Tool = {
          _tag: "Tool",
          callId: event.data.callId,
          name: event.data.name,
          args: event.data.arguments,
          startedAt: this.now(),
          path,
          before: path === undefined || !live ? undefined : readSmall(path)
        }
        this.closeStream()
        this.tools.set(tool.callId, tool)
        this.blocks.push(tool)
        break
      }
      case "tool/result": {
        if (event.surfaceOp !== undefined && event.surfaceOp !== "append") break // a compaction trim (K-5)
        const tool = this.tools.get(event.data.callId)
        if (tool === undefined || tool.result !== undefined) break
        tool.result = {
          isError: event.data.isError,
          text: Transcript.renderBlocks(event.data.content, 4000),
          meta: event.data.meta,
          tookMs: this.now() - tool.startedAt,
          after: tool.path === undefined || event.data.isError || !live ? undefined : readSmall(tool.path)
        }
        break
      }
      case "turn/end": {
        // a call left without a result (cancelled): it is no longer running
        for (const tool of this.tools.values()) {
          if (tool.result === undefined) {
            tool.result = { isError: true, text: "not finished", meta: undefined, tookMs: this.now() - tool.startedAt, after: undefined }
          }
        }
        this.tools.clear()
        const line = TurnOutcome.outcome(event.data.reason).line
        if (line !== undefined) {
          this.lines([event.data.reason.kind === "max-tokens" ? s.yellow(line) : s.red(line)])
        }
        this.closeStream()
        break
      }
      case "compact/end":
        this.lines([
          s.dim(
            event.data.error === undefined
              ? `── compacted context: ${event.data.pressureBefore} → ${event.data.pressureAfter} tokens ──`
              : `── compaction: ${oneLine(event.data.error.message, 200)} ──`
          )
        ])
        break
      default:
        break
    }
  }

  invalidate(): void {}

  render(width: number): Array<string> {
    const out: Array<string> = []
    let previous: Block["_tag"] | undefined
    for (const block of this.blocks) {
      // a paragraph break between streamed text and what follows it
      if ((previous === "Text" || previous === "Reasoning" || previous === "Tool") && block._tag !== previous) out.push("")
      else if (previous === "Text" && block._tag === "Text") out.push("")
      previous = block._tag
      for (const line of this.blockLines(block, width)) out.push(line)
    }
    return out
  }

  // the wrapped lines of finished blocks, per block and width: a frame re-wraps only what changes
  private readonly cache = new WeakMap<Block, { readonly width: number; readonly key: string; readonly lines: ReadonlyArray<string> }>()

  private blockLines(block: Block, width: number): ReadonlyArray<string> {
    if (block._tag === "Text") return this.markdownLines(block, width)
    const key = block._tag === "Lines"
      ? ""
      : block._tag === "Reasoning"
      ? `${this.reasoningExpanded}:${block.text.length}`
      : block.result === undefined
      ? undefined // a running call: its spinner moves
      : "done"
    const cached = this.cache.get(block)
    if (key !== undefined && cached !== undefined && cached.width === width && cached.key === key) return cached.lines
    const out: Array<string> = []
    const push = (line: string, indent = 0) => {
      const pad = " ".repeat(indent)
      for (const wrapped of wrapTextWithAnsi(line, Math.max(10, width - indent))) out.push(pad + wrapped)
    }
    switch (block._tag) {
      case "Lines":
        for (const line of block.lines) push(line, block.indent)
        break
      case "Reasoning": {
        const lines = Text.display(block.text).trim().split("\n")
        const shown = this.reasoningExpanded ? lines : lines.slice(-COLLAPSED_REASONING_LINES)
        const hidden = lines.length - shown.length
        const s = this.style
        push(s.dim(s.italic(`✻ thinking${hidden > 0 ? ` (${hidden} earlier line${hidden === 1 ? "" : "s"} hidden, Ctrl-T shows them)` : ""}`)))
        for (const line of shown) push(s.dim(s.italic(line)), 2)
        break
      }
      case "Tool":
        for (const line of this.renderTool(block)) push(line.text, line.indent)
        break
    }
    if (key !== undefined) this.cache.set(block, { width, key, lines: out })
    return out
  }

  private markdownLines(block: MarkdownText, width: number): ReadonlyArray<string> {
    const markdown = block.markdown ??= new Markdown("", 0, 0, this.theme)
    if (block.shownLength !== block.text.length) {
      block.shownLength = block.text.length
      markdown.setText(Text.display(block.text).replace(/^\n+/, ""))
    }
    const lines = markdown.render(Math.max(10, width))
    // the paragraph break after a block is the view's (trailing blank lines of a stream are not)
    let end = lines.length
    while (end > 0 && lines[end - 1]!.trim() === "") end--
    return end === lines.length ? lines : lines.slice(0, end)
  }

  private renderTool(tool: Tool): ReadonlyArray<{ readonly text: string; readonly indent: number }> {
    const s = this.style
    const title = callSummary(tool.name, tool.args)
    const r = tool.result
    if (r === undefined) {
      const elapsed = this.now() - tool.startedAt
      const frame = FRAMES[Math.floor(elapsed / 80) % FRAMES.length]!
      const state = this.awaitingApproval ? s.yellow("waiting for approval") : s.dim(`running ${seconds(elapsed)}`)
      return [{ text: `${s.cyan(frame)} ${s.bold(title)} ${state}`, indent: 0 }]
    }
    const out: Array<{ text: string; indent: number }> = []
    const meta = record(r.meta)
    const exitCode = numberField(meta, "exitCode")
    const failed = r.isError || (exitCode !== undefined && exitCode !== 0)
    out.push({ text: `${failed ? s.red("✗") : s.green("✓")} ${s.bold(title)} ${s.dim(seconds(r.tookMs))}`, indent: 0 })
    if (tool.name === "bash" && !r.isError) {
      const body = r.text.replace(/\n?\[(exit code: [^\]]*|terminated by signal [^\]]*)\]\s*$/, "")
      const signal = stringField(meta, "signal")
      const status = signal !== undefined
        ? s.red(`terminated by signal ${signal}`)
        : exitCode === undefined
        ? s.dim("exit code unknown")
        : exitCode === 0
        ? s.green("exit 0")
        : s.red(`exit code ${exitCode}`)
      out.push(...this.outputTail(body), { text: status, indent: 2 })
      return out
    }
    if (r.isError) {
      out.push(...this.outputTail(r.text, s.red))
      return out
    }
    if (tool.name === "edit" || tool.name === "write") {
      out.push({ text: s.dim(oneLine(r.text, 200)), indent: 2 })
      out.push(...this.diffLines(tool, r.after))
      return out
    }
    out.push(...this.outputTail(r.text))
    return out
  }

  private outputTail(text: string, paint: Style.Paint = this.style.dim): Array<{ text: string; indent: number }> {
    const lines = Text.display(text).replace(/\n+$/, "").split("\n")
    if (lines.length === 1 && lines[0]!.trim() === "") return [{ text: this.style.dim("(no output)"), indent: 2 }]
    const shown = lines.slice(-MAX_OUTPUT_LINES)
    const hidden = lines.length - shown.length
    return [
      ...(hidden > 0 ? [{ text: this.style.dim(`… ${hidden} earlier lines`), indent: 2 }] : []),
      ...shown.map((l) => ({ text: paint(l), indent: 2 }))
    ]
  }

  private diffLines(tool: Tool, after: string | undefined): Array<{ text: string; indent: number }> {
    const s = this.style
    const args = parseArgs(tool.args)
    let lines: ReadonlyArray<Diff.Line>
    if (after !== undefined && (tool.before !== undefined || tool.name === "write")) {
      lines = Diff.unified(tool.before ?? "", after)
    } else if (tool.name === "edit") {
      // the file could not be read: the snippet's diff, numbered from the first changed line
      const first = numberField(record(tool.result?.meta), "firstLine") ?? 1
      lines = Diff.unified(stringField(args, "old_string") ?? "", stringField(args, "new_string") ?? "", {
        offset: first - 1
      })
    } else {
      lines = Diff.unified("", stringField(args, "content") ?? "")
    }
    const shown = lines.slice(0, MAX_DIFF_LINES)
    const out = shown.map((line) => {
      const text = Text.display(Diff.marked(line))
      const paint = line.kind === "hunk" ? s.cyan : line.kind === "add" ? s.green : line.kind === "remove" ? s.red : s.dim
      return { text: paint(text), indent: 2 }
    })
    if (lines.length > shown.length) out.push({ text: s.dim(`… ${lines.length - shown.length} more diff lines`), indent: 2 })
    return out
  }
}
