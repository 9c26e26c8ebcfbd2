/**
 * `!command` in the chat terminal UI (issue 34): runs the command with `sh -c` in the workspace,
 * as the user's own command (not sandboxed; the provider keys were already taken out of the
 * environment at start-up, `SecretEnv`), collects its output (stdout and stderr interleaved, the
 * last {@link MAX_OUTPUT_BYTES} kept, secret values replaced by `<redacted>` as in tool results)
 * and its exit status. Interrupting the effect (Esc, Ctrl-C) kills the command's process group.
 *
 * The chat shows the result and adds it to the session as model-visible context (`inject`, logged
 * as a `context/message` with `meta.shell`), as Claude Code's `!` mode does: the model reads what
 * the user ran before its next turn, and no turn starts.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import * as Scrub from "../../Tools/internal/Scrub.js"

/**
 * Output bytes kept (the tail).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_OUTPUT_BYTES = 64 * 1024

/**
 * What a command did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly command: string
  readonly output: string
  /** the exit code, `undefined` when a signal ended it */
  readonly exitCode: number | undefined
  readonly signal: string | undefined
  /** why it could not start (no shell) */
  readonly error: string | undefined
}

/**
 * Runs `command` in `cwd` (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (command: string, cwd: string): Effect.Effect<Result> =>
  Effect.gen(function*() {
    const result = yield* spawned(command, cwd)
    // secret values never reach the log or the model (as for the bash tool's results)
    const secrets = yield* Scrub.Secrets
    return { ...result, output: Scrub.scrubText(result.output, secrets.values().map(Redacted.value)).text }
  })

const spawned = (command: string, cwd: string): Effect.Effect<Result> =>
  Effect.callback<Result>((resume) => {
    const child = spawn("sh", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true })
    let output = Buffer.alloc(0)
    const collect = (chunk: Buffer) => {
      output = Buffer.concat([output, chunk])
      if (output.length > MAX_OUTPUT_BYTES) output = output.subarray(output.length - MAX_OUTPUT_BYTES)
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    let started = true
    child.on("error", (e) => {
      started = false
      resume(Effect.succeed({ command, output: "", exitCode: undefined, signal: undefined, error: e.message }))
    })
    child.on("close", (code, signal) => {
      if (!started) return
      resume(Effect.succeed({
        command,
        output: output.toString("utf8"),
        exitCode: code ?? undefined,
        signal: signal ?? undefined,
        error: undefined
      }))
    })
    return Effect.sync(() => {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL")
        } catch {
          child.kill("SIGKILL") // the group is gone already: the child alone
        }
      }
    })
  })

/**
 * The status line of a result: `exit 0`, `exit code 2`, `terminated by signal SIGINT`, or why it
 * could not start.
 *
 * @since 0.1.0
 * @category utils
 */
export const status = (result: Result): string =>
  result.error !== undefined
    ? `could not run: ${result.error}`
    : result.signal !== undefined
    ? `terminated by signal ${result.signal}`
    : result.exitCode === 0
    ? "exit 0"
    : `exit code ${result.exitCode}`

/**
 * The context the model reads: the command, its output and its status.
 *
 * @since 0.1.0
 * @category utils
 */
export const contextText = (result: Result): string =>
  [
    `The user ran a shell command in the workspace: ${result.command}`,
    "Output:",
    result.output.replace(/\n+$/, "") || "(no output)",
    `[${status(result)}]`
  ].join("\n")
