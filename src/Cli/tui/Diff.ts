/**
 * Unified diffs for the chat UI's `edit` / `write` cards: a line diff (longest common subsequence)
 * of the file before and after the call, cut into hunks with `context` unchanged lines around each
 * change, numbered like `diff -u` (`@@ -12,3 +12,4 @@`). Pure: text in, lines out.
 *
 * Inputs larger than {@link MAX_CELLS} (lines before × lines after, after trimming the common head
 * and tail) are not diffed line by line: the changed middle is shown as removed then added.
 *
 * @since 0.1.0
 */

/**
 * One line of a unified diff.
 *
 * @since 0.1.0
 * @category models
 */
export type Line =
  | { readonly kind: "hunk"; readonly text: string }
  | { readonly kind: "context" | "add" | "remove"; readonly text: string }

/**
 * The largest LCS table computed (cells).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_CELLS = 4_000_000

type Op = { readonly kind: "context" | "add" | "remove"; readonly text: string; readonly a: number; readonly b: number }

const splitLines = (text: string): ReadonlyArray<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

// the edit script from `a` to `b`: each op carries its 1-based line numbers in a and b
const script = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<Op> => {
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const ops: Array<Op> = []
  for (let i = 0; i < head; i++) ops.push({ kind: "context", text: a[i]!, a: i + 1, b: i + 1 })
  const am = a.slice(head, a.length - tail)
  const bm = b.slice(head, b.length - tail)
  const n = am.length
  const m = bm.length
  if (n * m > MAX_CELLS) {
    am.forEach((text, i) => ops.push({ kind: "remove", text, a: head + i + 1, b: head + 1 }))
    bm.forEach((text, j) => ops.push({ kind: "add", text, a: head + n + 1, b: head + j + 1 }))
  } else {
    // lcs[i][j] = LCS length of am[i..] and bm[j..]
    const lcs = new Uint32Array((n + 1) * (m + 1))
    const at = (i: number, j: number) => i * (m + 1) + j
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[at(i, j)] = am[i] === bm[j] ? lcs[at(i + 1, j + 1)]! + 1 : Math.max(lcs[at(i + 1, j)]!, lcs[at(i, j + 1)]!)
      }
    }
    let i = 0
    let j = 0
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        ops.push({ kind: "context", text: am[i]!, a: head + i + 1, b: head + j + 1 })
        i++
        j++
      } else if (i < n && (j === m || lcs[at(i + 1, j)]! >= lcs[at(i, j + 1)]!)) {
        // removals before additions, as `diff -u` shows a replaced line
        ops.push({ kind: "remove", text: am[i]!, a: head + i + 1, b: head + j + 1 })
        i++
      } else {
        ops.push({ kind: "add", text: bm[j]!, a: head + i + 1, b: head + j + 1 })
        j++
      }
    }
  }
  for (let k = tail; k > 0; k--) {
    ops.push({ kind: "context", text: a[a.length - k]!, a: a.length - k + 1, b: b.length - k + 1 })
  }
  return ops
}

const range = (start: number, count: number): string =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`

/**
 * The unified diff from `before` to `after` (empty when they are equal). `offset` shifts the line
 * numbers (for a snippet that starts at line `offset + 1` of its file).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unified = (
  before: string,
  after: string,
  options: { readonly context?: number; readonly offset?: number } = {}
): ReadonlyArray<Line> => {
  const context = options.context ?? 3
  const offset = options.offset ?? 0
  const ops = script(splitLines(before), splitLines(after))
  const changed = ops.flatMap((op, index) => (op.kind === "context" ? [] : [index]))
  if (changed.length === 0) return []
  // group changes whose context windows touch into hunks
  const groups: Array<[number, number]> = []
  for (const index of changed) {
    const last = groups[groups.length - 1]
    if (last !== undefined && index - last[1] <= 2 * context) last[1] = index
    else groups.push([index, index])
  }
  const out: Array<Line> = []
  for (const [first, last] of groups) {
    const from = Math.max(0, first - context)
    const to = Math.min(ops.length - 1, last + context)
    const slice = ops.slice(from, to + 1)
    const start = slice[0]!
    const aCount = slice.filter((op) => op.kind !== "add").length
    const bCount = slice.filter((op) => op.kind !== "remove").length
    out.push({
      kind: "hunk",
      text: `@@ -${range(start.a + offset, aCount)} +${range(start.b + offset, bCount)} @@`
    })
    for (const op of slice) out.push({ kind: op.kind, text: op.text })
  }
  return out
}

/**
 * The text of a diff line with its marker (`@@ …`, ` `, `+`, `-`).
 *
 * @since 0.1.0
 * @category utils
 */
export const marked = (line: Line): string =>
  line.kind === "hunk" ? line.text : `${line.kind === "add" ? "+" : line.kind === "remove" ? "-" : " "}${line.text}`
