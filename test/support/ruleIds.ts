/**
 * The rule-id index check (issue 18): every rule id cited in `src/` or `test/` must resolve to exactly one heading
 * anchor under `docs/`. Pure functions over file texts, so the check itself can be tested on broken input.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** A rule or case id as the code cites it: `V-3`, `L-12.14`, `AC-52`, `DEC-11`, `HB-4`, `K-15`. */
export const ruleIdPattern: RegExp = /\b(?:AC|DEC|HB|[ACDEHKLPSTUVWX])-\d+(?:\.\d+)*\b/g

/** A markdown heading whose first word is a rule id defines that id's anchor. */
const headingPattern = /^#{2,6}\s+((?:AC|DEC|HB|[ACDEHKLPSTUVWX])-\d+(?:\.\d+)*)(?=\s|$)/gm

/** One text to scan, named by its path (for messages). */
export interface Source {
  readonly path: string
  readonly text: string
}

/** Every id cited in `sources`, with the first file citing it. */
export const citedIds = (sources: ReadonlyArray<Source>): ReadonlyMap<string, string> => {
  const cited = new Map<string, string>()
  for (const source of sources) {
    for (const match of source.text.matchAll(ruleIdPattern)) {
      if (!cited.has(match[0])) cited.set(match[0], source.path)
    }
  }
  return cited
}

/** Every anchor defined in `docs`, with every file defining it. */
export const anchors = (docs: ReadonlyArray<Source>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const defined = new Map<string, Array<string>>()
  for (const doc of docs) {
    for (const match of doc.text.matchAll(headingPattern)) {
      const id = match[1]!
      defined.set(id, [...(defined.get(id) ?? []), doc.path])
    }
  }
  return defined
}

/** The problems found: dangling citations and ids defined more than once. Empty when the index is sound. */
export const checkRuleIds = (code: ReadonlyArray<Source>, docs: ReadonlyArray<Source>): ReadonlyArray<string> => {
  const defined = anchors(docs)
  const problems: Array<string> = []
  for (const [id, file] of citedIds(code)) {
    if (!defined.has(id)) problems.push(`${id} (cited in ${file}) has no heading in docs/`)
  }
  for (const [id, files] of defined) {
    if (files.length > 1) problems.push(`${id} is defined ${files.length} times (${files.join(", ")})`)
  }
  return problems
}

/** Reads every file under `dir` whose name ends with one of `extensions`, skipping `node_modules`. */
export const readTree = (dir: string, extensions: ReadonlyArray<string>, root: string = dir): Array<Source> => {
  const out: Array<Source> = []
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const full = Path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") out.push(...readTree(full, extensions, root))
    } else if (extensions.some((ext) => entry.name.endsWith(ext))) {
      out.push({ path: Path.relative(root, full), text: Fs.readFileSync(full, "utf8") })
    }
  }
  return out
}
