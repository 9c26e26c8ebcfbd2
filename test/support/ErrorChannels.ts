/**
 * The error-channel check (issue 18): no `Effect<…, unknown>` or `Stream<…, unknown>` in a signature
 * unless the comment right above it (or the same line) says `unknown-error: user callback` — the
 * documented boundaries where a user-supplied callback's failure is wrapped into a tagged error.
 * Pure functions over file texts, so the check itself can be tested on broken input.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The allow-list marker. */
export const marker = "unknown-error: user callback"

/** One text to scan, named by its path (for messages). */
export interface Source {
  readonly path: string
  readonly text: string
}

/** An `Effect`/`Stream` type whose error channel is `unknown` without the marker. */
export interface Finding {
  readonly path: string
  readonly line: number
  readonly type: string
}

const opener = /\b(?:Effect\.Effect|Stream\.Stream|Effect|Stream)</g

/** The top-level type arguments of the generic whose `<` is at `open` (undefined when unbalanced). */
const typeArguments = (text: string, open: number): { readonly args: ReadonlyArray<string>; readonly end: number } | undefined => {
  let depth = 0
  let start = open + 1
  const args: Array<string> = []
  for (let i = open; i < text.length; i++) {
    const c = text[i]
    if (c === "<" || c === "(" || c === "[" || c === "{") depth++
    else if (c === ">" && text[i - 1] === "=") continue // an arrow `=>` inside a function type
    else if (c === ">" || c === ")" || c === "]" || c === "}") {
      depth--
      if (depth === 0) {
        args.push(text.slice(start, i).trim())
        return { args, end: i }
      }
    } else if (c === "," && depth === 1) {
      args.push(text.slice(start, i).trim())
      start = i + 1
    }
  }
  return undefined
}

const isComment = (line: string): boolean => /^\s*(\/\/|\/\*|\*)/.test(line)

/** Whether the occurrence on `lineIndex` is marked (same line, or the comment block right above). */
const marked = (lines: ReadonlyArray<string>, lineIndex: number): boolean => {
  if ((lines[lineIndex] ?? "").includes(marker)) return true
  for (let i = lineIndex - 1; i >= 0; i--) {
    const line = lines[i] ?? ""
    if (!isComment(line)) return false
    if (line.includes(marker)) return true
  }
  return false
}

/** Every unmarked `Effect<…, unknown>` / `Stream<…, unknown>` in `sources`. */
export const findings = (sources: ReadonlyArray<Source>): ReadonlyArray<Finding> => {
  const out: Array<Finding> = []
  for (const source of sources) {
    const lines = source.text.split("\n")
    for (const match of source.text.matchAll(opener)) {
      const open = match.index + match[0].length - 1
      const parsed = typeArguments(source.text, open)
      if (parsed === undefined || parsed.args[1] !== "unknown") continue
      const line = source.text.slice(0, match.index).split("\n").length - 1
      if (marked(lines, line)) continue
      out.push({ path: source.path, line: line + 1, type: source.text.slice(match.index, parsed.end + 1).replace(/\s+/g, " ") })
    }
  }
  return out
}

/** The `.ts` files under `dirs` (relative to `root`). */
export const readSources = (root: string, dirs: ReadonlyArray<string>): ReadonlyArray<Source> => {
  const out: Array<Source> = []
  const walk = (dir: string): void => {
    for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
      const full = Path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith(".ts")) out.push({ path: Path.relative(root, full), text: Fs.readFileSync(full, "utf8") })
    }
  }
  for (const dir of dirs) walk(Path.join(root, dir))
  return out
}
