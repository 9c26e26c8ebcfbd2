/**
 * One settings file (HB-1, HB-2, HB-12): its schema and its decoding into typed settings, with
 * one-line errors naming the file, the line and the key.
 *
 * Two dialects share the shape `{hooks?, permissions?}`:
 * - `"harness"`: our own files (`settings.json`, `settings.local.json`), which may also carry
 *   `stopHookLimit` and the CLI defaults `provider`, `model`, `store` and `colour`
 *   (`auto | always | never`); unknown top-level keys are reported as warnings.
 * - `"claude"` / `"codex"`: `.claude/settings*.json` and `.codex/hooks.json`; only `hooks` and
 *   `permissions` are read, every other key (Claude Code has many) is left alone silently.
 *
 * @since 0.1.0
 */
import * as Formatter from "effect/Formatter"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import { providers } from "../Adapter/ProviderNames.js"

/**
 * Where a settings file's rules come from, and how its matchers are read (HB-4).
 *
 * @since 0.1.0
 * @category models
 */
export type Dialect = "harness" | "claude" | "codex"

/**
 * The permission modes (HB-12).
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions"

/**
 * Every permission mode, in CLI order.
 *
 * @since 0.1.0
 * @category constants
 */
export const permissionModes: ReadonlyArray<PermissionMode> = ["default", "acceptEdits", "plan", "bypassPermissions"]

/**
 * The `colour` setting: `auto` (a terminal and no `NO_COLOR`), `always`, `never`.
 *
 * @since 0.1.0
 * @category constants
 */
export const colourChoices = ["auto", "always", "never"] as const

// the `expected` annotations are the words of the error messages (see `friendly`)
const isPositive = Schema.isGreaterThan(0, { expected: "a positive number" })
const PositiveInt = Schema.Number.check(Schema.isInt({ expected: "a whole number" }), isPositive)
const NonEmptyString = Schema.String.check(Schema.isNonEmpty({ expected: "a non-empty string" }))

const HandlerSchema = Schema.Struct({
  type: Schema.String,
  command: Schema.optionalKey(Schema.String),
  timeout: Schema.optionalKey(Schema.Number.check(isPositive)),
  onFailure: Schema.optionalKey(Schema.Literals(["continue", "block"]))
})

const GroupSchema = Schema.Struct({
  matcher: Schema.optionalKey(Schema.String),
  hooks: Schema.Array(HandlerSchema)
})

const PermissionsSchema = Schema.Struct({
  allow: Schema.optionalKey(Schema.Array(Schema.String)),
  deny: Schema.optionalKey(Schema.Array(Schema.String)),
  ask: Schema.optionalKey(Schema.Array(Schema.String)),
  defaultMode: Schema.optionalKey(Schema.Literals(permissionModes))
})

/**
 * The schema of the keys we read from any settings file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SettingsSchema = Schema.Struct({
  hooks: Schema.optionalKey(Schema.Record(Schema.String, Schema.Array(GroupSchema))),
  permissions: Schema.optionalKey(PermissionsSchema),
  stopHookLimit: Schema.optionalKey(PositiveInt),
  provider: Schema.optionalKey(Schema.Literals(providers)),
  model: Schema.optionalKey(NonEmptyString),
  store: Schema.optionalKey(Schema.Literals(["jsonl", "sqlite"])),
  colour: Schema.optionalKey(Schema.Literals(colourChoices)),
  /** DEC-16: what a headless resume does with a side-effecting tool call a crash left in doubt */
  resume: Schema.optionalKey(Schema.Struct({ inDoubtTools: Schema.optionalKey(Schema.Literals(["report", "rerun"])) }))
})

/**
 * A decoded settings file.
 *
 * @since 0.1.0
 * @category models
 */
export type Settings = typeof SettingsSchema.Type

/**
 * A hook handler as configured.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = typeof HandlerSchema.Type

/**
 * The top-level keys of our own files.
 *
 * @since 0.1.0
 * @category constants
 */
export const knownKeys: ReadonlySet<string> = new Set([
  "hooks",
  "permissions",
  "stopHookLimit",
  "$schema",
  "provider",
  "model",
  "store",
  "colour",
  "resume"
])

/**
 * A settings file is unreadable or malformed. `message` is one line naming file, line and key.
 *
 * @since 0.1.0
 * @category errors
 */
export class SettingsError extends Schema.TaggedError<SettingsError>()("SettingsError", {
  file: Schema.String,
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "INVALID_SETTINGS" as const
}

/**
 * A decoded file with the warnings it produced.
 *
 * @since 0.1.0
 * @category models
 */
export interface Decoded {
  readonly settings: Settings
  readonly warnings: ReadonlyArray<string>
}

/** 1-based line of a character offset. */
const lineAt = (text: string, offset: number): number => text.slice(0, Math.max(0, offset)).split("\n").length

/** The line of the last key of `path` in the text (best effort: first occurrence after its parents). */
const lineOfPath = (text: string, path: ReadonlyArray<PropertyKey>): number | undefined => {
  let from = 0
  let found: number | undefined
  for (const key of path) {
    if (typeof key !== "string") continue
    const at = text.indexOf(JSON.stringify(key), from)
    if (at < 0) break
    from = at
    found = at
  }
  return found === undefined ? undefined : lineAt(text, found)
}

/** The first failure of an issue tree and its path (decoding stops at the first failure). */
const locate = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>
): { readonly issue: SchemaIssue.Issue; readonly path: ReadonlyArray<PropertyKey> } => {
  switch (issue._tag) {
    case "Pointer":
      return locate(issue.issue, [...path, ...issue.path])
    case "Composite":
      return locate(issue.issues[0], path)
    case "Encoding":
      return locate(issue.issue, path)
    default:
      return { issue, path }
  }
}

/** The user's words for what a schema node accepts. */
const expectedOf = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Arrays":
      return "a list"
    case "Objects":
      return "an object"
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Literal":
      return Formatter.format(ast.literal)
    case "Union": {
      const literals = ast.types.flatMap((t) => (t._tag === "Literal" ? [Formatter.format(t.literal)] : []))
      return literals.length === ast.types.length ? `one of ${literals.join(", ")}` : "something else"
    }
    default:
      return "something else"
  }
}

/** The user's words for a schema failure (never a schema dump). */
const friendly = (issue: SchemaIssue.Issue): string => {
  if (issue._tag === "MissingKey") return "is required"
  const what = issue._tag === "Filter"
    ? typeof issue.filter.annotations?.expected === "string" ? issue.filter.annotations.expected : undefined
    : issue._tag === "InvalidType" || issue._tag === "AnyOf"
    ? expectedOf(issue.ast)
    : undefined
  if (what === undefined) return "is invalid"
  if (!SchemaIssue.hasInput(issue)) return `must be ${what}`
  const actual = Formatter.format(issue.input)
  return `must be ${what} (found ${actual.length > 40 ? `${actual.slice(0, 40)}…` : actual})`
}

const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

/**
 * The offset of the first JSON syntax error (a small recursive-descent scan: Node's `JSON.parse`
 * messages do not always carry a position).
 *
 * @since 0.1.0
 * @category utils
 */
export const syntaxErrorOffset = (text: string): number => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++
  }
  const fail = (): never => {
    throw i
  }
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length
    else fail()
  }
  const string = () => {
    i++
    while (i < text.length && text[i] !== "\"") {
      if (text[i] === "\\") i++
      else if (text.charCodeAt(i) < 0x20) fail()
      i++
    }
    if (i >= text.length) fail()
    i++
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      ws()
      if (text[i] === "}") return void i++
      for (;;) {
        ws()
        if (text[i] !== "\"") fail()
        string()
        ws()
        if (text[i] !== ":") fail()
        i++
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "}") return void i++
        else fail()
      }
    }
    if (c === "[") {
      i++
      ws()
      if (text[i] === "]") return void i++
      for (;;) {
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "]") return void i++
        else fail()
      }
    }
    if (c === "\"") return string()
    if (c === "t") return literal("true")
    if (c === "f") return literal("false")
    if (c === "n") return literal("null")
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i))
    if (m === null) fail()
    else i += m[0].length
  }
  try {
    value()
    ws()
    return i < text.length ? i : text.length
  } catch (at) {
    return typeof at === "number" ? at : 0
  }
}

// the input is reported so that a message can quote what was found
const decodeSettings = Schema.decodeUnknownResult(SettingsSchema, { onExcessProperty: "ignore", reportInput: true })

/**
 * Decodes the text of a settings file (pure). `file` is the display path used in messages.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (file: string, text: string, dialect: Dialect): Result.Result<Decoded, SettingsError> => {
  let raw: unknown
  try {
    raw = text.trim() === "" ? {} : JSON.parse(text)
  } catch {
    const line = lineAt(text, syntaxErrorOffset(text))
    return Result.fail(new SettingsError({ file, message: `${file} line ${line}: not valid JSON` }))
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return Result.fail(new SettingsError({ file, message: `${file} line 1: settings must be a JSON object` }))
  }
  const record = raw as Record<string, unknown>
  const picked: Record<string, unknown> = {}
  const warnings: Array<string> = []
  for (const [key, value] of Object.entries(record)) {
    if (dialect === "harness") {
      if (knownKeys.has(key)) picked[key] = value
      else warnings.push(`${file}: unknown key "${key}" ignored`)
    } else if (key === "hooks" || key === "permissions") {
      picked[key] = value
    }
  }
  // Claude Code permissions carry more keys (additionalDirectories, …): keep only what we read
  if (dialect !== "harness" && typeof picked["permissions"] === "object" && picked["permissions"] !== null) {
    const p = picked["permissions"] as Record<string, unknown>
    picked["permissions"] = Object.fromEntries(
      Object.entries(p).filter(([k]) => k === "allow" || k === "deny" || k === "ask" || k === "defaultMode")
    )
  }
  const decoded = decodeSettings(picked)
  if (Result.isFailure(decoded)) {
    const { issue, path } = locate(decoded.failure.issue, [])
    const line = lineOfPath(text, path)
    const key = renderPath(path)
    return Result.fail(
      new SettingsError({
        file,
        message: `${file}${line === undefined ? "" : ` line ${line}`}: ${key === "" ? "settings" : `"${key}"`} ${friendly(issue)}`
      })
    )
  }
  for (const [event, groups] of Object.entries(decoded.success.hooks ?? {})) {
    groups.forEach((group, g) =>
      group.hooks.forEach((handler, h) => {
        if (handler.type !== "command") {
          warnings.push(`${file}: hooks.${event}[${g}].hooks[${h}] has unsupported type "${handler.type}" (only "command" runs)`)
        } else if (handler.command === undefined || handler.command.trim() === "") {
          warnings.push(`${file}: hooks.${event}[${g}].hooks[${h}] has no command`)
        }
      })
    )
  }
  return Result.succeed({ settings: decoded.success, warnings })
}
