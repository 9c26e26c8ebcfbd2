/**
 * `--script` errors in the user's words: one line naming the file and the first problem, with
 * its place (`line 3, column 7` for malformed JSON; the JSON path, e.g. `responses[1][0].toolCall.id`,
 * for a wrong shape or an unknown key) instead of the decoder's schema dump.
 *
 * Decisions (DEC-10): of several problems the deepest one is shown (a union reports one problem
 * per alternative; the deepest is the one the author meant), preferring a wrong value over an
 * unknown key over a missing key at the same depth, with a count of the others.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Scripted from "../Adapter/Scripted.js"

// the input is reported so that a message can quote the wrong value
const decode = Schema.decodeUnknownResult(Scripted.ScriptFile, {
  errors: "all",
  onExcessProperty: "error",
  reportInput: true
})

/** One problem of a decoding failure: where, what kind, and its message. */
interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly kind: "Missing" | "Unexpected" | "Value"
  readonly message: string
}

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

// the issue tree flattened to its problems (missing and unknown keys kept apart from wrong values)
const problems = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<Problem> => {
  switch (issue._tag) {
    case "Pointer":
      return problems(issue.issue, [...path, ...issue.path])
    case "Composite":
      return issue.issues.flatMap((inner) => problems(inner, path))
    case "AnyOf":
      if (issue.issues.length > 0) return issue.issues.flatMap((inner) => problems(inner, path))
      break
    case "MissingKey":
      return [{ path, kind: "Missing", message: "Missing key" }]
    case "UnexpectedKey":
      return [{ path, kind: "Unexpected", message: "unknown key (not allowed here)" }]
  }
  return standard(issue).issues.map((i) => ({
    path: [...path, ...(i.path ?? []).map((k) => typeof k === "object" ? k.key : k)],
    kind: "Value",
    message: i.message
  }))
}

/**
 * A JSON path (`responses[1][0].toolCall.id`, `$` for the root).
 *
 * @since 0.1.0
 * @category utils
 */
export const pathText = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += out === "" ? key : `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out === "" ? "$" : out
}

const lineColumn = (text: string, position: number): string => {
  const before = text.slice(0, position)
  const line = before.split("\n").length
  const column = position - before.lastIndexOf("\n")
  return `line ${line}, column ${column}`
}

const flat = (text: string, max = 160): string => {
  const one = text.replace(/\s*\n\s*/g, " ")
  return one.length > max ? `${one.slice(0, max - 1)}…` : one
}

// whether `prefix` is valid JSON so far (complete, or cut off at its end)
const validSoFar = (prefix: string): boolean => {
  try {
    JSON.parse(prefix)
    return true
  } catch (e) {
    const message = e instanceof Error ? e.message : ""
    const at = /position (\d+)/.exec(message)
    return /end of JSON input/.test(message) || (at !== null && Number(at[1]) >= prefix.length)
  }
}

// where JSON.parse fails when its message gives no position: the shortest failing prefix
// (validity of prefixes is monotonic), found by bisection
const errorPosition = (json: string): number => {
  let lo = 0
  let hi = json.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (validSoFar(json.slice(0, mid + 1))) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The one-line description of what is wrong with the script text `json` of `file`, or
 * `undefined` when it decodes.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (file: string, json: string): string | undefined => {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    const position = /position (\d+)/.exec(message)
    const place = ` at ${lineColumn(json, position === null ? errorPosition(json) : Number(position[1]))}`
    return `error: invalid script ${file}: malformed JSON${place}: ${flat(message.replace(/ in JSON at position \d+.*$/s, "").replace(/, (\.\.\.)?".*" is not valid JSON$/s, ""))}`
  }
  const decoded = decode(value)
  if (Result.isSuccess(decoded)) return undefined
  const issues = problems(decoded.failure.issue, [])
  // deepest first; at the same depth a wrong value, then an unknown key, then a missing key
  const rank = (i: Problem) => i.path.length * 3 + (i.kind === "Missing" ? 0 : i.kind === "Unexpected" ? 1 : 2)
  const deepest = issues.reduce((a, b) => (rank(b) > rank(a) ? b : a), issues[0]!)
  const others = issues.length - 1
  const message = flat(deepest.message)
  return `error: invalid script ${file}: ${pathText(deepest.path)}: ${message}${
    others > 0 ? ` (and ${others} more problem${others === 1 ? "" : "s"})` : ""
  }`
}

/**
 * {@link describe} for a file on disk (`undefined` when it decodes; a read failure is described
 * by the caller, which has just read it).
 *
 * @since 0.1.0
 * @category utils
 */
export const fromFile = (file: string): Effect.Effect<string | undefined, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
    Effect.map((json) => describe(file, json)),
    Effect.catch(() => Effect.succeed(undefined))
  )
