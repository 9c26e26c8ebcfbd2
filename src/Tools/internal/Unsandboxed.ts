/**
 * Hardening of `bash` commands run without the sandbox (`--no-sandbox`, or no bubblewrap; issue 26).
 *
 * - **No core dumps**: the script starts with `ulimit -c 0` (soft and hard limit 0), so a crash
 *   of the command writes no core file into the workspace, and the command cannot raise the hard
 *   limit again. When the harness runs with `CAP_SYS_RESOURCE` (root), which could raise it,
 *   `setpriv` drops that capability from the command's bounding and inheritable sets (it needs
 *   `CAP_SETPCAP`, which root has).
 * - **Parent-death signal**: the shell is started through util-linux `setpriv --pdeathsig KILL`
 *   when it is on `PATH`, so it dies with the harness even on SIGKILL. Without `setpriv` the
 *   command starts without one (nothing is said: the watcher below still covers the group).
 * - **Group watcher**: a small `sh` outside the command's group reads a pipe only the harness
 *   holds; when the harness dies (any signal, SIGKILL included) the pipe reaches end of file and
 *   the watcher sends SIGKILL to the command's whole process group. While the harness lives, the
 *   watcher is killed when the command is over. A process that left the group (`setsid`) is not
 *   reached.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * The line that turns core dumps off (soft and hard limit), first in every unsandboxed script.
 *
 * @since 0.1.0
 * @category constants
 */
export const NO_CORE_DUMPS = "ulimit -c 0"

const CAP_SETPCAP = 8n
const CAP_SYS_RESOURCE = 24n

/** whether this process's effective capabilities include `cap` (Linux; `false` elsewhere) */
const hasCapability = (cap: bigint): boolean => {
  try {
    const status = NodeFs.readFileSync("/proc/self/status", "utf8")
    const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1]
    return hex !== undefined && ((BigInt(`0x${hex}`) >> cap) & 1n) === 1n
  } catch {
    return false
  }
}

const findOnPath = (name: string, path: string | undefined): string | undefined => {
  for (const dir of (path ?? "").split(":")) {
    if (!NodePath.isAbsolute(dir)) continue
    const candidate = NodePath.join(dir, name)
    try {
      NodeFs.accessSync(candidate, NodeFs.constants.X_OK)
      return candidate
    } catch {
      // not here: next PATH entry
    }
  }
  return undefined
}

/**
 * The executable and arguments that run `shell -c script` unsandboxed: through `setpriv` (parent-
 * death signal, and no `CAP_SYS_RESOURCE` when the harness has it) when `setpriv` is on `path`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = (shell: string, script: string, path: string | undefined): readonly [string, Array<string>] => {
  const setpriv = process.platform === "linux" ? findOnPath("setpriv", path) : undefined
  if (setpriv === undefined) return [shell, ["-c", script]]
  const dropResource = hasCapability(CAP_SYS_RESOURCE) && hasCapability(CAP_SETPCAP)
    ? ["--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource"]
    : []
  return [setpriv, ["--pdeathsig", "KILL", ...dropResource, "--", shell, "-c", script]]
}

/**
 * Starts the group watcher for `pgid` for the scope: on the harness's death it kills the group;
 * at scope close it is killed itself. A watcher that cannot start is a defect-free no-op (the
 * parent-death signal still covers the shell).
 *
 * @since 0.1.0
 * @category resources
 */
export const watch = (pgid: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      if (pgid <= 0 || process.platform === "win32") return undefined
      const watcher = ChildProcess.spawn("/bin/sh", ["-c", "read -r _; kill -s KILL -- \"-$1\"", "sh", String(pgid)], {
        detached: true,
        stdio: ["pipe", "ignore", "ignore"]
      })
      watcher.on("error", () => {
        // no /bin/sh: the shell's parent-death signal is what remains
      })
      watcher.stdin?.on("error", () => {
        // the watcher is gone: nothing to tell it
      })
      watcher.unref()
      return watcher
    }),
    (watcher) =>
      Effect.sync(() => {
        if (watcher === undefined || watcher.pid === undefined) return
        try {
          process.kill(watcher.pid, "SIGKILL")
        } catch {
          // already exited
        }
        watcher.stdin?.destroy()
      })
  )
