/**
 * The approval policy of the mutating built-in tools (`write`, `edit`, `bash`).
 *
 * Three modes, chosen by the CLI with {@link modeFor}:
 * - `"auto"` (`--yes`): mutating calls run without asking.
 * - `"ask"` (interactive TTY, no `--yes`): a `pre-execute` listener turns the downstream `Allow`
 *   for a mutating call into `Ask{reason}`; the loop's pipeline then puts it to the
 *   `Loop/Approval` service, which the CLI provides with {@link layer} and a prompt function
 *   (e.g. {@link terminalPrompt}). Only "yes" lets the call run (T-3).
 * - `"deny"` (non-interactive, no `--yes`): mutating calls are denied with a reason telling the
 *   model (and the user reading the log) that approval is impossible and how to allow them.
 *
 * The listener delegates first (L-36): a downstream `Deny` or `Ask` from other policy is kept, so
 * this policy can only tighten, never grant. Read-only tools are never affected.
 *
 * Decisions (DEC-10): the prompt shows one line per call (`bash: <command>`, `write <path> (N
 * bytes)`, `edit <path>`); any answer other than `y`/`yes` rejects; "always" answers are not offered
 * (a remembered policy belongs to the prompt). When the input ends (Ctrl-D) the call is denied with
 * {@link INPUT_CLOSED}, and so is every later call of the turn, which then completes and is saved.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as NodeReadline from "node:readline"
import type { Json } from "../../Llm/Json.js"
import * as LoopApproval from "../../Loop/Approval.js"
import * as ToolHooks from "../../Loop/ToolHooks.js"
import * as ToolRuntime from "../../Loop/ToolRuntime.js"

/**
 * The approval modes.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "auto" | "ask" | "deny"

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
  const flat = text.replace(/\s*\n\s*/g, " ⏎ ")
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/**
 * A one-line human summary of a call (used in prompts and reasons).
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
      return `write ${field(args, "file_path") ?? "?"}${content !== undefined ? ` (${Buffer.byteLength(content)} bytes)` : ""}`
    }
    case "edit":
      return `edit ${field(args, "file_path") ?? "?"}`
    default:
      return name
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
 * The `pre-execute` middleware of a mode.
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
 * Installs the policy's `pre-execute` listener on the tool runtime for the scope.
 *
 * @since 0.1.0
 * @category registration
 */
export const register = (mode: Mode): Effect.Effect<void, never, ToolRuntime.ToolRuntime | Scope.Scope> =>
  ToolRuntime.onPreExecute(preExecute(mode))

/**
 * A prompt: asks the user about one call; `true` = allow once, `false` = reject, `undefined` =
 * no answer (the input ended).
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = (question: string) => Effect.Effect<boolean | undefined, LoopApproval.ApprovalError>

/**
 * The `Loop/Approval` service answering through `prompt`. Provide it to `ToolRuntime.layer`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (prompt: Prompt): Layer.Layer<LoopApproval.Approval> =>
  LoopApproval.layer((request) =>
    Effect.flatMap(
      prompt(`Allow ${request.reason ?? summarize(request.name, request.arguments)}?`),
      (answer): Effect.Effect<LoopApproval.ApprovalDecision, LoopApproval.ApprovalError> =>
        answer === undefined
          ? Effect.fail(new LoopApproval.ApprovalError({ message: INPUT_CLOSED }))
          : Effect.succeed(answer ? "allow-once" : "reject")
    )
  )

/**
 * Why a call is denied when the prompt's input ended (Ctrl-D, a closed pipe): the model reads
 * it in the call's error result.
 *
 * @since 0.1.0
 * @category constants
 */
export const INPUT_CLOSED = "no answer: input closed"

/**
 * A minimal terminal prompt over a readable and a writable stream (e.g. `process.stdin` and
 * `process.stderr`): prints `<question> [y/N] ` and reads one line. Interruption closes the
 * prompt. A chat UI that owns the terminal should pass its own {@link Prompt} instead.
 *
 * @since 0.1.0
 * @category constructors
 */
export const terminalPrompt = (input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Prompt => (question) =>
  Effect.async<boolean | undefined>((resume) => {
    const rl = NodeReadline.createInterface({ input, output, terminal: false })
    let done = false
    const finish = (answer: boolean | undefined) => {
      if (done) return
      done = true
      rl.close()
      resume(Effect.succeed(answer))
    }
    rl.once("close", () => finish(undefined))
    // input that already ended never emits "close" again: answer at once
    if ((input as { readonly readableEnded?: boolean }).readableEnded === true) {
      finish(undefined)
      return Effect.void
    }
    rl.question(`${question} [y/N] `, (line) => finish(/^\s*y(es)?\s*$/i.test(line)))
    return Effect.sync(() => {
      done = true
      rl.close()
    })
  })
