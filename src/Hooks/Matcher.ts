/**
 * Hook matchers (HB-4). Absent, `""` or `"*"` match everything; a matcher of only letters, digits,
 * `_` and `|` is a list of exact names; anything else is an unanchored JavaScript regex (in the
 * Codex dialect always a regex). An invalid regex matches nothing and is reported once.
 *
 * Subjects: tool events match the tool name; in the Claude dialect a built-in tool also answers to
 * its Claude Code name (`Bash`, `Read`, `Write`, `Edit`, `Glob`, `Grep`, `LS`). MCP tools are
 * `mcp__<server>__<tool>` in every dialect.
 *
 * @since 0.1.0
 */
import type { Dialect } from "../Workspace/SettingsFile.js"

/**
 * A compiled matcher.
 *
 * @since 0.1.0
 * @category models
 */
export interface Matcher {
  readonly test: (subjects: ReadonlyArray<string>) => boolean
  /** set when the matcher is an invalid regex (it then matches nothing) */
  readonly warning?: string
}

/**
 * Claude Code's names of the built-in tools.
 *
 * @since 0.1.0
 * @category constants
 */
export const claudeNames: Readonly<Record<string, string>> = {
  bash: "Bash",
  read: "Read",
  write: "Write",
  edit: "Edit",
  glob: "Glob",
  grep: "Grep",
  ls: "LS"
}

/**
 * The names a tool answers to in a dialect.
 *
 * @since 0.1.0
 * @category utils
 */
export const toolSubjects = (name: string, dialect: Dialect): ReadonlyArray<string> => {
  const alias = claudeNames[name]
  return dialect === "claude" && alias !== undefined ? [name, alias] : [name]
}

const all: Matcher = { test: () => true }

/**
 * Compiles a matcher.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compile = (matcher: string | undefined, dialect: Dialect): Matcher => {
  if (matcher === undefined || matcher === "" || matcher === "*") return all
  if (dialect !== "codex" && /^[A-Za-z0-9_|]+$/.test(matcher)) {
    const names = new Set(matcher.split("|").filter((n) => n !== ""))
    return { test: (subjects) => subjects.some((s) => names.has(s)) }
  }
  let re: RegExp
  try {
    re = new RegExp(matcher)
  } catch (e) {
    return { test: () => false, warning: `invalid hook matcher ${JSON.stringify(matcher)} matches nothing (${e instanceof Error ? e.message : String(e)})` }
  }
  return { test: (subjects) => subjects.some((s) => re.test(s)) }
}
