/**
 * What a bash command runs, as far as a permission rule can know it: every simple command anywhere
 * in its syntax tree (pipelines, lists, subshells, groups, `if`/`for`/`while`/`case` bodies,
 * functions, background jobs, command and process substitutions, here-documents), each seen
 * through the wrappers that run another command.
 *
 * A simple command is reduced to its words after stripping assignments (`FOO=1 rm`), unquoting
 * (`\rm`, `"rm"`, `r''m`) and, for matching by deny and ask rules, path-stripping (`/bin/rm`,
 * `./rm` → `rm`). Wrappers with their options are looked through, each giving one more
 * {@link Invocation}: `env`, `command`, `exec`, `time`, `nice`, `nohup`, `timeout`, `stdbuf`,
 * `xargs`, `sudo`, `doas`, `builtin`, `setsid`, `coproc`, `find … -exec/-execdir/-ok/-okdir`, and
 * `bash|sh|dash|zsh|ksh -c STRING` (the string is parsed in turn). `find … -delete` counts as the
 * command `rm` (a documented alias).
 *
 * UNKNOWABLE (listed in {@link Analysis.unknowable}): a command name or a wrapper's target that is
 * not a literal word (`$(echo rm) x`, `` `echo rm` ``, `$CMD x`, `r*m`), `eval`, options of a
 * wrapper that are not understood, and input the parser does not accept. OPAQUE (listed in
 * {@link Analysis.opaque}): shell code that exists but is not in the command: `source` / `.`, a
 * shell reading a script file or its input (`sh wait.sh`, `… | sh`), `alias`. Both mean a deny
 * rule cannot be checked; an allow rule that names the command (`Bash(sh wait.sh)`) may still
 * cover an opaque one, never an unknowable one. Interpreters with inline code
 * (`python -c`, `perl -e`, `node -e`, `ruby -e`) and programs that delete files themselves are the
 * documented limit: they are ordinary commands here.
 *
 * The analysis is pure over a syntax tree ({@link analyze}); `ShellParser` provides the parser.
 *
 * @since 0.1.0
 */

/**
 * The part of a syntax-tree node the analysis reads (tree-sitter's `Node` has it).
 *
 * @since 0.1.0
 * @category models
 */
export interface SyntaxNode {
  readonly type: string
  readonly text: string
  readonly children: ReadonlyArray<SyntaxNode | null>
  readonly hasError: boolean
  readonly isMissing: boolean
}

/**
 * One way of seeing a simple command: its program and its words (`undefined` for a word that is
 * not literal, e.g. `"$f"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Invocation {
  /** the program as written, unquoted (`/bin/rm`) */
  readonly spelled: string
  /** the program's base name (`rm`) */
  readonly name: string
  /** the arguments after the program */
  readonly args: ReadonlyArray<string | undefined>
}

/**
 * What a command runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Analysis {
  /** every simple command, and every command a wrapper runs */
  readonly invocations: ReadonlyArray<Invocation>
  /** why some of what runs cannot be known (empty when everything is known) */
  readonly unknowable: ReadonlyArray<string>
  /** shell code that runs but is not in the command (a script file, the input of a shell) */
  readonly opaque: ReadonlyArray<string>
  /** redirections that write to a file (targets as written) */
  readonly writes: ReadonlyArray<string>
  /** the command contains command or process substitution */
  readonly substitution: boolean
}

/**
 * A parser: the syntax tree of a text, or `undefined` when it cannot be parsed at all. The
 * callback gets the root node only for the time of the call.
 *
 * @since 0.1.0
 * @category models
 */
export type Parse = <A>(text: string, use: (root: SyntaxNode) => A) => A | undefined

/**
 * How deep `bash -c` and wrappers are followed before the rest counts as unknowable.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_DEPTH = 8

const SHELLS: ReadonlySet<string> = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox-sh"])

const REDIRECTS: ReadonlySet<string> = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"])

const NOT_WORDS: ReadonlySet<string> = new Set([...REDIRECTS, "variable_assignment", "comment"])

const kids = (node: SyntaxNode): ReadonlyArray<SyntaxNode> => node.children.filter((c): c is SyntaxNode => c !== null)

const unescapeWord = (text: string): string | undefined => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "\\") {
      i++
      if (i < text.length && text[i] !== "\n") out += text[i]
      continue
    }
    // an unquoted glob, expansion or brace expansion could become any word
    if (c === "*" || c === "?" || c === "[" || c === "$" || c === "`") return undefined
    out += c
  }
  return /\{[^{}]*(?:,|\.\.)[^{}]*\}/.test(text) ? undefined : out
}

const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === "\n" ? "" : c))

/**
 * The literal value of a word node, or `undefined` when it depends on an expansion.
 *
 * @since 0.1.0
 * @category utils
 */
export const literal = (node: SyntaxNode): string | undefined => {
  switch (node.type) {
    case "word":
      return unescapeWord(node.text)
    case "number":
      return node.text
    case "raw_string":
      return node.text.slice(1, -1)
    case "string_content":
      return unescapeDouble(node.text)
    case "string": {
      let out = ""
      for (const c of kids(node)) {
        if (c.type === "\"") continue
        const v = c.type === "string_content" ? unescapeDouble(c.text) : undefined
        if (v === undefined) return undefined
        out += v
      }
      return out
    }
    case "concatenation":
    case "command_name": {
      let out = ""
      for (const c of kids(node)) {
        const v = literal(c)
        if (v === undefined) return undefined
        out += v
      }
      return out
    }
    default:
      return undefined
  }
}

const baseName = (program: string): string => {
  const i = program.lastIndexOf("/")
  return i >= 0 && i < program.length - 1 ? program.slice(i + 1) : program
}

interface Word {
  readonly value: string | undefined
  readonly raw: string
}

interface Collector {
  readonly invocations: Array<Invocation>
  readonly unknowable: Array<string>
  readonly opaque: Array<string>
  readonly writes: Array<string>
  substitution: boolean
}

const harmlessTargets: ReadonlySet<string> = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"])

const redirect = (node: SyntaxNode, out: Collector): void => {
  if (node.type !== "file_redirect") return
  const [op, target] = kids(node).filter((p) => p.type !== "file_descriptor")
  if (op === undefined || op.type === "<" || op.type === "<&" || op.type === "<&-" || op.type === ">&-") return
  const value = target === undefined ? undefined : literal(target)
  // a descriptor duplication (`2>&1`, `>&2`, `>&-`) writes no file; `>&file` does
  if (op.type === ">&" && value !== undefined && /^(?:[0-9]+-?|-)$/.test(value)) return
  if (value !== undefined && harmlessTargets.has(value)) return
  out.writes.push(target?.text ?? op.text)
}

/** the options of a wrapper that take a value (the next word unless attached) */
interface WrapperSpec {
  /** short options with a value */
  readonly withValue: string
  /** short options without a value */
  readonly flags: string
  /** long options with a value (`--name` or `--name=value`) */
  readonly longWithValue: ReadonlyArray<string>
  /** long options without a value */
  readonly longFlags: ReadonlyArray<string>
  /** `NAME=value` words are skipped (env) */
  readonly assignments?: boolean
  /** words skipped after the options (timeout's duration) */
  readonly operands?: number
  /** `-N` (a bare number option, `nice -5`) is a flag */
  readonly numericFlag?: boolean
}

const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    withValue: "uCS",
    flags: "i0v",
    longWithValue: ["unset", "chdir", "split-string", "default-signal", "ignore-signal", "block-signal"],
    longFlags: ["ignore-environment", "null", "debug", "list-signal-handling"],
    assignments: true
  },
  command: { withValue: "", flags: "p", longWithValue: [], longFlags: [] },
  builtin: { withValue: "", flags: "", longWithValue: [], longFlags: [] },
  exec: { withValue: "a", flags: "cl", longWithValue: [], longFlags: [] },
  time: { withValue: "fo", flags: "pav", longWithValue: ["format", "output"], longFlags: ["portability", "append", "verbose"] },
  nice: { withValue: "n", flags: "", longWithValue: ["adjustment"], longFlags: [], numericFlag: true },
  nohup: { withValue: "", flags: "", longWithValue: [], longFlags: [] },
  setsid: { withValue: "", flags: "cfw", longWithValue: [], longFlags: ["ctty", "fork", "wait"] },
  coproc: { withValue: "", flags: "", longWithValue: [], longFlags: [] },
  timeout: {
    withValue: "sk",
    flags: "v",
    longWithValue: ["signal", "kill-after"],
    longFlags: ["preserve-status", "foreground", "verbose"],
    operands: 1
  },
  stdbuf: { withValue: "ioe", flags: "", longWithValue: ["input", "output", "error"], longFlags: [] },
  xargs: {
    withValue: "adEeIiLlnPs",
    flags: "0oprtx",
    longWithValue: [
      "arg-file",
      "delimiter",
      "eof",
      "replace",
      "max-lines",
      "max-args",
      "max-procs",
      "max-chars",
      "process-slot-var"
    ],
    longFlags: ["null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits"]
  },
  sudo: {
    withValue: "CDghpRrTtUu",
    flags: "AbEeHiKklnPSsVv",
    longWithValue: [
      "close-from",
      "chdir",
      "group",
      "host",
      "prompt",
      "chroot",
      "role",
      "type",
      "command-timeout",
      "other-user",
      "user"
    ],
    longFlags: [
      "askpass",
      "background",
      "preserve-env",
      "edit",
      "set-home",
      "login",
      "remove-timestamp",
      "reset-timestamp",
      "list",
      "non-interactive",
      "preserve-groups",
      "stdin",
      "shell",
      "validate"
    ],
    assignments: true
  },
  doas: { withValue: "uC", flags: "nsL", longWithValue: [], longFlags: [] }
}

/** xargs's `-i`/`-e`/`-l` take an optional value only when attached */
const ATTACHED_ONLY: Readonly<Record<string, string>> = { xargs: "iel" }

/**
 * The words after a wrapper's options, or a reason they cannot be known.
 */
const afterOptions = (wrapper: string, spec: WrapperSpec, args: ReadonlyArray<Word>): ReadonlyArray<Word> | string => {
  let i = 0
  const attachedOnly = ATTACHED_ONLY[wrapper] ?? ""
  while (i < args.length) {
    const w = args[i]!
    if (w.value === undefined) return `an argument of ${wrapper} is not a literal word (${w.raw})`
    const v = w.value
    if (v === "--") {
      i++
      break
    }
    if (spec.assignments === true && /^[A-Za-z_][A-Za-z0-9_]*=/.test(v)) {
      i++
      continue
    }
    if (v.startsWith("--") && v.length > 2) {
      const [name] = v.slice(2).split("=", 1)
      if (wrapper === "env" && name === "split-string") return "env --split-string runs a command given as one string"
      if (spec.longWithValue.includes(name!)) i += v.includes("=") ? 1 : 2
      else if (spec.longFlags.includes(name!)) i++
      else return `${wrapper} has an option that is not understood (${v})`
      continue
    }
    if (v.startsWith("-") && v.length > 1) {
      if (spec.numericFlag === true && /^-[0-9]+$/.test(v)) {
        i++
        continue
      }
      let consumed = 1
      for (let k = 1; k < v.length; k++) {
        const c = v[k]!
        if (attachedOnly.includes(c)) break
        if (wrapper === "env" && c === "S") return "env -S runs a command given as one string"
        if (spec.withValue.includes(c)) {
          if (k === v.length - 1) consumed = 2
          break
        }
        if (!spec.flags.includes(c)) return `${wrapper} has an option that is not understood (${v})`
      }
      i += consumed
      continue
    }
    break
  }
  if (i > args.length) return `${wrapper} lacks the value of an option`
  const rest = args.slice(i)
  const skip = spec.operands ?? 0
  return rest.length < skip ? [] : rest.slice(skip)
}

/** the `-c` string of a shell, `null` when it runs no command string, or a reason */
const shellString = (shell: string, args: ReadonlyArray<Word>): Word | null | string => {
  // bash reads every option first (`bash -c -e 'cmd'`, `bash -c -- 'cmd'`): the command string
  // is the first word after the options once `-c` was among them
  let command = false
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!
    if (w.value === undefined) return `an argument of ${shell} is not a literal word (${w.raw})`
    const v = w.value
    if (v === "--" || v === "-") {
      if (!command) return null
      const s = args[i + 1]
      return s === undefined ? `${shell} -c lacks its command string` : s
    }
    if (/^--[a-z]/.test(v)) {
      if (v === "--rcfile" || v === "--init-file") return `${shell} ${v} runs the commands of a file`
      if (v === "--login") return `${shell} ${v} runs start-up files`
      continue
    }
    if (/^[-+][A-Za-z]+$/.test(v)) {
      const letters = v.slice(1)
      if (v.startsWith("-") && (letters.includes("i") || letters.includes("l"))) return `${shell} ${v} runs start-up files`
      if (letters.includes("c")) command = true
      if (letters.includes("o") || letters.includes("O")) i++
      continue
    }
    return command ? w : null
  }
  return command ? `${shell} -c lacks its command string` : null
}

/** variables that make a shell run a file at start-up */
const STARTUP_VARIABLES = /^(?:BASH_ENV|ENV)=/

/**
 * Text that bash can evaluate as code although it is no command here: a quoted string holding a
 * substitution (`trap`, `printf -v 'a[$(cmd)]'`, `v='$(cmd)'; echo "${v@P}"`, `$((v))` with
 * `v='a[$(cmd)]'` evaluate it), an ANSI-C string with numeric escapes (which can spell one), a
 * prompt expansion (`${v@P}`), and a start-up variable (`BASH_ENV=f bash -c true` runs `f`).
 */
const hiddenCode = (node: SyntaxNode, out: Collector): void => {
  const code = (text: string) => /\$\(|`/.test(text)
  switch (node.type) {
    case "raw_string":
    case "string_content":
    case "word": {
      const value = node.type === "raw_string"
        ? node.text
        : node.type === "string_content"
        ? unescapeDouble(node.text)
        : node.text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1")
      if (code(value)) out.unknowable.push(`a string holds shell code that bash can evaluate (${node.text})`)
      if (STARTUP_VARIABLES.test(value)) out.opaque.push(`${node.text} makes a shell run a file`)
      return
    }
    case "ansi_c_string":
      if (/\\[0-7xuUc]/.test(node.text) || code(node.text)) {
        out.unknowable.push(`an ANSI-C string can spell shell code (${node.text})`)
      }
      return
    case "variable_assignment":
      if (STARTUP_VARIABLES.test(node.text)) out.opaque.push(`${node.text} makes a shell run a file`)
      return
    case "expansion":
      if (/@P\}$/.test(node.text) || /^\$\{![A-Za-z_][A-Za-z0-9_]*\}$/.test(node.text)) {
        out.unknowable.push(`an expansion can evaluate a value as code (${node.text})`)
      }
      return
    default:
      return
  }
}

const wordsOf = (node: SyntaxNode): ReadonlyArray<Word> =>
  kids(node).filter((c) => !NOT_WORDS.has(c.type)).map((c) => ({ value: literal(c), raw: c.text }))

/**
 * Analyses a command with `parse` (called again for `bash -c` strings).
 *
 * @since 0.1.0
 * @category utils
 */
export const analyze = (command: string, parse: Parse): Analysis => {
  const out: Collector = { invocations: [], unknowable: [], opaque: [], writes: [], substitution: false }
  const parseInto = (text: string, depth: number): void => {
    if (depth > MAX_DEPTH) {
      out.unknowable.push("the command nests shells or wrappers too deeply")
      return
    }
    const done = parse(text, (root) => {
      if (root.hasError) out.unknowable.push("the command is not valid shell syntax")
      walk(root, depth)
      return true
    })
    if (done === undefined) out.unknowable.push("the command could not be parsed")
  }
  const walk = (node: SyntaxNode, depth: number): void => {
    if (node.type === "command_substitution" || node.type === "process_substitution") out.substitution = true
    hiddenCode(node, out)
    if (REDIRECTS.has(node.type)) redirect(node, out)
    if (node.type === "command") {
      const words = wordsOf(node)
      if (words.length > 0) invocation(words, depth)
    }
    for (const child of kids(node)) walk(child, depth)
  }
  const invocation = (words: ReadonlyArray<Word>, depth: number): void => {
    if (depth > MAX_DEPTH) {
      out.unknowable.push("the command nests shells or wrappers too deeply")
      return
    }
    const [head, ...args] = words
    if (head === undefined) return
    if (head.value === undefined || head.value === "") {
      out.unknowable.push(`the program name is not a literal word (${head.raw})`)
      return
    }
    const spelled = head.value
    const name = baseName(spelled)
    out.invocations.push({ spelled, name, args: args.map((a) => a.value) })
    if (name === "eval") {
      out.unknowable.push("eval runs a string as a command")
      return
    }
    if (name === "source" || name === ".") {
      out.opaque.push(`${name} runs the commands of a file`)
      return
    }
    if (name === "trap") {
      let i = 0
      while (i < args.length && args[i]!.value !== undefined && /^-[lpP]+$/.test(args[i]!.value!)) i++
      if (args[i]?.value === "--") i++
      const action = args[i]
      if (action !== undefined && args.length > i + 1 && action.value !== "-" && action.value !== "") {
        out.unknowable.push("trap runs a string as a command later")
        return
      }
    }
    if ((name === "mapfile" || name === "readarray") && args.some((a) => a.value === undefined || /^-[^-]*C/.test(a.value))) {
      out.unknowable.push(`${name} -C runs a string as a command`)
      return
    }
    if ((name === "hash" || name === "enable") && args.some((a) => a.value === undefined || /^-[^-]*[pf]/.test(a.value))) {
      out.unknowable.push(`${name} can make a name run another program`)
      return
    }
    if (name === "alias" && args.length > 0) {
      out.opaque.push("alias can rename a program")
      return
    }
    if (SHELLS.has(name)) {
      const s = shellString(name, args)
      if (typeof s === "string") out.unknowable.push(s)
      else if (s === null) out.opaque.push(`${name} runs commands from a file or its input`)
      else if (s.value === undefined) out.unknowable.push(`the command string of ${name} -c is not literal (${s.raw})`)
      else parseInto(s.value, depth + 1)
      return
    }
    if (name === "find") {
      for (let i = 0; i < args.length; i++) {
        const v = args[i]!.value
        if (v === "-delete") out.invocations.push({ spelled: "rm", name: "rm", args: [] })
        if (v === "-exec" || v === "-execdir" || v === "-ok" || v === "-okdir") {
          let j = i + 1
          while (j < args.length && args[j]!.value !== ";" && args[j]!.value !== "+") j++
          invocation(args.slice(i + 1, j), depth + 1)
          i = j
        }
      }
      return
    }
    const spec = WRAPPERS[name]
    if (spec === undefined) return
    if (name === "command") {
      // `command -v rm` only looks rm up; a `-v` after the program (`command rm -v x`) is rm's
      for (const a of args) {
        if (a.value === undefined || !a.value.startsWith("-") || a.value === "--" || a.value === "-") break
        if (/[vV]/.test(a.value)) return
      }
    }
    const rest = afterOptions(name, spec, args)
    if (typeof rest === "string") {
      out.unknowable.push(rest)
      return
    }
    if (rest.length > 0) invocation(rest, depth + 1)
    else if (name === "sudo" && args.some((a) => a.value === "-s" || a.value === "-i" || a.value === "--shell" || a.value === "--login")) {
      out.opaque.push("sudo starts a shell that reads commands from its input")
    }
  }
  parseInto(command, 0)
  return out
}
