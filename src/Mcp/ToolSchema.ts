/**
 * The JSON Schema of an MCP tool as the model sees it, and the validator of its arguments.
 *
 * Providers reject schemas MCP servers send freely (a 400 on every request that offers the tool),
 * so {@link normalize} rewrites them into the subset every supported provider profile accepts
 * (Anthropic, OpenAI and the OpenAI-compatible profiles all take a plain object schema):
 *
 * - `$schema`, `$id`, `$comment` are dropped; local `$ref`s (`#/$defs/…`, `#/definitions/…`) are
 *   inlined and the definitions removed; a recursive or non-local `$ref` cannot be inlined and
 *   the tool is skipped.
 * - The top level must be an object: a missing `type` becomes `"object"`; a top-level `allOf` of
 *   object schemas is merged; a top-level `anyOf`/`oneOf` of object schemas becomes one object
 *   with every property and only the properties all branches require (the server still checks
 *   the union); anything else is skipped.
 * - `format` values outside a conservative set (`date-time`, `date`, `time`, `email`, `uri`,
 *   `uuid`, `ipv4`, `ipv6`, `hostname`) are removed.
 *
 * The result is one schema for every profile (not one per profile): the conservative form is
 * accepted by all of them, and one schema keeps the logged request header identical whichever
 * provider a resumed session uses. A skipped tool comes with a one-line reason.
 *
 * {@link validator} compiles the normalised schema with Ajv (the validator the MCP SDK itself
 * uses, already in the dependency tree); arguments are checked against exactly what the model was
 * shown, and violations come back in the T-10 style (`"path" must be string`).
 *
 * @since 0.1.0
 */
import { Ajv, type ErrorObject } from "ajv"
import * as Result from "effect/Result"
import * as Json from "../Llm/Json.js"

type Node = { [key: string]: unknown }

const SAFE_FORMATS = new Set(["date-time", "date", "time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname"])

const isObject = (u: unknown): u is Node => typeof u === "object" && u !== null && !Array.isArray(u)

class Skip extends Error {}

const resolveRef = (root: Node, ref: string): unknown => {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
  if (m === null) throw new Skip(`unsupported $ref ${JSON.stringify(ref)}`)
  const defs = root[m[1] as string]
  const key = (m[2] as string).replace(/~1/g, "/").replace(/~0/g, "~")
  if (!isObject(defs) || !(key in defs)) throw new Skip(`unresolved $ref ${JSON.stringify(ref)}`)
  return defs[key]
}

const rewrite = (root: Node, value: unknown, seen: ReadonlyArray<string>): unknown => {
  if (Array.isArray(value)) return value.map((v) => rewrite(root, v, seen))
  if (!isObject(value)) return value
  if (typeof value["$ref"] === "string") {
    const ref = value["$ref"]
    if (seen.includes(ref)) throw new Skip(`recursive $ref ${JSON.stringify(ref)}`)
    const target = rewrite(root, resolveRef(root, ref), [...seen, ref])
    const { $ref: _ignored, ...rest } = value
    const siblings = rewrite(root, rest, seen)
    return isObject(target) && isObject(siblings) ? { ...target, ...siblings } : target
  }
  const out: Node = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === "$schema" || k === "$id" || k === "$comment" || k === "$defs" || k === "definitions") continue
    if (k === "format" && typeof v === "string" && !SAFE_FORMATS.has(v)) continue
    // keyword maps whose keys are property names, not keywords
    if ((k === "properties" || k === "patternProperties") && isObject(v)) {
      const props: Node = {}
      for (const [pk, pv] of Object.entries(v)) props[pk] = rewrite(root, pv, seen)
      out[k] = props
      continue
    }
    out[k] = rewrite(root, v, seen)
  }
  return out
}

const isObjectSchema = (s: unknown): s is Node =>
  isObject(s) && (s["type"] === "object" || (s["type"] === undefined && isObject(s["properties"])))

const mergeBranches = (branches: ReadonlyArray<Node>, all: boolean): Node => {
  const properties: Node = {}
  let required: Array<string> | undefined
  for (const b of branches) {
    Object.assign(properties, isObject(b["properties"]) ? b["properties"] : {})
    const req = Array.isArray(b["required"]) ? b["required"].filter((r): r is string => typeof r === "string") : []
    required = required === undefined ? req : all ? [...new Set([...required, ...req])] : required.filter((r) => req.includes(r))
  }
  return { type: "object", properties, ...(required !== undefined && required.length > 0 ? { required } : {}) }
}

/**
 * Normalises an MCP `inputSchema` (see the module doc): the model-facing schema, or the reason the
 * tool must be skipped.
 *
 * @since 0.1.0
 * @category normalisation
 */
export const normalize = (inputSchema: unknown): Result.Result<Json.JsonObject, string> => {
  try {
    if (!isObject(inputSchema)) return Result.fail("its input schema is not an object")
    let top = rewrite(inputSchema, inputSchema, []) as Node
    const union = (["anyOf", "oneOf", "allOf"] as const).find((k) => Array.isArray(top[k]))
    if (union !== undefined) {
      const branches = top[union] as ReadonlyArray<unknown>
      if (!branches.every(isObjectSchema)) return Result.fail(`its input schema has a top-level ${union} that is not all objects`)
      const { [union]: _dropped, ...rest } = top
      const merged = mergeBranches(branches as ReadonlyArray<Node>, union === "allOf")
      const ownProps = isObject(rest["properties"]) ? rest["properties"] : {}
      const ownReq = Array.isArray(rest["required"]) ? rest["required"] : []
      top = {
        ...rest,
        type: "object",
        properties: { ...ownProps, ...(merged["properties"] as Node) },
        ...(ownReq.length + ((merged["required"] as Array<string> | undefined)?.length ?? 0) > 0
          ? { required: [...new Set([...ownReq, ...((merged["required"] as Array<string> | undefined) ?? [])])] }
          : {})
      }
    }
    if (top["type"] === undefined) top = { type: "object", ...top }
    if (top["type"] !== "object") return Result.fail(`its input schema is not an object schema (type ${JSON.stringify(top["type"])})`)
    if (top["properties"] === undefined) top = { ...top, properties: {} }
    const snap = Json.snapshot(top)
    if (Result.isFailure(snap)) return Result.fail(`its input schema is not plain JSON (${snap.failure.message})`)
    return Result.succeed(snap.success as Json.JsonObject)
  } catch (e) {
    if (e instanceof Skip) return Result.fail(`its input schema has an ${e.message}`)
    return Result.fail(`its input schema cannot be read (${e instanceof Error ? e.message : String(e)})`)
  }
}

/**
 * Checks arguments; returns the violations (empty when valid).
 *
 * @since 0.1.0
 * @category models
 */
export type Validator = (args: unknown) => ReadonlyArray<string>

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })

const pathOf = (e: ErrorObject): string => {
  const parts = e.instancePath.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
  if (e.keyword === "required") parts.push(String((e.params as { missingProperty?: unknown }).missingProperty))
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")
}

const describe = (e: ErrorObject): string => {
  const path = pathOf(e)
  if (e.keyword === "required") return `missing required property "${path}"`
  if (path === "" && e.keyword === "type") return `"arguments" must be an object`
  if (e.keyword === "enum") {
    return `"${path}" must be one of ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}`
  }
  return `${path === "" ? "arguments" : `"${path}"`} ${e.message ?? "is invalid"}`
}

/**
 * Compiles a validator for a normalised schema; a failure with the reason when Ajv cannot compile it
 * (the tool is then skipped).
 *
 * @since 0.1.0
 * @category constructors
 */
export const validator = (schema: Json.JsonObject): Result.Result<Validator, string> => {
  try {
    const validate = ajv.compile(schema as object)
    return Result.succeed((args) => {
      if (validate(args)) return []
      return (validate.errors ?? []).map(describe)
    })
  } catch (e) {
    return Result.fail(`its input schema does not compile (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`)
  }
}
