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
import * as Result from "effect/Result"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { providers } from "../ProviderChoice.js"

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

const HandlerSchema = Schema.Struct({
  type: Schema.String,
  command: Schema.optionalWith(Schema.String, { exact: true }),
  timeout: Schema.optionalWith(Schema.Number.pipe(Schema.positive()), { exact: true }),
  onFailure: Schema.optionalWith(Schema.Literals(["continue", "block"]), { exact: true })
})

const GroupSchema = Schema.Struct({
  matcher: Schema.optionalWith(Schema.String, { exact: true }),
  hooks: Schema.Array(HandlerSchema)
})

const PermissionsSchema = Schema.Struct({
  allow: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  deny: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  ask: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  defaultMode: Schema.optionalWith(Schema.Literal(...permissionModes), { exact: true })
})

/**
 * The schema of the keys we read from any settings file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SettingsSchema = Schema.Struct({
  hooks: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Array(GroupSchema) }), { exact: true }),
  permissions: Schema.optionalWith(PermissionsSchema, { exact: true }),
  stopHookLimit: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { exact: true }),
  provider: Schema.optionalWith(Schema.Literal(...providers), { exact: true }),
  model: Schema.optionalWith(Schema.NonEmptyString, { exact: true }),
  store: Schema.optionalWith(Schema.Literals(["jsonl", "sqlite"]), { exact: true }),
  colour: Schema.optionalWith(Schema.Literal(...colourChoices), { exact: true })
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
  "colour"
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

/** The user's words for a schema expectation (never a schema dump). */
const friendly = (issue: { readonly _tag: string; readonly message: string } | undefined): string => {
  if (issue === undefined) return "is invalid"
  if (issue._tag === "Missing") return "is required"
  const m = /^Expected (.*), actual (.*)$/s.exec(issue.message)
  if (m === null || m[1] === undefined) return "is invalid"
  const expected = m[1]
  const actual = (m[2] ?? "").length > 40 ? `${(m[2] ?? "").slice(0, 40)}…` : m[2] ?? ""
  const what = expected.startsWith("ReadonlyArray")
    ? "a list"
    : expected.startsWith("{")
    ? "an object"
    : expected === "string"
    ? "a string"
    : /positive/.test(expected)
    ? "a positive number"
    : /int/i.test(expected)
    ? "a whole number"
    : expected === "number"
    ? "a number"
    : /^"/.test(expected)
    ? `one of ${expected.replace(/ \| /g, ", ")}`
    : "something else"
  return `must be ${what} (found ${actual})`
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
  const decoded = Schema.decodeUnknownEither(SettingsSchema, { onExcessProperty: "ignore" })(picked)
  if (Result.isFailure(decoded)) {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    const first = issues[0]
    const path = first?.path ?? []
    // a literal union reports one issue per member: name them all
    const literals = issues.filter((i) => renderPath(i.path) === renderPath(path) && /^Expected "/.test(i.message))
    const issue = first !== undefined && literals.length > 1
      ? { ...first, message: `Expected ${literals.map((i) => /^Expected ("[^"]*")/.exec(i.message)?.[1] ?? "").join(" | ")}, actual ${/actual (.*)$/s.exec(first.message)?.[1] ?? ""}` }
      : first
    const line = lineOfPath(text, path)
    const key = renderPath(path)
    return Result.fail(
      new SettingsError({
        file,
        message: `${file}${line === undefined ? "" : ` line ${line}`}: ${key === "" ? "settings" : `"${key}"`} ${friendly(issue)}`
      })
    )
  }
  for (const [event, groups] of Object.entries(decoded.right.hooks ?? {})) {
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
  return Result.succeed({ settings: decoded.right, warnings })
}
