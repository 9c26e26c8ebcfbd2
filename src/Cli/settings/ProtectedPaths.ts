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

/**
 * Whether a workspace-relative path (as resolved: links followed) is, or lies under, a protected
 * path. The comparison ignores ASCII case, so a case-insensitive file system cannot be used to
 * spell around it.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isProtected = (relative: string): boolean => {
  const path = normalize(relative).toLowerCase()
  if (path === "" || path === "..") return false
  return WORKSPACE_CONFIG_PATHS.some((entry) => path === entry || path.startsWith(`${entry}/`))
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
