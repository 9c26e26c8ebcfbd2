/**
 * How the process is asked to stop, as Effect values (the CLI edge owns the process signals and
 * the standard streams).
 *
 * - {@link listen} turns SIGINT, SIGTERM, SIGHUP and a closed stdout (EPIPE, e.g. `harness run … |
 *   head -c 1`) into {@link Stop}s on a queue for the scope's lifetime. A command takes the first
 *   one and cancels its turn by interruption, so tool process groups are killed, the session is
 *   flushed and the lock released before the process exits with {@link exitCode}.
 * - {@link armHardExit}: once a command shuts down, a further SIGINT/SIGTERM/SIGHUP exits at once
 *   (the user insists). The log stays repairable (every batch was written whole); the direct
 *   children's process groups get SIGKILL first, best effort, so no tool keeps running.
 * - {@link installStreamGuards} (once, by `Program`): a closed stdout marks it closed
 *   ({@link stdoutOpen}) and is reported to the listeners; with no listener (e.g. `sessions list |
 *   head -1`) the process exits 141 at once (nothing to save). A closed stderr (a terminal gone
 *   after SIGHUP) is remembered and never crashes the process.
 *
 * Decisions (DEC-10): exit codes follow the shell convention 128 + signal number (SIGHUP 129,
 * SIGINT 130, SIGPIPE 141 for a closed stdout, SIGTERM 143), whether or not the turn finished
 * before the cancellation took effect: the caller asked the process to stop, or could not read
 * the answer.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import { ExitCode } from "./ExitCode.js"

/**
 * The signals a command handles.
 *
 * @since 0.1.0
 * @category models
 */
export type SignalName = "SIGINT" | "SIGTERM" | "SIGHUP"

/**
 * Why the process must stop.
 *
 * @since 0.1.0
 * @category models
 */
export type Stop =
  | { readonly _tag: "Signal"; readonly signal: SignalName }
  | { readonly _tag: "StdoutClosed" }

/**
 * The exit code of a stop.
 *
 * @since 0.1.0
 * @category utils
 */
export const exitCode = (stop: Stop): ExitCode => {
  if (stop._tag === "StdoutClosed") return ExitCode.StdoutClosed
  switch (stop.signal) {
    case "SIGINT":
      return ExitCode.Cancelled
    case "SIGTERM":
      return ExitCode.Terminated
    case "SIGHUP":
      return ExitCode.HangUp
  }
}

/**
 * The cancellation reason recorded in the log (`turn/end aborted`) for a stop.
 *
 * @since 0.1.0
 * @category utils
 */
export const reason = (stop: Stop): string => {
  if (stop._tag === "StdoutClosed") return "the output was closed (EPIPE)"
  switch (stop.signal) {
    case "SIGINT":
      return "interrupted by the user (SIGINT)"
    case "SIGTERM":
      return "terminated (SIGTERM)"
    case "SIGHUP":
      return "the terminal hung up (SIGHUP)"
  }
}

// process-wide stream state: written by the stream guards, read by the sinks and listeners
const streams = {
  stdoutClosed: false,
  stderrClosed: false,
  hardExit: false,
  listeners: new Set<(stop: Stop) => void>()
}

/**
 * `false` once stdout was found closed (nothing more is written to it).
 *
 * @since 0.1.0
 * @category utils
 */
export const stdoutOpen = (): boolean => !streams.stdoutClosed

/**
 * `false` once stderr was found closed.
 *
 * @since 0.1.0
 * @category utils
 */
export const stderrOpen = (): boolean => !streams.stderrClosed

const errnoCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

// the errors of a stream whose reader is gone: a pipe closed early, a terminal hung up
const closedCodes = new Set(["EPIPE", "EIO", "ECONNRESET", "ERR_STREAM_DESTROYED"])

/**
 * Installs the stdout/stderr error handlers (once per process, by `Program`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const installStreamGuards = (): void => {
  process.stdout.on("error", (error) => {
    if (!closedCodes.has(errnoCode(error) ?? "")) throw error
    if (streams.stdoutClosed) return
    streams.stdoutClosed = true
    if (streams.listeners.size === 0) process.exit(ExitCode.StdoutClosed)
    for (const listener of streams.listeners) listener({ _tag: "StdoutClosed" })
  })
  process.stderr.on("error", (error) => {
    if (!closedCodes.has(errnoCode(error) ?? "")) throw error
    streams.stderrClosed = true
  })
}

// best effort, Linux: SIGKILL the process group of every direct child (the bash tool runs each
// command as the leader of its own group), else the child itself
const killChildren = (): void => {
  let entries: Array<string>
  try {
    entries = NodeFs.readdirSync("/proc")
  } catch {
    return
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = NodeFs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[1]) !== process.pid) continue
      const pid = Number(entry)
      process.kill(Number(fields[2]) === pid ? -pid : pid, "SIGKILL")
    } catch {
      // gone meanwhile, or not ours to signal: nothing more to do at a hard exit
    }
  }
}

/**
 * From now on a further SIGINT/SIGTERM/SIGHUP exits at once with its code (after SIGKILL to the
 * children's process groups) instead of waiting for the shutdown to settle.
 *
 * @since 0.1.0
 * @category utils
 */
export const armHardExit: Effect.Effect<void> = Effect.sync(() => {
  streams.hardExit = true
})

const signalNames: ReadonlyArray<SignalName> = ["SIGINT", "SIGTERM", "SIGHUP"]

/**
 * A queue receiving one {@link Stop} per signal in `signals` (default: all three) and one when
 * stdout closes, while the scope is open. After {@link armHardExit}, a signal exits at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listen = (
  signals: ReadonlyArray<SignalName> = signalNames
): Effect.Effect<Queue.Dequeue<Stop>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Stop>()
    const offer = (stop: Stop) => {
      if (stop._tag === "Signal" && streams.hardExit) {
        killChildren()
        process.exit(exitCode(stop))
      }
      Queue.offerUnsafe(queue, stop)
    }
    const handlers = signals.map((signal) => [signal, () => offer({ _tag: "Signal", signal })] as const)
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        for (const [signal, handler] of handlers) process.on(signal, handler)
        streams.listeners.add(offer)
        if (streams.stdoutClosed) offer({ _tag: "StdoutClosed" })
      }),
      () =>
        Effect.sync(() => {
          for (const [signal, handler] of handlers) process.off(signal, handler)
          streams.listeners.delete(offer)
        })
    )
    return queue
  })
