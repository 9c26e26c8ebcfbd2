/**
 * The `bash` tool's sandbox on Linux: bubblewrap (`bwrap`), decision 0010.
 *
 * Inside: the whole file system read-only (`--ro-bind / /`); `/tmp`, `/var/tmp`, `/run`,
 * `$XDG_RUNTIME_DIR` and `$TMPDIR` replaced by private tmpfs (no host path socket: tmux,
 * ssh-agent, Docker, D-Bus, X11; issue 26); the workspace writable; the harness's configuration in
 * the workspace read-only (`Tools/ProtectedPaths`, placeholders for absent paths: see
 * `Placeholders`); credential paths of `$HOME` and the passwd home hidden last, links followed; a
 * private `/dev` and its own `/proc` in new PID, IPC, UTS, cgroup and user namespaces (no process
 * of the host, the CLI included, is visible), a new network namespace (loopback only) unless the
 * network is allowed, a new session (no controlling terminal to inject keystrokes into) and
 * `--die-with-parent`. See {@link args} for the mount order.
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
import * as ProtectedPaths from "./ProtectedPaths.js"
import type * as Placeholders from "./Placeholders.js"

const PLACEHOLDER_NOTE = "# placeholder of effect-harness while a sandboxed command runs; removed when it ends\n"

const MCP_PLACEHOLDER = `{ "mcpServers": {} }\n`

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
 * Home-relative credential paths hidden inside the sandbox when they exist (an empty tmpfs over a
 * directory, `/dev/null` over a file; a symbolic link's target is hidden).
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
  ".docker/config.json",
  ".config/gh",
  ".config/hub",
  ".config/glab-cli",
  ".config/gcloud",
  ".config/op",
  ".config/git/credentials",
  ".config/rclone",
  ".config/sops",
  ".config/doctl",
  ".config/composer/auth.json",
  ".composer/auth.json",
  ".local/share/keyrings",
  ".password-store",
  ".netrc",
  ".authinfo",
  ".authinfo.gpg",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".terraform.d",
  ".terraformrc",
  ".vault-token",
  ".pgpass",
  ".my.cnf",
  ".s3cfg",
  ".boto",
  ".oci",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  ".gradle/gradle.properties",
  ".nuget/NuGet/NuGet.Config",
  ".mozilla",
  ".config/google-chrome",
  ".config/chromium",
  ".config/BraveSoftware",
  ".claude/.credentials.json",
  ".codex/auth.json",
  ".config/configstore",
  ".cache/huggingface/token",
  ".huggingface/token",
  ".kaggle/kaggle.json",
  ".pulumi/credentials.json"
]

/**
 * Home-relative files that run code at the next login or shell start. When the workspace
 * contains a home directory they are read-only inside the sandbox, created as placeholders when
 * missing (a missing `.bash_profile` / `.bash_login` placeholder sources what bash would have
 * read without it).
 *
 * @since 0.1.0
 * @category constants
 */
export const SHELL_STARTUP_PATHS: ReadonlyArray<Omit<Placeholders.Target, "base">> = [
  { relative: ".bashrc", kind: "file", content: PLACEHOLDER_NOTE },
  { relative: ".profile", kind: "file", content: PLACEHOLDER_NOTE },
  {
    relative: ".bash_profile",
    kind: "file",
    content: `${PLACEHOLDER_NOTE}if [ -r ~/.bash_login ]; then . ~/.bash_login; elif [ -r ~/.profile ]; then . ~/.profile; fi\n`
  },
  { relative: ".bash_login", kind: "file", content: `${PLACEHOLDER_NOTE}if [ -r ~/.profile ]; then . ~/.profile; fi\n` },
  { relative: ".bash_logout", kind: "file", content: PLACEHOLDER_NOTE },
  { relative: ".zshrc", kind: "file", content: PLACEHOLDER_NOTE },
  { relative: ".zprofile", kind: "file", content: PLACEHOLDER_NOTE },
  { relative: ".zshenv", kind: "file", content: PLACEHOLDER_NOTE },
  { relative: ".zlogin", kind: "file", content: PLACEHOLDER_NOTE },
  { relative: ".config/fish", kind: "directory" },
  { relative: ".ssh", kind: "directory" },
  { relative: ".ssh/authorized_keys", kind: "file" }
]

/**
 * What the sandbox reads of the host: the variables (`HOME`, `TMPDIR`, `XDG_RUNTIME_DIR`, `PATH`,
 * the socket variables) and the passwd home directory.
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly passwdHome: string | undefined
}

/**
 * This process's environment and passwd home.
 *
 * @since 0.1.0
 * @category constructors
 */
export const currentEnvironment = (): Environment => ({ env: process.env, passwdHome: passwdHome() })

const passwdHome = (): string | undefined => {
  try {
    return NodeOs.userInfo().homedir
  } catch {
    // no passwd entry for this uid (containers): only $HOME is known
    return undefined
  }
}

const within = (path: string, dir: string): boolean =>
  path === dir || dir === "/" || path.startsWith(`${dir}/`)

const statOf = (path: string): NodeFs.Stats | undefined => {
  try {
    return NodeFs.statSync(path)
  } catch {
    return undefined
  }
}

/**
 * The home directories to protect: `$HOME` and the passwd home, as given and as real paths
 * (`/` and relative values ignored).
 *
 * @since 0.1.0
 * @category utils
 */
export const homes = (environment: Environment): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const home of [environment.env.HOME, environment.passwdHome]) {
    if (home === undefined || !NodePath.isAbsolute(home)) continue
    for (const path of [NodePath.resolve(home), realOr(home)]) if (path !== "/") out.add(path)
  }
  return [...out]
}

/**
 * The paths that must stay read-only in the sandbox: the workspace's configuration
 * (`ProtectedPaths.WORKSPACE_CONFIG_PATHS`; the `.git/…` ones only when `.git` is a directory)
 * and, when the workspace contains a home directory, that home's shell start-up files.
 *
 * @since 0.1.0
 * @category utils
 */
export const readOnlyTargets = (workspace: string, environment: Environment): ReadonlyArray<Placeholders.Target> => {
  const gitIsDirectory = (() => {
    try {
      const info = NodeFs.lstatSync(NodePath.join(workspace, ".git"))
      return info.isDirectory()
    } catch {
      return false
    }
  })()
  const out: Array<Placeholders.Target> = []
  for (const relative of ProtectedPaths.WORKSPACE_CONFIG_PATHS) {
    if (relative.startsWith(".git/") && !gitIsDirectory) continue
    if (ProtectedPaths.READ_WHEN_PRESENT.includes(relative)) {
      // git reads these only when they exist, and an empty one would break it: no placeholder
      out.push({ base: workspace, relative, kind: "file", placeholder: false })
      continue
    }
    const kind = relative === ".mcp.json" || relative === ".git/config" ? "file" : "directory"
    out.push({ base: workspace, relative, kind, ...(relative === ".mcp.json" ? { content: MCP_PLACEHOLDER } : {}) })
  }
  // a `core.hooksPath` inside the workspace (husky's `.husky`) holds the hooks git runs outside
  if (gitIsDirectory) for (const relative of ProtectedPaths.gitHooksPaths(workspace)) out.push({ base: workspace, relative, kind: "directory" })
  for (const home of homes(environment)) {
    if (!within(home, workspace)) continue
    for (const target of SHELL_STARTUP_PATHS) out.push({ base: home, ...target })
  }
  return out
}

/**
 * The host directories replaced by an empty tmpfs in the sandbox, as real paths: `/tmp`,
 * `/var/tmp`, `/run` (`/var/run`), `$XDG_RUNTIME_DIR` and `$TMPDIR`. Path sockets live there
 * (tmux, ssh-agent, Docker, D-Bus, X11); a read-only mount does not stop `connect()`. A variable
 * naming `/` or a home directory (or one of its ancestors) is not masked.
 *
 * @since 0.1.0
 * @category utils
 */
export const maskedDirectories = (environment: Environment): ReadonlyArray<string> => {
  const protectedHomes = homes(environment)
  const out = new Set<string>()
  const add = (candidate: string | undefined, fixed: boolean) => {
    if (candidate === undefined || !NodePath.isAbsolute(candidate)) return
    if (statOf(candidate)?.isDirectory() !== true) return
    const real = realOr(candidate)
    if (real === "/") return
    if (!fixed && protectedHomes.some((home) => within(home, real))) return
    out.add(real)
  }
  for (const dir of ["/tmp", "/var/tmp", "/run", "/var/run"]) add(dir, true)
  add(environment.env.XDG_RUNTIME_DIR, false)
  add(environment.env.TMPDIR, false)
  return [...out]
}

/** socket paths named by well-known variables (ssh-agent, D-Bus, Docker, tmux) */
const socketPaths = (env: Environment["env"]): ReadonlyArray<string> => {
  const out: Array<string> = []
  const add = (path: string | undefined) => {
    if (path !== undefined && NodePath.isAbsolute(path) && statOf(path)?.isSocket() === true) out.push(realOr(path))
  }
  add(env.SSH_AUTH_SOCK)
  add(/(?:^|;)unix:(?:[^;]*,)?path=([^,;]+)/.exec(env.DBUS_SESSION_BUS_ADDRESS ?? "")?.[1])
  add(/^unix:\/\/(.+)$/.exec(env.DOCKER_HOST ?? "")?.[1])
  add((env.TMUX ?? "").split(",")[0])
  return out
}

/** the bwrap arguments that hide one credential path, following links */
const hide = (path: string, workspace: string): ReadonlyArray<string> => {
  const info = statOf(path)
  if (info === undefined) return []
  const real = realOr(path)
  // hiding the workspace or one of its ancestors would hide the workspace itself
  if (within(workspace, real)) return []
  if (info.isDirectory()) return ["--tmpfs", real]
  return ["--ro-bind", "/dev/null", real]
}

/**
 * The bwrap arguments (before `--` and the command) for a workspace, in mount order:
 *
 * 1. the root read-only, a private `/dev` and `/proc`;
 * 2. {@link maskedDirectories} as empty tmpfs (the command's `TMPDIR` is the private `/tmp`),
 *    then what must stay usable under them bound back read-only: a home directory, `PATH`
 *    directories, `/etc/resolv.conf`'s target, and the symbolic links directly under `/run`;
 *    sockets named by `SSH_AUTH_SOCK`, `DBUS_SESSION_BUS_ADDRESS`, `DOCKER_HOST` and `TMUX`
 *    elsewhere are covered by `/dev/null`;
 * 3. the workspace writable;
 * 4. `readOnly` (the existing or placeholder paths of {@link readOnlyTargets}) read-only;
 * 5. the credential paths of every home ({@link HIDDEN_HOME_PATHS}) hidden, last, so no bind
 *    above can uncover them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const args = (
  policy: Policy,
  workspace: string,
  environment: Environment = currentEnvironment(),
  readOnly: ReadonlyArray<string> = []
): Array<string> => {
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
  const masks = maskedDirectories(environment)
  const masked = (path: string) => masks.some((mask) => within(path, mask))
  for (const mask of masks) out.push("--tmpfs", mask)
  const restored = new Set<string>()
  const restore = (path: string) => {
    const real = realOr(path)
    if (!masked(real) || masks.includes(real) || restored.has(real) || statOf(real) === undefined) return
    restored.add(real)
    out.push("--ro-bind", real, real)
  }
  for (const home of homes(environment)) restore(home)
  for (const dir of (environment.env.PATH ?? "").split(":")) if (NodePath.isAbsolute(dir)) restore(dir)
  restore("/etc/resolv.conf")
  if (masks.includes("/run")) {
    for (const entry of readDir("/run")) {
      const path = NodePath.join("/run", entry)
      try {
        if (NodeFs.lstatSync(path).isSymbolicLink()) out.push("--symlink", NodeFs.readlinkSync(path), path)
      } catch {
        // gone since the listing: nothing to recreate
      }
    }
  }
  for (const socket of socketPaths(environment.env)) {
    if (!masked(socket)) out.push("--ro-bind", "/dev/null", socket)
  }
  out.push("--bind", workspace, workspace)
  // `.git` becomes a mount point of its own, so a command cannot rename it and put a fresh `.git`
  // with its own hooks and config in its place (the read-only mounts below sit inside it)
  const git = NodePath.join(workspace, ".git")
  if (statOf(git)?.isDirectory() === true && NodeFs.lstatSync(git).isDirectory()) out.push("--bind", git, git)
  for (const path of readOnly) out.push("--ro-bind", path, path)
  for (const home of homes(environment)) {
    for (const rel of HIDDEN_HOME_PATHS) out.push(...hide(NodePath.join(home, rel), workspace))
  }
  out.push("--setenv", "TMPDIR", "/tmp", "--chdir", workspace)
  return out
}

const readDir = (dir: string): ReadonlyArray<string> => {
  try {
    return NodeFs.readdirSync(dir)
  } catch {
    return []
  }
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
 * The line that says, once per process, that commands run unsandboxed, when the policy asks for the sandbox
 * and it is unavailable (`undefined` otherwise, and after the first time).
 *
 * @since 0.1.0
 * @category utils
 */
export const fallbackNotice = (policy: Policy): string | undefined => {
  if (!policy.enabled || announced) return undefined
  const a = availability()
  if (a.available) return undefined
  announced = true
  return `bash runs unsandboxed: ${a.reason}; commands get a filtered environment only (install bubblewrap, or pass --no-sandbox to silence this)`
}
