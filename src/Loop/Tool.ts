/**
 * Tool definitions (§9): a name, a model-facing description and JSON Schema, and a body that is an
 * `Effect` with its own requirements. Three constructors:
 *
 * - {@link make}: parameters are an `effect/Schema` struct. The same schema produces the JSON
 *   Schema sent to the model (inlined: no `$ref`/`$defs`, no `$schema`) and decodes the arguments
 *   before the body runs. A decoding failure is a {@link ToolArgsError} (`INVALID_ARGS`), which the
 *   pipeline turns into an error result the model can read (never a crash).
 * - {@link fromProperties}: the T-10 property DSL, validated with exactly T-10's messages.
 * - {@link raw}: a raw JSON Schema; the body receives the arguments unvalidated (T-10: raw tools
 *   validate themselves).
 *
 * Host-only fields (`execute`, `timeoutMs`, `isConcurrencySafe`, presenters) never reach a
 * {@link ToolSchema} (V-7): {@link toSchema} copies name, description and parameters only.
 *
 * Decisions where the spec is silent (DEC-10):
 * - T-10 "wrong type" uses the article English needs: `"a" must be a string`, `"o" must be an
 *   object`, `"l" must be an array` (matching the top-level `"arguments" must be an object`).
 * - Enum lists are rendered as JSON: `"mode" must be one of ["r","w"]`.
 * - Schema tools report issues in the T-10 style: `missing required property "<path>"` for a
 *   missing (or `undefined`) key, `"<path>" must be <expected>` for a type mismatch where the
 *   expected shape is a keyword/literal/struct/array, `"<path>" must be one of [...]` for literal
 *   unions, and `"<path>" is invalid: <Effect's message>` for refinements and anything else.
 * - A recursive parameter schema cannot be inlined; its `$defs` are kept at the top level.
 * - A classifier (`isConcurrencySafe`) and the presenters receive the decoded arguments; when the
 *   arguments do not decode they are not called (classifier → exclusive, presenters → fallback).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as AST from "effect/SchemaAST"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import type { CallId, ContentBlock } from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import type { ToolSchema } from "../Llm/Message.js"
import type { AgentControl } from "./AgentControl.js"
import type { HookContext } from "./HookContext.js"
import type { StepSignal } from "./StepSignal.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-harness/Loop/Tool")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Invalid tool arguments (T-10). `message` is `invalid arguments: <v1>; <v2>`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolArgsError extends Schema.TaggedError<ToolArgsError>()("ToolArgsError", {
  message: Schema.String,
  violations: Schema.Array(Schema.String)
}) {
  /** Stable code (T-10). */
  readonly code = "INVALID_ARGS" as const
}

/**
 * Builds a {@link ToolArgsError} from violations in declaration order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const argsError = (violations: ReadonlyArray<string>): ToolArgsError =>
  new ToolArgsError({ message: `invalid arguments: ${violations.join("; ")}`, violations })

/**
 * What a tool body sees (T-9, L-13).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolRunContext {
  /** the model's call id */
  readonly callId: CallId
  /** the tool name as called */
  readonly name: string
  /**
   * stable per call across a crash and a resume (session, turn, step, call id; DEC-16): a tool that
   * can be idempotent uses it to recognise a re-run of the same call
   */
  readonly idempotencyKey: string
  /** the agent, to `steer`/`inject`/`cancel` from a tool */
  readonly agent: AgentControl
  /** the abort signal of this call (the step's, or a narrower one from a wrapper or timeout) */
  readonly signal: StepSignal
  /** attaches a context that survives a throwing body, kept in call order (T-9) */
  readonly deferContext: (context: HookContext) => Effect.Effect<void>
}

/**
 * What a body returns: content blocks, or content plus durable model-hidden `meta` (T-11).
 *
 * @since 0.1.0
 * @category models
 */
export type ToolOutput =
  | ReadonlyArray<ContentBlock>
  | { readonly content: ReadonlyArray<ContentBlock>; readonly meta?: Json.Json }

/**
 * The structured error of a result (`{name, code}`; model-hidden, copied onto `tool/result`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResultError {
  readonly name: string
  readonly code: string
}

/**
 * The outcome of one call as the pipeline carries it (T-9).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolExecutionResult {
  readonly content: ReadonlyArray<ContentBlock>
  readonly isError: boolean
  readonly error?: ToolResultError
  readonly additionalContexts?: ReadonlyArray<HookContext>
  readonly meta?: Json.Json
}

/**
 * A UI card (T-14; never model-visible).
 *
 * @since 0.1.0
 * @category models
 */
export type ToolView =
  | { readonly card: "generic"; readonly title: string; readonly subtitle?: string; readonly body?: string }
  | { readonly card: "terminal"; readonly title: string; readonly command: string; readonly output?: string; readonly exitCode?: number }
  | { readonly card: "diff"; readonly title: string; readonly path: string; readonly diff: string }

/**
 * What running a tool does to the world (DEC-16): `read-only` and `idempotent` tools run again when
 * a crash left their call in doubt; a `side-effecting` one (the default) is never re-run silently.
 *
 * @since 0.1.0
 * @category models
 */
export type Effects = "read-only" | "idempotent" | "side-effecting"

/**
 * A tool whose body needs `R`. Built with {@link make}, {@link fromProperties} or {@link raw}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<out R = never> {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly description: string
  /** the model-facing JSON Schema (frozen) */
  readonly parameters: Json.JsonObject
  /**
   * validates (per the tool's kind) then runs the body; a validation failure is a {@link ToolArgsError}.
   * unknown-error: user callback. The pipeline turns any failure into an error tool result.
   */
  readonly execute: (args: unknown, context: ToolRunContext) => Effect.Effect<ToolOutput, unknown, R>
  /** per-call deadline (T-15) */
  readonly timeoutMs?: number
  /** parallel only when this returns exactly `true` (L-14); validates softly */
  readonly isConcurrencySafe?: (args: unknown) => boolean
  /** what a call does to the world (absent: `side-effecting`) */
  readonly effects?: Effects
  /** UI presenters (T-14); validate softly */
  readonly presentCall?: (args: unknown) => ToolView | undefined
  readonly presentResult?: (args: unknown, result: ToolExecutionResult) => ToolView | undefined
}

/**
 * Any tool, whatever its requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Tool<unknown>

/**
 * The requirements of a tool type (distributes over unions).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<T> = T extends Tool<infer R> ? R : never

/**
 * `true` for a {@link Tool}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTool = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

/**
 * Host-only options shared by every constructor; `A` is the body's view of the arguments.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommonOptions<A> {
  readonly name: string
  readonly description: string
  readonly timeoutMs?: number
  readonly isConcurrencySafe?: (args: A) => boolean
  /** what a call does to the world (default `side-effecting`; DEC-16) */
  readonly effects?: Effects
  readonly presentCall?: (args: A) => ToolView | undefined
  readonly presentResult?: (args: A, result: ToolExecutionResult) => ToolView | undefined
}

const assertName = (name: string, description: string): void => {
  if (typeof name !== "string" || name.length === 0) throw new TypeError("Tool: name must be a non-empty string")
  if (typeof description !== "string") throw new TypeError(`Tool "${name}": description must be a string`)
}

const assertTimeout = (name: string, timeoutMs: number | undefined): void => {
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new TypeError(`Tool "${name}": timeoutMs must be a positive finite number`)
  }
}

const freezeSchema = (name: string, parameters: unknown): Json.JsonObject => {
  const snap = Json.snapshot(parameters)
  if (Result.isFailure(snap)) throw new TypeError(`Tool "${name}": parameters are not lossless JSON (${snap.failure.message})`)
  const value = snap.success
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`Tool "${name}": parameters must be a JSON object`)
  }
  return value as Json.JsonObject
}

const soft = <A, B>(decode: (args: unknown) => Result.Result<A, unknown>, f: ((a: A) => B) | undefined, fallback: B) =>
  f === undefined
    ? undefined
    : (args: unknown): B => {
      try {
        const decoded = decode(args)
        return Result.isSuccess(decoded) ? f(decoded.success) : fallback
      } catch {
        return fallback
      }
    }

const build = <A, E, R>(
  options: CommonOptions<A> & {
    readonly execute: (args: A, context: ToolRunContext) => Effect.Effect<ToolOutput, E, R>
  },
  parameters: Json.JsonObject,
  decode: (args: unknown) => Result.Result<A, ToolArgsError>
): Tool<R> => {
  const tool: {
    -readonly [K in keyof Tool<R>]: Tool<R>[K]
  } = {
    [TypeId]: TypeId,
    name: options.name,
    description: options.description,
    parameters,
    execute: (args, context) =>
      Effect.suspend((): Effect.Effect<ToolOutput, E | ToolArgsError, R> => {
        const decoded = decode(args)
        return Result.isFailure(decoded) ? Effect.fail(decoded.failure) : options.execute(decoded.success, context)
      })
  }
  if (options.timeoutMs !== undefined) tool.timeoutMs = options.timeoutMs
  if (options.effects !== undefined) tool.effects = options.effects
  const classify = soft(decode, options.isConcurrencySafe, false)
  if (classify !== undefined) tool.isConcurrencySafe = classify
  const presentCall = soft(decode, options.presentCall, undefined)
  if (presentCall !== undefined) tool.presentCall = presentCall
  const presentResult = options.presentResult
  if (presentResult !== undefined) {
    tool.presentResult = (args, result) => {
      try {
        const decoded = decode(args)
        return Result.isSuccess(decoded) ? presentResult(decoded.success, result) : undefined
      } catch {
        return undefined
      }
    }
  }
  return Object.freeze(tool)
}

const isPlainObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const topLevelViolation = `"arguments" must be an object`

// ---------------------------------------------------------------------------------------------
// Schema tools

const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out === "" ? "arguments" : out
}

const literalsOf = (ast: AST.AST): ReadonlyArray<AST.LiteralValue> | undefined => {
  if (AST.isLiteral(ast)) return [ast.literal]
  if (AST.isEnum(ast)) return ast.enums.map(([, v]) => v)
  if (AST.isUnion(ast)) {
    const out: Array<AST.LiteralValue> = []
    for (const member of ast.types) {
      const lits = literalsOf(member)
      if (lits === undefined) return undefined
      out.push(...lits)
    }
    return out
  }
  return undefined
}

const renderLiterals = (lits: ReadonlyArray<AST.LiteralValue>): string =>
  `one of [${lits.map((l) => (typeof l === "bigint" ? `${l}n` : JSON.stringify(l))).join(",")}]`

/** What a schema node expects, in T-10 words (a node's checks, e.g. `Int`, do not change its base type). */
const expected = (ast: AST.AST): string | undefined => {
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Objects":
      return "an object"
    case "Arrays":
      return ast.elements.length === 0 ? "an array" : "a tuple"
    case "Literal":
    case "Enum":
      return renderLiterals(literalsOf(ast) ?? [])
    case "Union": {
      const lits = literalsOf(ast)
      if (lits !== undefined) return renderLiterals(lits)
      const parts = ast.types.map(expected)
      return parts.every((p) => p !== undefined) ? parts.join(" or ") : undefined
    }
    case "Suspend":
      return expected(ast.thunk())
    default:
      return undefined
  }
}

/** The input value at `path` (`undefined` when any step is missing). */
const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let value = root
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

const formatIssue = SchemaIssue.makeFormatterDefault()

const invalid = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): string =>
  `"${formatPath(path)}" is invalid: ${formatIssue(issue)}`

const collect = (
  issue: SchemaIssue.Issue,
  root: unknown,
  path: ReadonlyArray<PropertyKey>,
  out: Array<string>
): void => {
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, root, [...path, ...issue.path], out)
    case "Composite": {
      for (const i of issue.issues) collect(i, root, path, out)
      return
    }
    case "AnyOf": {
      const e = expected(issue.ast)
      if (e !== undefined || issue.issues.length === 0) {
        out.push(e !== undefined ? `"${formatPath(path)}" must be ${e}` : invalid(issue, path))
        return
      }
      for (const i of issue.issues) collect(i, root, path, out)
      return
    }
    case "MissingKey":
      out.push(`missing required property "${formatPath(path)}"`)
      return
    case "InvalidType": {
      if (valueAt(root, path) === undefined && path.length > 0 && typeof path[path.length - 1] === "string") {
        out.push(`missing required property "${formatPath(path)}"`)
        return
      }
      const e = issue.ast.annotations?.["message"] === undefined ? expected(issue.ast) : undefined
      out.push(e !== undefined ? `"${formatPath(path)}" must be ${e}` : invalid(issue, path))
      return
    }
    case "Filter":
    case "Encoding":
    case "InvalidValue":
    case "OneOf":
    case "UnexpectedKey":
    case "Forbidden":
      out.push(invalid(issue, path))
      return
  }
}

/**
 * Renders a Schema issue of decoding `input` as T-10 violations (declaration order).
 *
 * @since 0.1.0
 * @category utils
 */
export const violationsOf = (issue: SchemaIssue.Issue, input: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  collect(issue, input, [], out)
  return out
}

type JsonNode = { [key: string]: unknown }

const inlineRefs = (node: unknown, defs: Readonly<Record<string, unknown>>, stack: ReadonlyArray<string>): unknown => {
  if (Array.isArray(node)) return node.map((n) => inlineRefs(n, defs, stack))
  if (!isPlainObject(node)) return node
  const ref = node["$ref"]
  if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
    const id = ref.slice("#/$defs/".length)
    const def = defs[id]
    if (def === undefined || stack.includes(id)) throw new RecursiveSchema()
    const { $ref: _ignored, ...rest } = node
    const inlined = inlineRefs(def, defs, [...stack, id])
    return Object.keys(rest).length === 0 ? inlined : { ...(inlined as JsonNode), ...inlineRefs(rest, defs, stack) as JsonNode }
  }
  const out: JsonNode = {}
  for (const key of Object.keys(node)) out[key] = inlineRefs(node[key], defs, stack)
  return out
}

class RecursiveSchema {}

/**
 * The model-facing JSON Schema of a Schema (inlined; `$schema` removed), as Effect 4 renders it
 * (`Schema.toJsonSchemaDocument`: e.g. `Schema.Number` also lists the strings `"NaN"`, `"Infinity"`, `"-Infinity"`
 * of its JSON encoding, which {@link make}'s decoding does not accept; `Schema.Finite` renders a plain number).
 *
 * @since 0.1.0
 * @category utils
 */
export const jsonSchemaOf = (schema: Schema.Top): Json.JsonObject => {
  // `additionalProperties: false` on objects, as Effect 3 rendered them (decoding still ignores extra keys)
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const definitions: Readonly<Record<string, unknown>> = document.definitions
  let out: unknown
  try {
    out = inlineRefs(document.schema, definitions, [])
  } catch (e) {
    if (!(e instanceof RecursiveSchema)) throw e
    out = { ...(document.schema as JsonNode), $defs: definitions }
  }
  if (isPlainObject(out) && "$schema" in out) {
    const { $schema: _ignored, ...rest } = out
    out = rest
  }
  return freezeSchema("<schema>", out)
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions<A, I, E, R> extends CommonOptions<A> {
  readonly parameters: Schema.Codec<A, I>
  readonly execute: (args: A, context: ToolRunContext) => Effect.Effect<ToolOutput, E, R>
}

/**
 * A tool whose parameters are an `effect/Schema` (usually a `Schema.Struct`).
 *
 * @example
 * ```ts
 * const echo = Tool.make({
 *   name: "echo",
 *   description: "Echoes its text",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   isConcurrencySafe: () => true,
 *   execute: ({ text }) => Effect.succeed([ContentBlock.text(`echo: ${text}`)])
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I, E = never, R = never>(options: MakeOptions<A, I, E, R>): Tool<R> => {
  assertName(options.name, options.description)
  assertTimeout(options.name, options.timeoutMs)
  const parameters = jsonSchemaOf(options.parameters)
  const decodeArgs = SchemaParser.decodeUnknownResult(options.parameters, { errors: "all", onExcessProperty: "ignore" })
  const decode = (args: unknown): Result.Result<A, ToolArgsError> => {
    if (!isPlainObject(args)) return Result.fail(argsError([topLevelViolation]))
    return Result.mapError(decodeArgs(args), (issue) => argsError(violationsOf(issue, args)))
  }
  return build(options, parameters, decode)
}

// ---------------------------------------------------------------------------------------------
// T-10 DSL

/**
 * A T-10 property type.
 *
 * @since 0.1.0
 * @category models
 */
export type PropertyType = "string" | "number" | "boolean" | "object" | "array"

/**
 * A T-10 property declaration.
 *
 * @since 0.1.0
 * @category models
 */
export interface PropertySpec {
  readonly type: PropertyType
  readonly required?: true
  readonly description?: string
  readonly enum?: ReadonlyArray<string | number | boolean>
  readonly default?: Json.Json
  readonly properties?: Properties
  readonly items?: PropertySpec
}

/**
 * T-10 property declarations, in declaration order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Properties {
  readonly [name: string]: PropertySpec
}

type BaseOf<P extends PropertySpec> = P["type"] extends "string" ? string
  : P["type"] extends "number" ? number
  : P["type"] extends "boolean" ? boolean
  : P["type"] extends "object" ? P extends { readonly properties: infer Ps extends Properties } ? ArgsOf<Ps>
    : { readonly [key: string]: unknown }
  : P extends { readonly items: infer I extends PropertySpec } ? ReadonlyArray<ValueOf<I>>
  : ReadonlyArray<unknown>

type ValueOf<P extends PropertySpec> = P extends { readonly enum: ReadonlyArray<infer L> } ? L & BaseOf<P> : BaseOf<P>

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/**
 * The argument type described by T-10 property declarations.
 *
 * @since 0.1.0
 * @category models
 */
export type ArgsOf<Ps extends Properties> = Simplify<
  & { readonly [K in keyof Ps as Ps[K] extends { readonly required: true } ? K : never]: ValueOf<Ps[K]> }
  & { readonly [K in keyof Ps as Ps[K] extends { readonly required: true } ? never : K]?: ValueOf<Ps[K]> }
>

const specSchema = (spec: PropertySpec): JsonNode => {
  const out: JsonNode = { type: spec.type }
  if (spec.description !== undefined) out["description"] = spec.description
  if (spec.enum !== undefined) out["enum"] = [...spec.enum]
  if (spec.default !== undefined) out["default"] = spec.default
  if (spec.type === "object" && spec.properties !== undefined) Object.assign(out, objectSchema(spec.properties))
  if (spec.type === "array" && spec.items !== undefined) out["items"] = specSchema(spec.items)
  return out
}

const objectSchema = (properties: Properties): JsonNode => {
  const props: JsonNode = {}
  const required: Array<string> = []
  for (const key of Object.keys(properties)) {
    const spec = properties[key] as PropertySpec
    props[key] = specSchema(spec)
    if (spec.required === true) required.push(key)
  }
  return required.length === 0 ? { type: "object", properties: props } : { type: "object", properties: props, required }
}

const typeOk = (type: PropertyType, value: unknown): boolean => {
  switch (type) {
    case "string":
      return typeof value === "string"
    case "number":
      return typeof value === "number"
    case "boolean":
      return typeof value === "boolean"
    case "object":
      return isPlainObject(value)
    case "array":
      return Array.isArray(value)
  }
}

const article = (type: PropertyType): string => (type === "object" || type === "array" ? "an" : "a")

const checkValue = (spec: PropertySpec, value: unknown, path: string, out: Array<string>): void => {
  if (!typeOk(spec.type, value)) {
    out.push(`"${path}" must be ${article(spec.type)} ${spec.type}`)
    return
  }
  if (spec.enum !== undefined && !spec.enum.includes(value as string | number | boolean)) {
    out.push(`"${path}" must be one of ${JSON.stringify(spec.enum)}`)
    return
  }
  if (spec.type === "object" && spec.properties !== undefined) {
    checkObject(spec.properties, value as Readonly<Record<string, unknown>>, path, out)
  } else if (spec.type === "array" && spec.items !== undefined) {
    const items = spec.items
    ;(value as ReadonlyArray<unknown>).forEach((item, i) => checkValue(items, item, `${path}[${i}]`, out))
  }
}

const checkObject = (
  properties: Properties,
  value: Readonly<Record<string, unknown>>,
  prefix: string,
  out: Array<string>
): void => {
  for (const key of Object.keys(properties)) {
    const spec = properties[key] as PropertySpec
    const path = prefix === "" ? key : `${prefix}.${key}`
    const v = Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined
    if (v === undefined) {
      if (spec.required === true) out.push(`missing required property "${path}"`)
      continue
    }
    checkValue(spec, v, path, out)
  }
}

/**
 * Validates arguments against T-10 property declarations: the violations in declaration order
 * (empty when valid). Extra keys are allowed; defaults are not applied.
 *
 * @since 0.1.0
 * @category utils
 */
export const validateProperties = (properties: Properties, args: unknown): ReadonlyArray<string> => {
  if (!isPlainObject(args)) return [topLevelViolation]
  const out: Array<string> = []
  checkObject(properties, args, "", out)
  return out
}

/**
 * The JSON Schema of T-10 property declarations: `{type: "object", properties, required?}`.
 *
 * @since 0.1.0
 * @category utils
 */
export const propertiesSchema = (properties: Properties): Json.JsonObject =>
  freezeSchema("<properties>", objectSchema(properties))

/**
 * Options of {@link fromProperties}.
 *
 * @since 0.1.0
 * @category models
 */
export interface PropertiesOptions<Ps extends Properties, E, R> extends CommonOptions<ArgsOf<Ps>> {
  readonly properties: Ps
  readonly execute: (args: ArgsOf<Ps>, context: ToolRunContext) => Effect.Effect<ToolOutput, E, R>
}

/**
 * A tool declared with the T-10 property DSL.
 *
 * @example
 * ```ts
 * const read = Tool.fromProperties({
 *   name: "read",
 *   description: "Reads a file",
 *   properties: { path: { type: "string", required: true } },
 *   execute: ({ path }) => Effect.succeed([ContentBlock.text(path)])
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromProperties = <const Ps extends Properties, E = never, R = never>(
  options: PropertiesOptions<Ps, E, R>
): Tool<R> => {
  assertName(options.name, options.description)
  assertTimeout(options.name, options.timeoutMs)
  const properties = options.properties
  const parameters = propertiesSchema(properties)
  const decode = (args: unknown): Result.Result<ArgsOf<Ps>, ToolArgsError> => {
    const violations = validateProperties(properties, args)
    return violations.length === 0 ? Result.succeed(args as ArgsOf<Ps>) : Result.fail(argsError(violations))
  }
  return build(options, parameters, decode)
}

// ---------------------------------------------------------------------------------------------
// Raw tools

/**
 * Options of {@link raw}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RawOptions<E, R> extends CommonOptions<unknown> {
  readonly parameters: Json.JsonObject
  readonly execute: (args: unknown, context: ToolRunContext) => Effect.Effect<ToolOutput, E, R>
}

/**
 * A tool with a raw JSON Schema; the body validates its own arguments.
 *
 * @since 0.1.0
 * @category constructors
 */
export const raw = <E = never, R = never>(options: RawOptions<E, R>): Tool<R> => {
  assertName(options.name, options.description)
  assertTimeout(options.name, options.timeoutMs)
  const parameters = freezeSchema(options.name, options.parameters)
  return build(options, parameters, Result.succeed)
}

// ---------------------------------------------------------------------------------------------
// Combinators

/**
 * Binds a tool's requirements, yielding a tool that needs nothing (used by registries).
 *
 * @since 0.1.0
 * @category combinators
 */
export const provideContext = <R>(tool: Tool<R>, context: Context.Context<R>): Tool<never> =>
  Object.freeze({
    ...tool,
    execute: (args: unknown, run: ToolRunContext) => Effect.provide(tool.execute(args, run), context)
  })

/**
 * `true` when a call of `tool` whose outcome a crash left unknown may simply run again (DEC-16).
 *
 * @since 0.1.0
 * @category utils
 */
export const rerunsSafely = (tool: Any): boolean => tool.effects === "read-only" || tool.effects === "idempotent"

/**
 * The detached model-facing schema: name, description, parameters only (V-7).
 *
 * @since 0.1.0
 * @category utils
 */
export const toSchema = (tool: Any): ToolSchema => {
  const copy = Json.copyJson(tool.parameters)
  return {
    name: tool.name,
    description: tool.description,
    parameters: (Result.isSuccess(copy) ? copy.success : {}) as Json.JsonObject
  }
}

/**
 * Captures the current context into a tool (see {@link provideContext}).
 *
 * @since 0.1.0
 * @category combinators
 */
export const bind = <R>(tool: Tool<R>): Effect.Effect<Tool<never>, never, R> =>
  Effect.map(Effect.context<R>(), (context) => provideContext(tool, context))
