/**
 * The common subset of `.gitignore` semantics, for the file-walking tools.
 *
 * Supported: blank lines and `#` comments (a leading `\#` / `\!` is literal), trailing spaces
 * trimmed, negation `!`, directory-only patterns (trailing `/`), anchoring (a `/` at the start or
 * in the middle anchors the pattern to the `.gitignore`'s directory; otherwise it matches at any
 * depth), `*`, `?`, `[...]` and `**`. Files deeper in the tree take precedence; within one file the
 * last matching rule wins (a negation re-includes). Like git, a path inside an excluded directory
 * cannot be re-included (the walker never descends into it).
 *
 * Not supported (DEC-10): `$GIT_DIR/info/exclude`, the global excludes file, escaped trailing
 * spaces.
 *
 * @since 0.1.0
 */
import * as NodeV8 from "node:v8"
import * as GlobPattern from "./GlobPattern.js"

/**
 * Whether V8's linear-time regular-expression engine (the `l` flag) is available. `.gitignore`
 * patterns come from a possibly hostile workspace and are matched on the main thread during a walk,
 * where a backtracking match cannot be interrupted; their compiled form (classes, `*`, groups,
 * alternation: no back-references or look-arounds) is accepted by the linear engine, which bounds
 * each match by the input length (decision 0010). Enabled once, on first use; where the flag is
 * refused, the backtracking engine is used.
 *
 * @since 0.1.0
 * @category constants
 */
export const linearEngine: boolean = (() => {
  try {
    NodeV8.setFlagsFromString("--enable-experimental-regexp-engine")
    return new RegExp("a*", "l").test("aaa")
  } catch {
    return false
  }
})()

const compileLinear = (source: string): RegExp => {
  if (linearEngine) {
    try {
      return new RegExp(source, "l")
    } catch {
      // a construct the linear engine does not support: the backtracking engine takes it
    }
  }
  return new RegExp(source)
}

/**
 * One compiled rule of a `.gitignore` file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly negate: boolean
  readonly dirOnly: boolean
  readonly regex: RegExp
}

/**
 * The rules of one `.gitignore`, with the directory they are relative to (`""` = the walk root;
 * `/`-separated, no trailing slash).
 *
 * @since 0.1.0
 * @category models
 */
export interface RuleSet {
  readonly base: string
  readonly rules: ReadonlyArray<Rule>
}

/**
 * Parses the text of a `.gitignore` file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (base: string, text: string): RuleSet => {
  const rules: Array<Rule> = []
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.replace(/[ \t]+$/, "")
    if (line === "" || line.startsWith("#")) continue
    let negate = false
    if (line.startsWith("!")) {
      negate = true
      line = line.slice(1)
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1)
    }
    let dirOnly = false
    if (line.endsWith("/")) {
      dirOnly = true
      line = line.replace(/\/+$/, "")
    }
    if (line === "") continue
    const anchored = line.includes("/")
    if (line.startsWith("/")) line = line.slice(1)
    const source = GlobPattern.toRegExpSource(line, { braces: false })
    const regex = compileLinear(anchored ? `^${source}$` : `(?:^|/)${source}$`)
    rules.push({ negate, dirOnly, regex })
  }
  return { base, rules }
}

const relativeTo = (base: string, path: string): string | undefined => {
  if (base === "") return path
  if (path.startsWith(base + "/")) return path.slice(base.length + 1)
  return undefined
}

/**
 * Whether `path` (relative to the walk root, `/`-separated) is ignored by the rule sets, given
 * broadest first.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isIgnored = (sets: ReadonlyArray<RuleSet>, path: string, isDirectory: boolean): boolean => {
  let ignored = false
  for (const set of sets) {
    const rel = relativeTo(set.base, path)
    if (rel === undefined) continue
    for (const rule of set.rules) {
      if (rule.dirOnly && !isDirectory) continue
      if (rule.regex.test(rel)) ignored = !rule.negate
    }
  }
  return ignored
}
