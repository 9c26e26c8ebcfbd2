/**
 * Runs one command hook as a child process (HB-5, HB-6, HB-11): `/bin/sh -c <command>` in the
 * session's cwd, as the leader of its own process group, with the input JSON on stdin. On a
 * timeout, or when the running fiber is interrupted (the turn was cancelled), the whole group is
 * terminated (SIGTERM, then SIGKILL after a grace period).
 *
 * Output is captured up to 1 MiB per stream (the rest is dropped and the capture marked
 * truncated).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as ProcessGroup from "../Tools/internal/ProcessGroup.js"

/**
 * What to run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Command {
  readonly command: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly stdin: string
  readonly timeoutMs: number
  /** SIGTERM → SIGKILL grace when killing (default 1000 ms) */
  readonly graceMs?: number
}

/**
 * How the process ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface Raw {
  /** `null` when killed by a signal, timed out or never started */
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  /** set when the process could not be started */
  readonly spawnError?: string
  readonly durationMs: number
}

const MAX_CAPTURE = 1024 * 1024

/**
 * Runs the command to completion (or timeout). Never fails; interruption kills the group.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (cmd: Command): Effect.Effect<Raw> =>
  Effect.suspend(() => {
    const started = Date.now()
    const elapsed = () => Date.now() - started
    return Effect.acquireUseRelease(
      Effect.sync(() => {
        const child = ChildProcess.spawn("/bin/sh", ["-c", cmd.command], {
          cwd: cmd.cwd,
          env: cmd.env,
          detached: true,
          stdio: ["pipe", "pipe", "pipe"]
        })
        const out = { stdout: "", stderr: "", exited: false }
        child.stdout.setEncoding("utf8")
        child.stderr.setEncoding("utf8")
        child.stdout.on("data", (d: string) => {
          if (out.stdout.length < MAX_CAPTURE) out.stdout += d
        })
        child.stderr.on("data", (d: string) => {
          if (out.stderr.length < MAX_CAPTURE) out.stderr += d
        })
        child.stdin.on("error", () => {
          // a hook that does not read its input closes stdin early: EPIPE is expected
        })
        const closed = new Promise<{ readonly code: number | null; readonly error?: string }>((resolve) => {
          child.once("error", (e) => {
            out.exited = true
            resolve({ code: null, error: e.message })
          })
          child.once("close", (code) => {
            out.exited = true
            resolve({ code })
          })
        })
        child.stdin.end(cmd.stdin)
        return { child, out, closed }
      }),
      ({ closed, out }) =>
        Effect.promise(() => closed).pipe(
          Effect.map((r): Raw =>
            r.error === undefined
              ? { exitCode: r.code, stdout: out.stdout, stderr: out.stderr, timedOut: false, durationMs: elapsed() }
              : { exitCode: null, stdout: out.stdout, stderr: out.stderr, timedOut: false, spawnError: r.error, durationMs: elapsed() }
          ),
          Effect.timeoutOrElse({
            duration: cmd.timeoutMs,
            orElse: () =>
              Effect.sync((): Raw => ({ exitCode: null, stdout: out.stdout, stderr: out.stderr, timedOut: true, durationMs: elapsed() }))
          })
        ),
      ({ child, out }, exit) =>
        child.pid === undefined || (out.exited && exit._tag === "Success" && !exit.value.timedOut)
          ? Effect.void
          : Effect.asVoid(ProcessGroup.terminate(child.pid, cmd.graceMs ?? 1000))
    )
  })
