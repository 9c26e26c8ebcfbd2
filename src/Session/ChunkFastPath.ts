/**
 * The hand-written fast path for `assistant/chunk` events (issue 17): most of a log, so checked
 * without `Json.snapshot` and the schema guards, with exactly the rules of their schemas.
 *
 * Covered chunk kinds: `text-delta`, `reasoning-delta`, `tool-call-delta` (with or without
 * `name`), `block-start`, `usage`, and `block-end` of a `text`, `reasoning` or `tool-call` block.
 * (`finish` and other blocks carry open unions of arbitrary JSON: they take the generic path.)
 *
 * The rules are a strict SUBSET of the generic path's: a value is accepted only when it is made of
 * plain objects (`Object.prototype`, no symbol keys) holding exactly the declared keys (any
 * order, optional keys optional), every value of the declared primitive type (strings; numbers
 * that are non-negative safe integers other than `-0`), tags on the declared literals. Anything
 * else answers `undefined` and takes the generic path, which produces the error if there is one.
 * On acceptance the result equals what the generic path builds: every property read once (in
 * key order, the tag first), copied into fresh objects with the same key order and deep-frozen. The equivalence is a
 * property test (`test/Session/ChunkFastPath.test.ts`).
 *
 * @since 0.1.0
 */

type Check = (u: unknown) => boolean

interface Shape {
  /** checks of the non-tag fields (a nested {@link Variants} for a nested tagged object) */
  readonly fields: Readonly<Record<string, Check | Variants>>
  /** how many of `fields` are required (the others are listed in `optional`) */
  readonly required: number
  readonly optional: ReadonlySet<string>
}

interface Variants {
  /** the discriminating key (`"type"`) */
  readonly tag: string
  readonly variants: Readonly<Record<string, Shape>>
  /** a plain record without a tag (usage) */
  readonly untagged?: Shape | undefined
}

const isString: Check = (u) => typeof u === "string"
/** a non-negative safe integer that is lossless JSON (not `-0`): the schemas' `int().nonNegative()` */
const isNat: Check = (u) => typeof u === "number" && Number.isSafeInteger(u) && u >= 0 && !Object.is(u, -0)

const shape = (fields: Record<string, Check | Variants>, optional: ReadonlyArray<string> = []): Shape => ({
  fields,
  required: Object.keys(fields).length - optional.length,
  optional: new Set(optional)
})

const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key)

const blocks: Variants = {
  tag: "type",
  variants: {
    text: shape({ text: isString }),
    reasoning: shape({ text: isString }),
    "tool-call": shape({ id: isString, name: isString, arguments: isString })
  }
}

const usage: Variants = {
  tag: "",
  variants: {},
  untagged: shape(
    { inputTokens: isNat, outputTokens: isNat, cacheReadTokens: isNat, cacheWriteTokens: isNat, reasoningTokens: isNat },
    ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"]
  )
}

const chunks: Variants = {
  tag: "type",
  variants: {
    "text-delta": shape({ index: isNat, text: isString }),
    "reasoning-delta": shape({ index: isNat, text: isString }),
    "tool-call-delta": shape({ index: isNat, id: isString, name: isString, argumentsDelta: isString }, ["name"]),
    "block-start": shape({ index: isNat, blockType: isString }),
    "block-end": shape({ index: isNat, block: blocks }),
    usage: shape({ usage })
  }
}

const payload: Variants = {
  tag: "",
  variants: {},
  untagged: shape({ turn: isNat, step: isNat, chunk: chunks })
}

/** The own string keys of a plain, symbol-free object, else `undefined`. */
const plainKeys = (u: unknown): Array<string> | undefined => {
  if (typeof u !== "object" || u === null || Object.getPrototypeOf(u) !== Object.prototype) return undefined
  if (Object.getOwnPropertySymbols(u).length > 0) return undefined
  return Object.keys(u)
}

/**
 * Checks `value` against `spec`; with `copy`, returns a fresh deep-frozen copy (same key order),
 * else the value itself. `undefined` when it does not match.
 */
const match = (value: unknown, spec: Variants, copy: boolean): object | undefined => {
  const keys = plainKeys(value)
  if (keys === undefined) return undefined
  const record = value as Record<string, unknown>
  const n = keys.length
  let s: Shape | undefined = spec.untagged
  // the tag is read first (it is the first key of every chunk the adapters build, so the read
  // order is then exactly `Json.snapshot`'s); every other property is read once, in key order
  let tag: unknown = undefined
  if (s === undefined) {
    if (!has(record, spec.tag)) return undefined
    tag = record[spec.tag]
    if (typeof tag !== "string" || !has(spec.variants, tag)) return undefined
    s = spec.variants[tag] as Shape
  }
  const out: Record<string, unknown> | undefined = copy ? {} : undefined
  let required = 0
  for (let i = 0; i < n; i++) {
    const key = keys[i] as string
    let v: unknown
    if (s !== spec.untagged && key === spec.tag) {
      v = tag
    } else {
      if (!has(s.fields, key)) return undefined
      v = record[key]
      const field = s.fields[key] as Check | Variants
      if (typeof field === "function") {
        if (!field(v)) return undefined
      } else {
        v = match(v, field, copy)
        if (v === undefined) return undefined
      }
      if (!s.optional.has(key)) required++
    }
    if (out !== undefined) out[key] = v
  }
  if (required !== s.required) return undefined
  return out === undefined ? record : Object.freeze(out)
}

/**
 * The stored event for an `assistant/chunk` append input of a covered kind (the envelope has
 * exactly `type` and `data`), built exactly as the generic path would build it; `undefined`
 * when the input is anything else (the generic path then decides). Never throws.
 *
 * @since 0.1.0
 * @category validation
 */
export const chunkEvent = (input: unknown, seq: number, time: number): object | undefined => {
  try {
    const keys = plainKeys(input)
    if (keys === undefined || keys.length !== 2) return undefined
    const o = input as Record<string, unknown>
    let type: unknown = undefined
    let data: unknown = undefined
    for (const key of keys) {
      if (key === "type") type = o[key]
      else if (key === "data") data = o[key]
      else return undefined
    }
    if (type !== "assistant/chunk") return undefined
    const copied = match(data, payload, true)
    if (copied === undefined) return undefined
    return Object.freeze({ type: "assistant/chunk", seq, time, data: copied })
  } catch {
    // a throwing getter or proxy trap: the generic path reports it
    return undefined
  }
}

/**
 * The stored `assistant/chunk` event of `chunk` at `turn` and `step`, built exactly as
 * {@link chunkEvent} builds it from the input `{ type: "assistant/chunk", data: { turn, step,
 * chunk } }` (the caller vouches for `turn` and `step`: non-negative safe integers); `undefined`
 * when the chunk is not of a covered kind (the generic path then decides). Never throws.
 *
 * @since 0.1.0
 * @category validation
 */
export const chunkEventOf = (turn: number, step: number, chunk: unknown, seq: number, time: number): object | undefined => {
  try {
    const copied = match(chunk, chunks, true)
    if (copied === undefined) return undefined
    return Object.freeze({ type: "assistant/chunk", seq, time, data: Object.freeze({ turn, step, chunk: copied }) })
  } catch {
    return undefined
  }
}

/**
 * `true` when an (already lossless, detached) `assistant/chunk` payload is of a covered kind and
 * valid; `false` means "not decided here" (the schema guard then decides).
 *
 * @since 0.1.0
 * @category validation
 */
export const isChunkPayload = (data: unknown): boolean => match(data, payload, false) !== undefined

/**
 * The same fast path for a STORED `assistant/chunk` event (seed, resume, fork, batch): an
 * envelope of exactly `type`, `seq`, `time`, `data` (any order), `seq` equal to `expectedSeq`,
 * `time` a JSON natural, a covered payload. Returns the detached, deep-frozen event the generic
 * path (`Validate.storedEvent`) would build, or `undefined` to let it decide. Never throws.
 *
 * @since 0.1.0
 * @category validation
 */
export const storedChunkEvent = (raw: unknown, expectedSeq: number): object | undefined => {
  try {
    const keys = plainKeys(raw)
    if (keys === undefined || keys.length !== 4) return undefined
    const o = raw as Record<string, unknown>
    let type: unknown = undefined
    let seq: unknown = undefined
    let time: unknown = undefined
    let data: unknown = undefined
    for (const key of keys) {
      switch (key) {
        case "type":
          type = o[key]
          break
        case "seq":
          seq = o[key]
          break
        case "time":
          time = o[key]
          break
        case "data":
          data = o[key]
          break
        default:
          return undefined
      }
    }
    if (type !== "assistant/chunk" || seq !== expectedSeq || !isNat(seq) || !isNat(time)) return undefined
    const copied = match(data, payload, true)
    if (copied === undefined) return undefined
    return Object.freeze({ type: "assistant/chunk", seq, time, data: copied })
  } catch {
    return undefined
  }
}
