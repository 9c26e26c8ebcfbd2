/**
 * Permission rules in Claude Code's syntax (HB-12), parsed and matched against a tool call.
 *
 * - A bare name (`Read`, `Edit`, `bash`, `mcp__fs__read`) matches every call of that tool. Claude
 *   Code names map case-insensitively onto the built-in tools; `Edit` also covers `write`, `Read`
 *   also covers `ls`, `glob` and `grep` (the read-only file tools), as in Claude Code. An MCP
 *   server name alone (`mcp__fs`) matches every tool of that server.
 * - `Bash(npm test:*)`: a command whose words start with `npm test`; `Bash(git status)`: exactly
 *   the words `git status`. Commands are matched as a shell would run them (see `ShellCommand`):
 *   every simple command anywhere in the tree, assignments stripped, unquoted, through wrappers
 *   (`env`, `xargs`, `bash -c`, `find -exec`, …); `find -delete` counts as `rm`.
 * - `Edit(src/**)`, `Read(./secrets/**)`: gitignore-style globs over the path relative to the
 *   workspace (a pattern without `/` matches in any directory; a leading `./` or `/` anchors it at
 *   the workspace root). A path outside the workspace never matches.
 *
 * [DECISION] (0008, issue 26) a DENY or ASK rule matches when any simple command (or any command
 * a wrapper runs, or the program's base name: `/bin/rm` is `rm`) matches, and a path rule when the
 * lexical path, the resolved path (links followed, as the tool follows them) or a directory above
 * either matches. An ALLOW rule covers a command only when every simple command and every command
 * a wrapper runs matches an allow rule as spelled (`./git` is not `git`), nothing is unknowable,
 * there is no command or process substitution and no redirection writes a file (`>/dev/null` and
 * `2>&1` are fine); a path allow rule matches the resolved path only.
 *
 * @since 0.1.0
 */
import type { Json } from "../Llm/Json.js"
import * as GlobPattern from "../Tools/internal/GlobPattern.js"
import type * as ShellCommand from "./ShellCommand.js"

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
 * What the matching knows beyond the arguments: the analysis of a bash command, and the
 * workspace-relative path a file tool will really use (links followed; `undefined` when it is
 * outside the workspace or cannot be resolved).
 *
 * @since 0.1.0
 * @category models
 */
export interface Facts {
  readonly shell?: ShellCommand.Analysis | undefined
  readonly resolved?: string | undefined
}

const patternWords = (pattern: string): { readonly prefix: boolean; readonly words: ReadonlyArray<string> } => {
  const prefix = pattern.endsWith(":*")
  const body = prefix ? pattern.slice(0, -2) : pattern
  return { prefix, words: body.trim().split(/\s+/).filter((w) => w !== "") }
}

const baseName = (program: string): string => program.slice(program.lastIndexOf("/") + 1) || program

/**
 * `true` when a bash pattern (`rm:*`, `git status`) matches one invocation. For `allow` the
 * program must be spelled as in the rule and every compared word must be literal; for `restrict`
 * the program's base name counts too and a word that is not literal may be anything.
 *
 * @since 0.1.0
 * @category predicates
 */
export const invocationMatches = (pattern: string, invocation: ShellCommand.Invocation, purpose: Purpose): boolean => {
  const { prefix, words } = patternWords(pattern)
  const [program, ...rest] = words
  if (program === undefined) return false
  const named = purpose === "allow"
    ? invocation.spelled === program
    : invocation.spelled === program || invocation.name === program || invocation.name === baseName(program)
  if (!named) return false
  if (invocation.args.length < rest.length || (!prefix && invocation.args.length !== rest.length)) return false
  return rest.every((word, i) => {
    const arg = invocation.args[i]
    return arg === undefined ? purpose === "restrict" : arg === word
  })
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
 * The path argument of a file tool call (`file_path`, else `path`, else `.` for the read-only
 * tools), as given.
 *
 * @since 0.1.0
 * @category utils
 */
export const pathOf = (name: string, args: Json): string | undefined => pathArgument(name.toLowerCase(), args)

/**
 * The `command` argument of a bash call.
 *
 * @since 0.1.0
 * @category utils
 */
export const commandOf = (args: Json): string | undefined => field(args, "command")

/**
 * The workspace-relative lexical form of a call's `file_path` (`undefined` outside `cwd`).
 *
 * @since 0.1.0
 * @category utils
 */
export const lexicalPath = (cwd: string, args: Json): string | undefined => {
  const target = field(args, "file_path")
  return target === undefined ? undefined : relativePath(cwd, target)
}

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

const ancestorsAndSelf = (rel: string): ReadonlyArray<string> => {
  const parts = rel.split("/")
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"))
}

/**
 * `true` when a path pattern matches a workspace-relative path or, for `restrict`, a directory
 * above it (`Read(secrets)` covers `secrets/key`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const pathMatches = (pattern: string, rel: string, purpose: Purpose): boolean => {
  const re = globOf(pattern)
  return purpose === "allow" ? re.test(rel) : ancestorsAndSelf(rel).some((p) => re.test(p))
}

/**
 * `true` when `rule` matches the call `name(args)` in the workspace `cwd`, knowing `facts`.
 * A bash pattern without `facts.shell` matches every command for `restrict` and none for
 * `allow`; without `facts` at all, a path rule sees the lexical path only.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (
  rule: Rule,
  name: string,
  args: Json,
  cwd: string,
  purpose: Purpose,
  facts?: Facts
): boolean => {
  if (!coversTool(rule, name)) return false
  if (rule.pattern === undefined) return true
  const pattern = rule.pattern
  if (name === "bash") {
    const shell = facts?.shell
    if (shell === undefined) return purpose === "restrict"
    if (purpose === "allow") return bashAllowedByAll([rule], shell) !== undefined
    return shell.invocations.some((inv) => invocationMatches(pattern, inv, "restrict"))
  }
  const target = pathArgument(name.toLowerCase(), args)
  if (target === undefined) return false
  const lexical = relativePath(cwd, target)
  if (facts === undefined) return lexical !== undefined && pathMatches(pattern, lexical, purpose)
  const resolved = facts.resolved
  if (purpose === "allow") return resolved !== undefined && pathMatches(pattern, resolved, "allow")
  return [lexical, resolved].some((rel) => rel !== undefined && pathMatches(pattern, rel, "restrict"))
}

/**
 * The first allow rule when every part of an analysed bash command is allowed: nothing
 * unknowable, no substitution, no redirection that writes a file, and every invocation (each
 * simple command and each command a wrapper runs) matched by one of `rules`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const bashAllowedByAll = (rules: ReadonlyArray<Rule>, shell: ShellCommand.Analysis): Rule | undefined => {
  if (shell.unknowable.length > 0 || shell.substitution || shell.writes.length > 0 || shell.invocations.length === 0) {
    return undefined
  }
  let first: Rule | undefined
  for (const invocation of shell.invocations) {
    const rule = rules.find((r) =>
      coversTool(r, "bash") && (r.pattern === undefined || invocationMatches(r.pattern, invocation, "allow"))
    )
    if (rule === undefined) return undefined
    first ??= rule
  }
  return first
}

/**
 * The rule a user can choose to "always allow" for a call: `Bash(<program> [<sub-command>]:*)`
 * for one simple command that an allow rule could cover (program plus sub-command when the second
 * word looks like one), the exact command otherwise; `Edit(<path>)` / `Write(<path>)` for file
 * tools; the bare tool name otherwise.
 *
 * @since 0.1.0
 * @category utils
 */
export const suggest = (name: string, args: Json, cwd: string, shell?: ShellCommand.Analysis): string => {
  if (name === "bash") {
    const command = (field(args, "command") ?? "").trim()
    const only = shell !== undefined && shell.invocations.length === 1 && bashAllowedByAll([wildcard], shell) !== undefined
      ? shell.invocations[0]
      : undefined
    if (only === undefined || command.includes("\n") || /[()]/.test(command)) return `Bash(${command})`
    const sub = only.args[0]
    const head = sub !== undefined && /^[a-z][a-z0-9-]*$/.test(sub) ? `${only.spelled} ${sub}` : only.spelled
    return `Bash(${head}:*)`
  }
  if (name === "edit" || name === "write") {
    const target = field(args, "file_path")
    const rel = target === undefined ? undefined : relativePath(cwd, target)
    const tool = name === "edit" ? "Edit" : "Write"
    if (rel === undefined || /[*?[\]()]/.test(rel)) return tool
    // a file in a directory: its directory and everything under it (issue 34); at the root, the file
    const slash = rel.lastIndexOf("/")
    return slash < 0 ? `${tool}(./${rel})` : `${tool}(./${rel.slice(0, slash)}/**)`
  }
  return name
}

const wildcard: Rule = { text: "Bash", tools: ["bash"], mcpServer: false, pattern: undefined }
