/**
 * The `bash` tool's sandbox on Linux: bubblewrap (`bwrap`), decision 0010.
 *
 * Inside: the whole file system read-only (`--ro-bind / /`), the workspace and the temp directory
 * writable (`--bind`), well-known credential directories of the home directory hidden (an empty
 * tmpfs over `~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.config/gh`, …), a private `/dev` and its own
 * `/proc` in new PID, IPC, UTS, cgroup and user namespaces (no process of the host, the CLI
 * included, is visible, so `/proc/$PPID/environ` shows only the sandbox's init, whose environment
 * is the allowlisted one), a new network namespace (loopback only) unless the network is allowed,
 * a new session (no controlling terminal to inject keystrokes into) and `--die-with-parent`.
 *
 * Availability is probed once per process by running `true` in the same sandbox; where bwrap is
 * missing or cannot create namespaces, the reason is returned and the caller falls back to running
 * unsandboxed with the allowlisted environment.
 *
 * @since 0.1.0
 */
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/**
 * The sandbox policy of the `bash` tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /** run under bwrap where available (`--no-sandbox` turns it off) */
  readonly enabled: boolean
  /** keep the host network (`--allow-network`) */
  readonly allowNetwork: boolean
}

/**
 * The default policy: sandboxed, no network.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPolicy: Policy = { enabled: true, allowNetwork: false }

/**
 * The bwrap executable name.
 *
 * @since 0.1.0
 * @category constants
 */
export const BWRAP = "bwrap"

/**
 * Home-relative paths hidden inside the sandbox when they exist.
 *
 * @since 0.1.0
 * @category constants
 */
export const HIDDEN_HOME_PATHS: ReadonlyArray<string> = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".azure",
  ".kube",
  ".docker",
  ".config/gh",
  ".config/gcloud",
  ".netrc",
  ".npmrc",
  ".git-credentials"
]

/**
 * The bwrap arguments (before `--` and the command) for a workspace.
 *
 * @since 0.1.0
 * @category constructors
 */
export const args = (policy: Policy, workspace: string, home: string | undefined = process.env.HOME): Array<string> => {
  const tmp = realOr(NodeOs.tmpdir())
  const out = [
    "--die-with-parent",
    "--new-session",
    "--unshare-all",
    ...(policy.allowNetwork ? ["--share-net"] : []),
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc"
  ]
  if (home !== undefined && home !== "" && home !== "/") {
    for (const rel of HIDDEN_HOME_PATHS) {
      const path = NodePath.join(home, rel)
      let info: NodeFs.Stats
      try {
        info = NodeFs.lstatSync(path)
      } catch {
        continue
      }
      if (info.isDirectory()) out.push("--tmpfs", path)
      else if (info.isFile()) out.push("--ro-bind", "/dev/null", path)
    }
  }
  out.push("--bind", tmp, tmp, "--bind", workspace, workspace, "--chdir", workspace)
  return out
}

const realOr = (path: string): string => {
  try {
    return NodeFs.realpathSync(path)
  } catch {
    return path
  }
}

/**
 * Whether the sandbox works here: `available`, or the reason it does not.
 *
 * @since 0.1.0
 * @category models
 */
export type Availability = { readonly available: true } | { readonly available: false; readonly reason: string }

let probed: Availability | undefined

/**
 * Probes once per process whether bwrap can run a command in the sandbox (workspace: the temp
 * directory).
 *
 * @since 0.1.0
 * @category utils
 */
export const availability = (): Availability => {
  if (probed !== undefined) return probed
  if (process.platform !== "linux") {
    probed = { available: false, reason: `the sandbox needs Linux (this is ${process.platform})` }
    return probed
  }
  const result = ChildProcess.spawnSync(BWRAP, [...args(defaultPolicy, realOr(NodeOs.tmpdir())), "--", "true"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }
  })
  if (result.error !== undefined) {
    const code = (result.error as NodeJS.ErrnoException).code
    probed = {
      available: false,
      reason: code === "ENOENT" ? "bubblewrap (bwrap) is not installed" : `bwrap cannot start: ${result.error.message}`
    }
  } else if (result.status !== 0) {
    const detail = result.stderr.toString().trim().split("\n")[0] ?? ""
    probed = { available: false, reason: `bwrap cannot create its namespaces here${detail === "" ? "" : ` (${detail})`}` }
  } else {
    probed = { available: true }
  }
  return probed
}

let announced = false

/**
 * Says once per process on stderr that commands run unsandboxed, when the policy asks for the
 * sandbox and it is unavailable.
 *
 * @since 0.1.0
 * @category utils
 */
export const announceFallback = (policy: Policy): void => {
  if (!policy.enabled || announced) return
  const a = availability()
  if (a.available) return
  announced = true
  process.stderr.write(
    `effect-harness: bash runs unsandboxed: ${a.reason}; commands get a filtered environment only (install bubblewrap, or pass --no-sandbox to silence this)\n`
  )
}
