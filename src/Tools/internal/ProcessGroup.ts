/**
 * Process-group signalling for the `bash` tool (POSIX).
 *
 * A command runs as the leader of its own process group (`detached: true`), so signalling `-pgid`
 * reaches the shell and everything it started (pipelines, background jobs, grandchildren), unless
 * a process deliberately left the group (`setsid`).
 *
 * Liveness: `kill(-pgid, 0)` also succeeds for zombies, and in containers whose PID 1 does not reap
 * orphans, killed grandchildren stay zombies forever. On Linux the group is therefore considered
 * alive only while `/proc` lists a member of the group that is not a zombie; elsewhere
 * `kill(-pgid, 0)` decides.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"

const errnoCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/**
 * Sends `signal` to the process group; `false` when the group no longer exists.
 *
 * @since 0.1.0
 * @category utils
 */
export const signal = (pgid: number, sig: NodeJS.Signals | 0): Effect.Effect<boolean> =>
  Effect.sync(() => {
    try {
      process.kill(-pgid, sig)
      return true
    } catch (e) {
      const code = errnoCode(e)
      if (code === "ESRCH") return false
      // EPERM: a member we may not signal; the group exists
      return code === "EPERM"
    }
  })

const procAvailable = (): boolean => {
  try {
    return NodeFs.statSync("/proc/self/stat").isFile()
  } catch {
    return false
  }
}

/**
 * Whether the process `pid` exists and is not a zombie (Linux `/proc`; elsewhere `kill(pid, 0)`).
 *
 * @since 0.1.0
 * @category utils
 */
export const isProcessAlive = (pid: number): boolean => {
  if (procAvailable()) {
    try {
      const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
      return state !== "Z" && state !== "X"
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errnoCode(e) === "EPERM"
  }
}

const liveMembersOnProc = (pgid: number): boolean => {
  let entries: Array<string>
  try {
    entries = NodeFs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = NodeFs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    // fields after "(comm) ": state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
  }
  return false
}

/**
 * Whether any non-zombie member of the group is alive.
 *
 * @since 0.1.0
 * @category utils
 */
export const isAlive = (pgid: number): Effect.Effect<boolean> =>
  Effect.flatMap(signal(pgid, 0), (exists) =>
    !exists ? Effect.succeed(false) : procAvailable() ? Effect.sync(() => liveMembersOnProc(pgid)) : Effect.succeed(true))

/**
 * Polls until the group is gone or `withinMs` elapsed; `true` when gone.
 *
 * @since 0.1.0
 * @category utils
 */
export const awaitGone = (pgid: number, withinMs: number, pollMs = 25): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    let waited = 0
    for (;;) {
      if (!(yield* isAlive(pgid))) return true
      if (waited >= withinMs) return false
      yield* Effect.sleep(pollMs)
      waited += pollMs
    }
  })

/**
 * Terminates the whole group: SIGTERM, then SIGKILL if members survive `graceMs`. Returns how it
 * ended: `"none"` (nothing was alive), `"term"` or `"kill"`.
 *
 * @since 0.1.0
 * @category utils
 */
export const terminate = (pgid: number, graceMs: number): Effect.Effect<"none" | "term" | "kill"> =>
  Effect.gen(function*() {
    if (!(yield* isAlive(pgid))) return "none" as const
    yield* signal(pgid, "SIGTERM")
    if (yield* awaitGone(pgid, graceMs)) return "term" as const
    yield* signal(pgid, "SIGKILL")
    const gone = yield* awaitGone(pgid, 5000)
    if (!gone) yield* Effect.logWarning(`process group ${pgid} survived SIGKILL`)
    return "kill" as const
  })
