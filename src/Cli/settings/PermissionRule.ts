/**
 * Permission rules in Claude Code's syntax (HB-12), parsed and matched against a tool call.
 *
 * - A bare name (`Read`, `Edit`, `bash`, `mcp__fs__read`) matches every call of that tool. Claude
 *   Code names map case-insensitively onto the built-in tools; `Edit` also covers `write`, `Read`
 *   also covers `ls`, `glob` and `grep` (the read-only file tools), as in Claude Code. An MCP
 *   server name alone (`mcp__fs`) matches every tool of that server.
 * - `Bash(npm test:*)`: the command starts with `npm test` (then ends or continues with a space);
 *   `Bash(git status)`: the command is exactly `git status`.
 * - `Edit(src/**)`, `Read(./secrets/**)`: gitignore-style globs over the path relative to the
 *   workspace (a pattern without `/` matches in any directory; a leading `./` or `/` anchors it at
 *   the workspace root). A path outside the workspace never matches.
 *
 * [DECISION] (0008) compound commands: `a && b`, `a; b`, `a | b`, … match an ALLOW rule only when
 * every part matches an allow rule, and never when they contain command substitution (`$(…)`,
 * backticks, `<(…)`); a DENY or ASK rule matches when any part matches. So `npm test && rm -rf x`
 * is not allowed by `Bash(npm test:*)` and is denied by `Bash(rm:*)`.
 *
 * @since 0.1.0
 */
import type { Json } from "../../Llm/Json.js"
import * as GlobPattern from "../tools/internal/GlobPattern.js"

/**
 * A parsed rule.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  /** the rule as written */
  readonly text: string
  /** the tools it covers (lower-case built-in names, or an MCP name / prefix) */
  readonly tools: ReadonlyArray<string>
  /** `mcp__server` alone: a prefix of tool names */
  readonly mcpServer: boolean
  readonly pattern: string | undefined
}

const claudeNames: Readonly<Record<string, ReadonlyArray<string>>> = {
  bash: ["bash"],
  read: ["read", "ls", "glob", "grep"],
  write: ["write"],
  edit: ["edit", "write"],
  multiedit: ["edit", "write"],
  glob: ["glob"],
  grep: ["grep"],
  ls: ["ls"]
}

/**
 * The tools that only read.
 *
 * @since 0.1.0
 * @category constants
 */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(["read", "ls", "glob", "grep"])

/**
 * The tools that edit files (accepted without asking in `acceptEdits` mode).
 *
 * @since 0.1.0
 * @category constants
 */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["write", "edit"])

/**
 * Parses a rule; `undefined` when it is not a rule (e.g. `Bash(` without `)`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (text: string): Rule | undefined => {
  const m = /^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$/s.exec(text)
  if (m === null || m[1] === undefined) return undefined
  const name = m[1]
  const pattern = m[2] === undefined || m[2].trim() === "" || m[2].trim() === "*" ? undefined : m[2].trim()
  if (name.startsWith("mcp__")) {
    const parts = name.split("__")
    return { text, tools: [name], mcpServer: parts.length === 2 || (parts.length === 3 && parts[2] === "*"), pattern }
  }
  const lower = name.toLowerCase()
  return { text, tools: claudeNames[lower] ?? [lower], mcpServer: false, pattern }
}

const field = (args: Json, key: string): string | undefined => {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return undefined
  const v = (args as { readonly [k: string]: Json })[key]
  return typeof v === "string" ? v : undefined
}

/**
 * Splits a shell command into its simple commands (on `&&`, `||`, `;`, `|`, `&` and newlines),
 * and says whether it contains command substitution. Quote-unaware on purpose: over-splitting can
 * only make an allow rule fail to match (the user is asked) or a deny rule match.
 *
 * @since 0.1.0
 * @category utils
 */
export const splitCommand = (command: string): { readonly parts: ReadonlyArray<string>; readonly substitution: boolean } => ({
  parts: command.split(/&&|\|\||[;|&\n]/).map((p) => p.trim()).filter((p) => p !== ""),
  substitution: /\$\(|`|<\(|>\(/.test(command)
})

const commandMatches = (pattern: string, command: string): boolean => {
  const c = command.trim()
  if (pattern.endsWith(":*")) {
    const prefix = pattern.slice(0, -2).trim()
    return c === prefix || c.startsWith(`${prefix} `) || (prefix.endsWith(" ") && c.startsWith(prefix))
  }
  return c === pattern
}

const globCache = new Map<string, RegExp>()

const globOf = (pattern: string): RegExp => {
  let p = pattern.replace(/^\.\//, "")
  const anchored = p.startsWith("/") || p.replace(/\/$/, "").includes("/") || pattern.startsWith("./")
  p = p.replace(/^\/+/, "")
  if (p.endsWith("/")) p = `${p}**`
  const source = anchored ? p : `**/${p}`
  let re = globCache.get(source)
  if (re === undefined) {
    re = GlobPattern.compile(source, { braces: false })
    globCache.set(source, re)
  }
  return re
}

const relativePath = (cwd: string, target: string): string | undefined => {
  const abs = target.startsWith("/") ? target : `${cwd}/${target}`
  const parts: Array<string> = []
  for (const seg of abs.split("/")) {
    if (seg === "" || seg === ".") continue
    if (seg === "..") parts.pop()
    else parts.push(seg)
  }
  const norm = `/${parts.join("/")}`
  const root = cwd.endsWith("/") ? cwd.slice(0, -1) : cwd
  if (norm === root) return "."
  return norm.startsWith(`${root}/`) ? norm.slice(root.length + 1) : undefined
}

const pathArgument = (name: string, args: Json): string | undefined =>
  field(args, "file_path") ?? field(args, "path") ?? (READ_ONLY_TOOLS.has(name) ? "." : undefined)

/**
 * What a rule is matched for: `allow` rules need every part of a compound command to match.
 *
 * @since 0.1.0
 * @category models
 */
export type Purpose = "allow" | "restrict"

/**
 * `true` when `rule` covers the tool `name` (without looking at arguments).
 *
 * @since 0.1.0
 * @category predicates
 */
export const coversTool = (rule: Rule, name: string): boolean =>
  rule.tools.includes(name.toLowerCase()) ||
  (rule.mcpServer && rule.tools.some((t) => name.startsWith(`${t.replace(/__\*$/, "")}__`)))

/**
 * `true` when `rule` matches the call `name(args)` in the workspace `cwd`. For an allow-purpose
 * bash match, `allowRules` are all the allow rules (each part of a compound command must match
 * one of them).
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (rule: Rule, name: string, args: Json, cwd: string, purpose: Purpose): boolean => {
  if (!coversTool(rule, name)) return false
  if (rule.pattern === undefined) return true
  const pattern = rule.pattern
  if (name === "bash") {
    const command = field(args, "command")
    if (command === undefined) return false
    const { parts, substitution } = splitCommand(command)
    if (purpose === "allow") {
      return !substitution && parts.length > 0 && parts.every((p) => commandMatches(pattern, p))
    }
    return commandMatches(pattern, command) || parts.some((p) => commandMatches(pattern, p))
  }
  const target = pathArgument(name.toLowerCase(), args)
  if (target === undefined) return false
  const rel = relativePath(cwd, target)
  if (rel === undefined) return false
  return globOf(pattern).test(rel)
}

/**
 * `true` when every part of a bash command is allowed by some allow rule (compound commands).
 *
 * @since 0.1.0
 * @category predicates
 */
export const bashAllowedByAll = (rules: ReadonlyArray<Rule>, args: Json): Rule | undefined => {
  const command = field(args, "command")
  if (command === undefined) return undefined
  const { parts, substitution } = splitCommand(command)
  if (substitution || parts.length === 0) return undefined
  let first: Rule | undefined
  for (const part of parts) {
    const rule = rules.find((r) => matches(r, "bash", { command: part }, "/", "allow"))
    if (rule === undefined) return undefined
    first ??= rule
  }
  return first
}

/**
 * The rule a user can choose to "always allow" for a call: `Bash(<first words>:*)` for a simple
 * command (program plus sub-command when the second word looks like one), the exact command for
 * a compound one; `Edit(<path>)` / `Write(<path>)` for file tools; the bare tool name otherwise.
 *
 * @since 0.1.0
 * @category utils
 */
export const suggest = (name: string, args: Json, cwd: string): string => {
  if (name === "bash") {
    const command = (field(args, "command") ?? "").trim()
    const { parts, substitution } = splitCommand(command)
    if (substitution || parts.length !== 1 || command.includes("\n") || /[()]/.test(command)) {
      return `Bash(${command})`
    }
    const words = command.split(/\s+/)
    const head = words[1] !== undefined && /^[a-z][a-z0-9-]*$/.test(words[1]) ? `${words[0]} ${words[1]}` : words[0]
    return `Bash(${head}:*)`
  }
  if (name === "edit" || name === "write") {
    const target = field(args, "file_path")
    const rel = target === undefined ? undefined : relativePath(cwd, target)
    const tool = name === "edit" ? "Edit" : "Write"
    return rel === undefined || /[*?[\]()]/.test(rel) ? tool : `${tool}(./${rel})`
  }
  return name
}
