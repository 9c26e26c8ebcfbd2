/**
 * Glob patterns compiled to regular expressions over `/`-separated relative paths.
 *
 * Supported: `*` (any run of characters except `/`), `?` (one character except `/`), `**` as a
 * whole segment (zero or more segments), `[abc]` / `[a-z]` / `[!abc]` / `[^abc]` classes, `\x`
 * escapes and, when `braces` is on, `{a,b}` alternatives (nestable, may contain globs).
 *
 * Decisions (DEC-10): `*` and `?` also match names starting with `.` (the ignore rules, not the
 * pattern, keep noise out); a `**` that is not a whole segment (`a**b`) behaves like `*`; an
 * unterminated `[` or `{` is taken literally.
 *
 * @since 0.1.0
 */

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/**
 * Options of {@link toRegExpSource}.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobOptions {
  /** expand `{a,b}` alternatives (off for gitignore patterns) */
  readonly braces: boolean
}

const findClosingBrace = (p: string, open: number): number => {
  let depth = 0
  for (let i = open; i < p.length; i++) {
    const c = p[i]
    if (c === "\\") {
      i++
      continue
    }
    if (c === "{") depth++
    else if (c === "}") {
      depth--
      if (depth === 0) return i
    }
  }
  return -1
}

const splitTopLevelCommas = (body: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c === "\\") {
      i++
      continue
    }
    if (c === "{") depth++
    else if (c === "}") depth--
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, i))
      start = i + 1
    }
  }
  parts.push(body.slice(start))
  return parts
}

const classSource = (p: string, open: number): { readonly source: string; readonly end: number } | undefined => {
  let i = open + 1
  let negate = false
  if (p[i] === "!" || p[i] === "^") {
    negate = true
    i++
  }
  let body = ""
  let first = true
  for (; i < p.length; i++) {
    const c = p[i]!
    if (c === "]" && !first) {
      return { source: `[${negate ? "^" : ""}${body}${negate ? "/" : ""}]`, end: i }
    }
    first = false
    if (c === "\\" && i + 1 < p.length) {
      body += escapeRegExp(p[i + 1]!)
      i++
    } else if (c === "-") {
      body += "-"
    } else {
      body += escapeRegExp(c)
    }
  }
  return undefined
}

/**
 * The regular-expression source (no anchors) of a glob pattern.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toRegExpSource = (pattern: string, options: GlobOptions): string => {
  let out = ""
  const p = pattern
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!
    if (c === "\\") {
      if (i + 1 < p.length) {
        out += escapeRegExp(p[i + 1]!)
        i++
      } else {
        out += "\\\\"
      }
      continue
    }
    if (c === "*") {
      if (p[i + 1] === "*") {
        const atSegmentStart = i === 0 || p[i - 1] === "/"
        let j = i
        while (p[j] === "*") j++
        const atSegmentEnd = j === p.length || p[j] === "/"
        if (atSegmentStart && atSegmentEnd) {
          if (j === p.length) {
            // trailing `**` (or the whole pattern): everything below
            out += ".*"
            i = j - 1
          } else {
            // `**/`: zero or more whole segments
            out += "(?:[^/]*/)*"
            i = j
          }
          continue
        }
        out += "[^/]*"
        i = j - 1
        continue
      }
      out += "[^/]*"
      continue
    }
    if (c === "?") {
      out += "[^/]"
      continue
    }
    if (c === "[") {
      const cls = classSource(p, i)
      if (cls !== undefined) {
        out += cls.source
        i = cls.end
        continue
      }
      out += "\\["
      continue
    }
    if (c === "{" && options.braces) {
      const close = findClosingBrace(p, i)
      if (close > i) {
        const alternatives = splitTopLevelCommas(p.slice(i + 1, close))
        if (alternatives.length > 1) {
          out += `(?:${alternatives.map((a) => toRegExpSource(a, options)).join("|")})`
          i = close
          continue
        }
      }
      out += "\\{"
      continue
    }
    out += escapeRegExp(c)
  }
  return out
}

/**
 * Compiles a glob matching a whole relative path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compile = (pattern: string, options: GlobOptions = { braces: true }): RegExp =>
  new RegExp(`^${toRegExpSource(pattern, options)}$`)

/**
 * The literal directory prefix of a pattern (the segments before the first one containing a
 * glob character), used to start a walk as deep as possible. `src/**\/*.ts` → `src`.
 *
 * @since 0.1.0
 * @category utils
 */
export const literalPrefix = (pattern: string): string => {
  const segments = pattern.split("/")
  const literal: Array<string> = []
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i]!
    if (/[*?[\]{}\\]/.test(s)) break
    literal.push(s)
  }
  return literal.join("/")
}
