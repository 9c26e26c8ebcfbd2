/**
 * Approval as a service whose prompt the host supplies ({@link layer} over a {@link Prompt}), the rendering
 * of a question, and the legacy approval policy of the mutating built-in tools. The CLI's terminal prompt
 * is `Cli/ApprovalPrompt`; a chat UI passes its own {@link Prompt}.
 *
 * A question cannot be spoofed by the model's arguments:
 * - the WHOLE call is shown (`bash` command, `write` content, `edit` old/new text), wrapped to the
 *   terminal width and never truncated; a long call shows its first lines and an explicit
 *   `… N more lines (answer v to view all)`, and `v` prints every line before asking again;
 * - control characters are neutralised (`TerminalText.neutralize`): ESC, other C0/C1 controls, DEL and
 *   invisible/bidirectional format characters are shown as inert escapes (`\x1b`, `\u202e`), so an
 *   ANSI payload (cursor-up, erase-line) is displayed as text and cannot redraw the prompt;
 * - type-ahead is discarded by the terminal prompts (`Cli/ApprovalPrompt`), so a `y` typed early cannot
 *   answer a question;
 * - besides yes/no, the user can "always allow" the suggested rule (`Bash(npm test:*)`, …) for
 *   this session (`a`) or for this project (`p`, written to `.effect-harness/settings.local.json`),
 *   except for a question only a person may answer (a protected configuration file, a command
 *   whose program cannot be known: see `Policy/Permissions`).
 *
 * End of input answers "cancelled": the call is denied and the model reads `approval was
 * cancelled`.
 *
 * The policy part ({@link modeFor}, {@link preExecute}, {@link register}) is kept for embedders;
 * the CLI decides with the permission engine (`Policy/Permissions`).
 * When the input ends (Ctrl-D, a closed pipe) the call is denied with {@link INPUT_CLOSED}, and so is every later
 * call of the turn (the prompt answers at once on ended input), which then completes and is saved.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Json } from "../Llm/Json.js"
import * as LoopApproval from "../Loop/Approval.js"
import * as ToolHooks from "../Loop/ToolHooks.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as Notice from "../Tools/Notice.js"
import * as Permissions from "./Permissions.js"
import { neutralize } from "../Tools/TerminalText.js"

/**
 * The approval modes.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = Permissions.ApprovalMode

/**
 * The names of the built-in tools that change the workspace.
 *
 * @since 0.1.0
 * @category constants
 */
export const MUTATING_TOOLS: ReadonlySet<string> = new Set(["write", "edit", "bash"])

/**
 * `true` when a call of `name` needs approval.
 *
 * @since 0.1.0
 * @category predicates
 */
export const requiresApproval = (name: string): boolean => MUTATING_TOOLS.has(name)

/**
 * The mode for the CLI flags: `--yes` → `auto`, else a TTY → `ask`, else `deny`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const modeFor = (options: { readonly yes: boolean; readonly interactive: boolean }): Mode =>
  options.yes ? "auto" : options.interactive ? "ask" : "deny"

const field = (args: Json, key: string): string | undefined => {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return undefined
  const v = (args as { readonly [k: string]: Json })[key]
  return typeof v === "string" ? v : undefined
}

const oneLine = (text: string, max = 200): string => {
  const flat = neutralize(text).replace(/\s*\n\s*/g, " ⏎ ")
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/**
 * A one-line human summary of a call (for logs and reasons; the prompt shows the whole call).
 *
 * @since 0.1.0
 * @category utils
 */
export const summarize = (name: string, args: Json): string => {
  switch (name) {
    case "bash":
      return `bash: ${oneLine(field(args, "command") ?? "")}`
    case "write": {
      const content = field(args, "content")
      return `write ${oneLine(field(args, "file_path") ?? "?")}${content !== undefined ? ` (${Buffer.byteLength(content)} bytes)` : ""}`
    }
    case "edit":
      return `edit ${oneLine(field(args, "file_path") ?? "?")}`
    default:
      return oneLine(name)
  }
}

/**
 * The body lines of a call, before wrapping: the whole command / content, neutralised.
 *
 * @since 0.1.0
 * @category utils
 */
export const bodyLines = (name: string, args: Json): ReadonlyArray<string> => {
  const lines = (text: string, prefix = "") => neutralize(text).split("\n").map((l) => `${prefix}${l}`)
  switch (name) {
    case "bash":
      return lines(field(args, "command") ?? "")
    case "write": {
      const content = field(args, "content") ?? ""
      return [`file: ${neutralize(field(args, "file_path") ?? "?")} (${Buffer.byteLength(content)} bytes)`, ...lines(content)]
    }
    case "edit":
      return [
        `file: ${neutralize(field(args, "file_path") ?? "?")}`,
        ...lines(field(args, "old_string") ?? "", "- "),
        ...lines(field(args, "new_string") ?? "", "+ ")
      ]
    default:
      return lines(JSON.stringify(args, null, 2))
  }
}

/**
 * Hard-wraps lines to `width` columns; continuation segments are marked.
 *
 * @since 0.1.0
 * @category utils
 */
export const wrap = (lines: ReadonlyArray<string>, width: number): ReadonlyArray<string> => {
  const w = Math.max(20, width - 4)
  const out: Array<string> = []
  for (const line of lines) {
    const chars = Array.from(line)
    if (chars.length === 0) out.push("  │ ")
    for (let i = 0; i < chars.length; i += w) out.push(`${i === 0 ? "  │ " : "  ┊ "}${chars.slice(i, i + w).join("")}`)
  }
  return out
}

/**
 * The default number of body lines shown before "N more lines".
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_LINES = 40

/**
 * What the prompt shows for one request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rendered {
  /** the question as shown first (possibly summarised) */
  readonly question: string
  /** every line of the call (for `v`) */
  readonly full: string
  /** body lines left out of `question` */
  readonly hidden: number
  /** the rule offered for "always allow" */
  readonly rule?: string
  /** the call asked about (for the log of answers) */
  readonly callId?: string
  readonly tool?: string
}

/**
 * Renders the question for a request.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (
  request: LoopApproval.ApprovalRequest,
  options: { readonly width?: number; readonly maxLines?: number; readonly rule?: string | undefined } = {}
): Rendered => {
  const body = wrap(bodyLines(request.name, request.arguments), options.width ?? 80)
  const max = options.maxLines ?? DEFAULT_MAX_LINES
  const shown = body.length > max ? body.slice(0, max - 1) : body
  const hidden = body.length - shown.length
  const reason = request.reason === undefined || request.reason === summarize(request.name, request.arguments)
    ? ""
    : ` (${oneLine(request.reason)})`
  const header = `Allow ${oneLine(request.name)}${reason}?`
  const choices = [
    "[y] yes once",
    ...(options.rule === undefined ? [] : [`[a] always allow ${neutralize(options.rule)} this session`, "[p] … and for this project"]),
    ...(hidden > 0 ? ["[v] view all"] : []),
    "[n] no"
  ].join("  ")
  const more = hidden > 0 ? [`  … ${hidden} more line${hidden === 1 ? "" : "s"} (answer v to view all)`] : []
  return {
    question: [header, ...shown, ...more, choices].join("\n"),
    full: [header, ...body].join("\n"),
    hidden,
    callId: request.callId,
    tool: request.name,
    ...(options.rule === undefined ? {} : { rule: options.rule })
  }
}

/**
 * The reason given to the model when a mutating call is denied in `deny` mode.
 *
 * @since 0.1.0
 * @category utils
 */
export const nonInteractiveReason = (name: string): string =>
  `tool "${name}" changes the workspace and needs the user's approval, but this session is not interactive; ` +
  `the call was not run (the user can allow such calls with --yes)`

/**
 * The `pre-execute` middleware of a mode (the legacy policy; the CLI uses `Policy/Permissions`).
 *
 * @since 0.1.0
 * @category listeners
 */
export const preExecute = (mode: Mode) =>
(
  input: ToolHooks.CallInfo,
  next: (input?: ToolHooks.CallInfo) => Effect.Effect<ToolHooks.PreExecuteDecision, unknown>
): Effect.Effect<ToolHooks.PreExecuteDecision, unknown> => {
  if (mode === "auto" || !requiresApproval(input.name)) return next()
  return Effect.map(next(), (downstream) => {
    if (downstream._tag !== "Allow") return downstream
    return mode === "ask"
      ? ToolHooks.PreExecuteDecision.Ask({ reason: summarize(input.name, input.arguments) })
      : ToolHooks.PreExecuteDecision.Deny({ reason: nonInteractiveReason(input.name) })
  })
}

/**
 * Installs the legacy policy's `pre-execute` listener on the tool runtime for the scope.
 *
 * @since 0.1.0
 * @category registration
 */
export const register = (mode: Mode): Effect.Effect<void, never, ToolRuntime.ToolRuntime | Scope.Scope> =>
  ToolRuntime.onPreExecute(preExecute(mode))

/**
 * A prompt's answer: `true` = allow once, `false` = reject, `undefined` = cancelled (end of input,
 * Ctrl-C), or "always allow the offered rule" for this session / project.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = boolean | undefined | "always-session" | "always-project"

/**
 * A prompt: asks the user about one call. `question` is the rendered, neutralised text (a prompt
 * that only understands yes/no may ignore `details`).
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = ((question: string, details?: Rendered) => Effect.Effect<Answer, LoopApproval.ApprovalError>) & {
  /** set by prompts that understand the "always allow" answers (`a`, `p`); others are offered yes/no only */
  readonly answersAlways?: boolean
}

/**
 * The `Loop/Approval` service answering through `prompt`. With the permission engine in context
 * and a prompt that `answersAlways`, the user may "always allow" the suggested rule; otherwise
 * only yes/no is offered.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  prompt: Prompt,
  options: { readonly width?: () => number; readonly maxLines?: number } = {}
): Layer.Layer<LoopApproval.Approval> =>
  Layer.effect(
    LoopApproval.Approval,
    Effect.map(Effect.all([Effect.serviceOption(Permissions.Permissions), Notice.Notice]), ([permissions, notice]) =>
      LoopApproval.Approval.of({
        ask: (request) =>
          Effect.gen(function*() {
            // a hard ask (protected configuration, an unknowable command) never offers "always"
            const rule = permissions._tag === "Some" && prompt.answersAlways === true
              ? yield* permissions.value.suggest(request.name, request.arguments)
              : undefined
            const rendered = render(request, {
              width: options.width?.() ?? 80,
              ...(options.maxLines === undefined ? {} : { maxLines: options.maxLines }),
              rule
            })
            const answer = yield* prompt(rendered.question, rendered)
            if (answer === undefined) return yield* new LoopApproval.ApprovalError({ message: INPUT_CLOSED })
            if (answer === true) return "allow-once" as const
            if (answer === false) return "reject" as const
            if (permissions._tag === "Some" && rule !== undefined) {
              yield* permissions.value.remember(rule, answer === "always-session" ? "session" : "project").pipe(
                Effect.catch((e) =>
                  notice(`the rule was not saved: ${e.message}`)
                )
              )
            }
            return "allow-once" as const
          })
      }))
  )

/**
 * Why a call is denied when the prompt's input ended (Ctrl-D, a closed pipe): the model reads it in the call's
 * error result.
 *
 * @since 0.1.0
 * @category constants
 */
export const INPUT_CLOSED = "no answer: input closed"
