/**
 * The `bash` tool: runs a command with `bash -c` in the workspace root.
 *
 * - The command runs in its OWN process group (`detached: true`); stdin is `/dev/null`; stdout and
 *   stderr go to one pipe (the script starts with `exec 2>&1`), so they are captured truly
 *   interleaved.
 * - Timeout: `timeout_ms` (default {@link DEFAULT_TIMEOUT_MS}, clamped to
 *   {@link MAX_TIMEOUT_MS}). On timeout the whole group gets SIGTERM, then SIGKILL after a grace
 *   period, and the call fails with `COMMAND_TIMEOUT` whose message says so and carries the
 *   output captured so far.
 * - Cancellation is interruption (DEC-1): the scope's finalizer terminates the whole group the same
 *   way and waits for it, so the body reaches quiescence before the loop records the result.
 * - Output is capped: the first and last halves of {@link MAX_OUTPUT_BYTES} are kept with a notice
 *   of how many bytes were omitted in between.
 *
 * Decisions (DEC-10):
 * - A non-zero exit status is a normal (non-error) result ending with `[exit code: N]`: the output
 *   of a failing command is what the model needs. Death by signal reads `[terminated by signal X]`.
 * - When the shell exits, processes it left running in its group (background jobs not waited for)
 *   are terminated too, so the call returns and nothing leaks. A process that wants to outlive the
 *   call must leave the group (`setsid`, `nohup setsid …`).
 * - The environment is NOT inherited: it is built from an allowlist (`PATH`, `HOME`, `LANG`,
 *   `LC_*`, `TERM`, `TMPDIR`, `USER`, `SHELL`, …, see `internal/ChildEnv`) plus the variables the
 *   user lists (`EFFECT_HARNESS_PASS_ENV`); provider keys are never passed.
 * - Sandbox (issue 16, decision 0010): on Linux the command runs under bubblewrap (see
 *   `Sandbox`): workspace writable, a private `/tmp`, the rest read-only, the harness's
 *   configuration read-only, credentials hidden, its own `/proc` and PID namespace, no network
 *   unless allowed. Where bwrap is unavailable the command runs unsandboxed (said once on stderr
 *   by the CLI), hardened by `internal/Unsandboxed` (no core dumps, killed with the harness);
 *   `meta.sandboxed` records which.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as ChildEnv from "./internal/ChildEnv.js"
import { OutputCapture } from "./internal/OutputCapture.js"
import type { Outcome } from "./internal/Outcome.js"
import * as Placeholders from "./Placeholders.js"
import * as ProcessGroup from "./internal/ProcessGroup.js"
import * as Sandbox from "./Sandbox.js"
import * as Unsandboxed from "./internal/Unsandboxed.js"
import * as ToolError from "./ToolError.js"
import * as Workspace from "./Workspace.js"
import * as Tool from "../Loop/Tool.js"

/**
 * Default timeout (120 s).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_MS = 120_000

/**
 * Largest accepted timeout (600 s).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_TIMEOUT_MS = 600_000

/**
 * Output cap (32 KiB: 16 KiB head + 16 KiB tail).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_OUTPUT_BYTES = 32 * 1024

/**
 * Grace period between SIGTERM and SIGKILL.
 *
 * @since 0.1.0
 * @category constants
 */
export const KILL_GRACE_MS = 2_000

/**
 * The variable listing extra environment variables to pass to commands (comma- or
 * space-separated names).
 *
 * @since 0.1.0
 * @category constants
 */
export const PASS_ENV_VARIABLE = "EFFECT_HARNESS_PASS_ENV"

/**
 * The names listed in {@link PASS_ENV_VARIABLE}.
 *
 * @since 0.1.0
 * @category utils
 */
export const passEnvFromEnvironment = (env: NodeJS.ProcessEnv = process.env): ReadonlyArray<string> =>
  (env[PASS_ENV_VARIABLE] ?? "").split(/[\s,]+/).filter((n) => n !== "")

/**
 * The tool name.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "bash"

/**
 * The tool description shown to the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const description =
  "Run a shell command with bash in the workspace root and return its combined stdout/stderr and exit code. " +
  `Default timeout ${DEFAULT_TIMEOUT_MS / 1000}s (max ${MAX_TIMEOUT_MS / 1000}s); long output is truncated in the middle. ` +
  "Stdin is empty; background processes are stopped when the command finishes."

/**
 * The parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = Schema.Struct({
  command: Schema.String.annotate({ description: "The bash command line to run" }),
  timeout_ms: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: `Timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS})`
    })
  )
})

/**
 * Decoded parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Params = typeof parameters.Type

/**
 * Tunables (tests shorten them).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly defaultTimeoutMs: number
  readonly maxTimeoutMs: number
  readonly maxOutputBytes: number
  readonly killGraceMs: number
  /** the shell executable (default `bash`) */
  readonly shell: string
  /** variables passed in addition to the allowlist (never a provider key) */
  readonly passEnv: ReadonlyArray<string>
  /** the sandbox policy */
  readonly sandbox: Sandbox.Policy
  /** the host environment commands and the sandbox start from (default: this process's) */
  readonly environment?: Sandbox.Environment
}

/**
 * The default tunables.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = {
  defaultTimeoutMs: DEFAULT_TIMEOUT_MS,
  maxTimeoutMs: MAX_TIMEOUT_MS,
  maxOutputBytes: MAX_OUTPUT_BYTES,
  killGraceMs: KILL_GRACE_MS,
  shell: "bash",
  passEnv: passEnvFromEnvironment(),
  sandbox: Sandbox.defaultPolicy
}

interface ExitInfo {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

interface Running {
  readonly child: ChildProcess.ChildProcess
  readonly pgid: number
  readonly exited: Deferred.Deferred<ExitInfo, ToolError.BuiltinToolError>
  readonly closed: Deferred.Deferred<void>
}

const script = (command: string, sandboxed: boolean): string =>
  sandboxed ? `exec 2>&1\n${command}` : `exec 2>&1\n${Unsandboxed.NO_CORE_DUMPS}\n${command}`

/** whether the shell can be found */
const shellExists = (shell: string, path: string | undefined): boolean => {
  const candidates = shell.includes("/")
    ? [shell]
    : (path ?? "").split(":").filter((d) => d !== "").map((d) => NodePath.join(d, shell))
  return candidates.some((c) => {
    try {
      NodeFs.accessSync(c, NodeFs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

const spawn = (
  command: string,
  cwd: string,
  options: Options,
  capture: OutputCapture,
  sandbox: { readonly readOnly: ReadonlyArray<string> } | undefined,
  idempotencyKey: string | undefined
) =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<ExitInfo, ToolError.BuiltinToolError>()
    const closed = yield* Deferred.make<void>()
    const environment = options.environment ?? Sandbox.currentEnvironment()
    const env = ChildEnv.build(environment.env, options.passEnv)
    // bwrap and setpriv would report a missing shell as command output
    if (!shellExists(options.shell, env.PATH)) {
      return yield* Effect.fail(ToolError.make("SPAWN_FAILED", `cannot start ${options.shell}: not found`))
    }
    const [file, argv] = sandbox !== undefined
      ? [Sandbox.BWRAP, [
        ...Sandbox.args(options.sandbox, cwd, environment, sandbox.readOnly),
        "--",
        options.shell,
        "-c",
        script(command, true)
      ]]
      : Unsandboxed.command(options.shell, script(command, false), env.PATH)
    const child = yield* Effect.try({
      try: () =>
        ChildProcess.spawn(file, argv, {
          cwd,
          // the call's key (DEC-16): a command that can be idempotent recognises a re-run of its call
          env: idempotencyKey === undefined ? env : { ...env, HARNESS_IDEMPOTENCY_KEY: idempotencyKey },
          detached: true,
          stdio: ["ignore", "pipe", "ignore"]
        }),
      catch: (e) =>
        ToolError.make("SPAWN_FAILED", `cannot start ${options.shell}: ${e instanceof Error ? e.message : String(e)}`)
    })
    child.on("error", (e) => {
      Deferred.doneUnsafe(exited, Exit.fail(ToolError.make("SPAWN_FAILED", `cannot start ${options.shell}: ${e.message}`)))
      Deferred.doneUnsafe(closed, Exit.void)
    })
    child.on("exit", (code, signal) => Deferred.doneUnsafe(exited, Exit.succeed({ code, signal })))
    child.on("close", () => Deferred.doneUnsafe(closed, Exit.void))
    child.stdout?.on("data", (chunk: Buffer) => capture.push(chunk))
    return { child, pgid: child.pid ?? -1, exited, closed } satisfies Running
  })

/**
 * Terminates everything left in the group, then waits (bounded) for the pipe to drain and close.
 */
const finish = (running: Running, graceMs: number) =>
  Effect.gen(function*() {
    if (running.pgid > 0) yield* ProcessGroup.terminate(running.pgid, graceMs)
    // interruptible: this runs in finalizers, where an uninterruptible wait would ignore the timeout
    // and hang on a detached process (`setsid … &`) that keeps the pipe open
    const drained = yield* Effect.timeoutOption(Effect.interruptible(Deferred.await(running.closed)), Duration.millis(500))
    if (Option.isNone(drained)) {
      // a process outside the group still holds the pipe: stop reading
      yield* Effect.sync(() => running.child.stdout?.destroy())
    }
  })

const render = (capture: OutputCapture): string => {
  const text = capture.render()
  return text === "" ? "(no output)" : text.endsWith("\n") ? text.slice(0, -1) : text
}

/**
 * Runs `bash` with the given tunables.
 *
 * @since 0.1.0
 * @category execution
 */
export const runWith = (options: Options) =>
  Effect.fn("Bash.run")(function*(params: Params, idempotencyKey?: string) {
    const workspace = yield* Workspace.Workspace
    const timeoutMs = Math.min(params.timeout_ms ?? options.defaultTimeoutMs, options.maxTimeoutMs)
    const half = Math.floor(options.maxOutputBytes / 2)
    const capture = new OutputCapture(half, options.maxOutputBytes - half)
    return yield* Effect.scoped(
      Effect.gen(function*() {
        const sandboxed = options.sandbox.enabled && Sandbox.availability().available
        const environment = options.environment ?? Sandbox.currentEnvironment()
        const sandbox = sandboxed
          ? { readOnly: yield* Placeholders.acquire(Sandbox.readOnlyTargets(workspace.root, environment)) }
          : undefined
        const running = yield* Effect.acquireRelease(
          spawn(params.command, workspace.root, { ...options, environment }, capture, sandbox, idempotencyKey),
          (r) => finish(r, options.killGraceMs)
        )
        if (!sandboxed) yield* Unsandboxed.watch(running.pgid)
        const exit = yield* Effect.timeoutOption(Deferred.await(running.exited), Duration.millis(timeoutMs))
        if (Option.isNone(exit)) {
          yield* finish(running, options.killGraceMs)
          return yield* Effect.fail(
            ToolError.make(
              "COMMAND_TIMEOUT",
              `command timed out after ${timeoutMs}ms; its process group was killed. Output before the timeout:\n${
                render(capture)
              }`
            )
          )
        }
        yield* finish(running, options.killGraceMs)
        const { code, signal } = exit.value
        const status = signal !== null ? `[terminated by signal ${signal}]` : `[exit code: ${code ?? "unknown"}]`
        return {
          content: [{ type: "text", text: `${render(capture)}\n${status}` }],
          meta: {
            command: params.command,
            exitCode: code,
            signal,
            outputBytes: capture.total,
            truncated: capture.truncated,
            sandboxed
          }
        } satisfies Outcome
      })
    )
  })

/**
 * Runs `bash` with {@link defaultOptions}.
 *
 * @since 0.1.0
 * @category execution
 */
export const run = runWith(defaultOptions)

/**
 * The `bash` tool with the given tunables (mutating: needs approval, see `Approval`; never
 * concurrency-safe).
 *
 * @since 0.1.0
 * @category tools
 */
export const makeTool = (options: Options = defaultOptions): Tool.Tool<Workspace.Workspace> =>
  Tool.make({
    name,
    description,
    parameters,
    presentCall: (args) => ({ card: "terminal", title: "bash", command: args.command }),
    presentResult: (args, result) => {
      const meta = result.meta
      const exitCode = typeof meta === "object" && meta !== null && !Array.isArray(meta) &&
          typeof (meta as { exitCode?: unknown }).exitCode === "number"
        ? (meta as { exitCode: number }).exitCode
        : undefined
      const first = result.content[0]
      const output = first !== undefined && first.type === "text" ? first.text : undefined
      return {
        card: "terminal",
        title: "bash",
        command: args.command,
        ...(output !== undefined ? { output } : {}),
        ...(exitCode !== undefined ? { exitCode } : {})
      }
    },
    effects: "side-effecting",
    execute: (args, context) => runWith(options)(args, context.idempotencyKey)
  })

/**
 * The `bash` tool with {@link defaultOptions}.
 *
 * @since 0.1.0
 * @category tools
 */
export const tool: Tool.Tool<Workspace.Workspace> = makeTool()
