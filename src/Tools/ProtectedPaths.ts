/**
 * The workspace paths that configure the harness or run code outside the sandbox: settings files
 * (ours, Claude Code's, Codex's), the MCP server list, and git's hooks and configuration (a
 * `core.fsmonitor` or a hook runs on the next `git status`). A command or a file tool that writes
 * one of them could plant code that runs unsandboxed on the next run, so the sandbox mounts them
 * read-only and `write` / `edit` refuse them in every permission mode unless the user approves the
 * named file.
 *
 * Paths are workspace-relative, POSIX-separated; a directory entry covers everything below it.
 *
 * @since 0.1.0
 */
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * The protected workspace-relative paths.
 *
 * @since 0.1.0
 * @category constants
 */
export const WORKSPACE_CONFIG_PATHS: ReadonlyArray<string> = [
  ".claude",
  ".codex",
  ".effect-harness",
  ".mcp.json",
  ".git/hooks",
  ".git/config",
  ".git/modules",
  ".git/commondir",
  ".git/config.worktree"
]

/**
 * The protected paths git reads only when they exist (`commondir` moves the whole configuration
 * and hooks elsewhere): an absent one cannot get a placeholder, so a command that creates one has
 * it removed when the command ends.
 *
 * @since 0.1.0
 * @category constants
 */
export const READ_WHEN_PRESENT: ReadonlyArray<string> = [".git/commondir", ".git/config.worktree"]

/** git's own files that run or redirect code, under any `.git` directory (nested repositories too) */
const GIT_CODE = ["hooks", "config", "modules", "commondir", "config.worktree"]

/**
 * Whether a workspace-relative path (as resolved: links followed) is, or lies under, a protected
 * path: an entry of {@link WORKSPACE_CONFIG_PATHS}, git's hooks and configuration of any repository
 * in the workspace (`vendor/lib/.git/hooks/…`), or one of `extra` (see {@link gitHooksPaths}). The
 * comparison ignores ASCII case, so a case-insensitive file system cannot be used to spell around it.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isProtected = (relative: string, extra: ReadonlyArray<string> = []): boolean => {
  const path = normalize(relative).toLowerCase()
  if (path === "" || path === "..") return false
  const under = (entry: string) => path === entry || path.startsWith(`${entry}/`)
  if (WORKSPACE_CONFIG_PATHS.some(under) || extra.some((entry) => under(normalize(entry).toLowerCase()))) return true
  const parts = path.split("/")
  return parts.some((part, i) => part === ".git" && i + 1 < parts.length && GIT_CODE.includes(parts[i + 1]!))
}

/**
 * The workspace-relative hook directories git would use outside `.git` (`core.hooksPath`, e.g.
 * husky's `.husky`), read from the workspace's `.git/config` with its includes; empty when there is
 * none, it lies outside the workspace, or git is not installed.
 *
 * @since 0.1.0
 * @category utils
 */
export const gitHooksPaths = (workspace: string): ReadonlyArray<string> => {
  const config = NodePath.join(workspace, ".git", "config")
  if (!NodeFs.existsSync(config)) return []
  const result = ChildProcess.spawnSync("git", ["config", "--file", config, "--includes", "--get-all", "core.hooksPath"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
    timeout: 5_000
  })
  if (result.status !== 0 || typeof result.stdout !== "string") return []
  return result.stdout.split("\n").flatMap((line) => {
    const value = line.trim()
    if (value === "") return []
    const relative = NodePath.relative(workspace, NodePath.resolve(workspace, value))
    return relative === "" || relative.startsWith("..") || NodePath.isAbsolute(relative) ? [] : [relative.split(NodePath.sep).join("/")]
  })
}

const normalize = (relative: string): string => {
  const parts: Array<string> = []
  for (const part of relative.replaceAll("\\", "/").split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (parts.length === 0) return ".."
      parts.pop()
    } else parts.push(part)
  }
  return parts.join("/")
}
