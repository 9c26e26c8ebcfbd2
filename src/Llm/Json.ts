/**
 * Lossless JSON (V-11): the only data shape that may enter the session log, a replay state or a
 * tool result. `null`, booleans, finite numbers except `-0`, strings, dense plain arrays and plain
 * (or null-prototype) objects, recursively. Everything else is rejected with the path that broke.
 *
 * Validation reads every property exactly once and copies in the same pass, so a getter cannot
 * answer differently to the check and to the copy. `snapshot` also deep-freezes the copy.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/**
 * A lossless JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject

/**
 * A lossless JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonObject {
  readonly [key: string]: Json
}

/**
 * Why a value is not lossless JSON; `path` is like `$.a[0].b`.
 *
 * @since 0.1.0
 * @category errors
 */
export class JsonError extends Schema.TaggedError<JsonError>()("JsonError", {
  path: Schema.String,
  reason: Schema.String
}) {
  /** Stable code shared by every non-JSON rejection. */
  readonly code = "INVALID_JSON" as const
  override get message(): string {
    return `not lossless JSON at ${this.path}: ${this.reason}`
  }
}

class Reject {
  constructor(readonly path: string, readonly reason: string) {}
}

const describe = (value: unknown): string => {
  if (value === null) return "null"
  if (typeof value !== "object") return typeof value
  const proto: unknown = Object.getPrototypeOf(value)
  const ctor = proto !== null && typeof proto === "object" && "constructor" in proto ? proto.constructor : undefined
  return typeof ctor === "function" && ctor.name !== "" ? `${ctor.name} instance` : "exotic object"
}

type Path = Array<string | number>

const formatPath = (path: Path): string => {
  let out = "$"
  for (const key of path) {
    out += typeof key === "number"
      ? `[${key}]`
      : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
  }
  return out
}

// The path is a stack of keys, formatted only when a value is rejected (the hot path builds no
// strings); ancestors are the objects on the current branch (cycle detection).
const copy = (value: unknown, path: Path, ancestors: Array<object>, freeze: boolean): Json => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value
    case "number":
      if (!Number.isFinite(value)) throw new Reject(formatPath(path), `non-finite number ${String(value)}`)
      if (value === 0 && 1 / value < 0) throw new Reject(formatPath(path), "negative zero")
      return value
    case "object": {
      if (value === null) return null
      if (ancestors.includes(value)) throw new Reject(formatPath(path), "cycle")
      const proto: unknown = Object.getPrototypeOf(value)
      if (Array.isArray(value)) {
        if (proto !== Array.prototype) throw new Reject(formatPath(path), "array subclass")
        ancestors.push(value)
        const length = value.length
        const out: Array<Json> = []
        for (let i = 0; i < length; i++) {
          path.push(i)
          if (!(i in value)) throw new Reject(formatPath(path), "hole in sparse array")
          out.push(copy(value[i], path, ancestors, freeze))
          path.pop()
        }
        ancestors.pop()
        return freeze ? Object.freeze(out) : out
      }
      if (proto !== Object.prototype && proto !== null) throw new Reject(formatPath(path), describe(value))
      if (Object.getOwnPropertySymbols(value).length > 0) throw new Reject(formatPath(path), "symbol-keyed property")
      ancestors.push(value)
      const out: Record<string, Json> = {}
      const record = value as Record<string, unknown>
      for (const key of Object.keys(record)) {
        path.push(key)
        const child = record[key]
        if (child === undefined) throw new Reject(formatPath(path), "undefined property value")
        const copied = copy(child, path, ancestors, freeze)
        if (key === "__proto__") {
          // defineProperty keeps a "__proto__" key an own data property instead of a prototype change
          Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true })
        } else {
          out[key] = copied
        }
        path.pop()
      }
      ancestors.pop()
      return freeze ? Object.freeze(out) : out
    }
    default:
      throw new Reject(formatPath(path), typeof value)
  }
}

const run = (value: unknown, freeze: boolean): Result.Result<Json, JsonError> => {
  try {
    return Result.succeed(copy(value, [], [], freeze))
  } catch (e) {
    if (e instanceof Reject) return Result.fail(new JsonError({ path: e.path, reason: e.reason }))
    // a throwing getter or proxy trap: the value cannot be read losslessly
    return Result.fail(new JsonError({ path: "$", reason: `unreadable value (${e instanceof Error ? e.message : String(e)})` }))
  }
}

/**
 * Validates and copies in one pass. The copy shares nothing with the input.
 *
 * @since 0.1.0
 * @category constructors
 */
export const copyJson = (value: unknown): Result.Result<Json, JsonError> => run(value, false)

/**
 * Validates, copies and deep-freezes in one pass: a detached, immutable snapshot (S-4).
 *
 * @since 0.1.0
 * @category constructors
 */
export const snapshot = (value: unknown): Result.Result<Json, JsonError> => run(value, true)

/**
 * {@link copyJson} typed as its input: a lossless-JSON copy has the input's own shape, so callers
 * that copy a typed value need no cast back.
 *
 * @since 0.1.0
 * @category constructors
 */
export const copyOf = <A>(value: A): Result.Result<A, JsonError> => sameShape(run(value, false))

/**
 * {@link snapshot} typed as its input (see {@link copyOf}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const snapshotOf = <A>(value: A): Result.Result<A, JsonError> => sameShape(run(value, true))

// the one place the copy's type is narrowed back to the input's: `run` returns a structural copy
// of its input (same keys, same values) or fails
const sameShape = <A>(result: Result.Result<Json, JsonError>): Result.Result<A, JsonError> =>
  result as Result.Result<never, JsonError>

/**
 * `true` when the value is lossless JSON (reads it once, copies nothing observable).
 *
 * @since 0.1.0
 * @category guards
 */
export const isJson = (value: unknown): value is Json => Result.isSuccess(run(value, false))

/**
 * Schema of a lossless JSON value; decoding validates per V-11 and returns a detached copy.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Json: Schema.Codec<Json> = Schema.declareConstructor<Json>()(
  [],
  () => (input, _ast, options) =>
    Result.match(copyJson(input), {
      onFailure: (e) => Effect.fail(new SchemaIssue.InvalidValue({ message: e.message }, input, options)),
      onSuccess: Effect.succeed
    }),
  { identifier: "Json", description: "a lossless JSON value (V-11)" }
)

/**
 * Schema of a lossless JSON object (used for extension payloads and JSON Schema documents).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonObject: Schema.Codec<JsonObject> = Schema.declare(
  (u: unknown): u is JsonObject =>
    typeof u === "object" && u !== null && !Array.isArray(u) && isJson(u),
  { identifier: "JsonObject", description: "a lossless JSON object" }
)

/**
 * Canonical JSON text: object keys sorted, no whitespace. Used for equality of headers and seeds.
 *
 * @since 0.1.0
 * @category utils
 */
export const canonical = (value: Json): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${(value as ReadonlyArray<Json>).map(canonical).join(",")}]`
  const obj = value as JsonObject
  const keys = Object.keys(obj).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(obj[k] as Json)}`).join(",")}}`
}

/**
 * Structural equality of two JSON values (order-insensitive for object keys).
 *
 * @since 0.1.0
 * @category utils
 */
export const equals = (a: Json, b: Json): boolean => canonical(a) === canonical(b)
