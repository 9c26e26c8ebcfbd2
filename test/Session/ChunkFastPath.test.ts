/**
 * The `assistant/chunk` append fast path (issue 17) agrees with the generic validation: for every
 * input, `Validate.appendInput` (fast path first) and `Validate.appendInputGeneric` (lossless copy
 * + schema guards + surface rules) accept and reject the same inputs, with the same error, and
 * build identical stored events (same values, same key order, deep-frozen, detached). The
 * stored-event check (`checkPayload`, used at seed and load) agrees with the schema guard too.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as ChunkFastPath from "../../src/Session/ChunkFastPath.js"
import { payloadSchemas } from "../../src/Session/SessionEvent.js"
import * as Surface from "../../src/Session/Surface.js"
import * as Validate from "../../src/Session/Validate.js"

const S = StreamChunk

/** values that break one rule or another (numbers that are not JSON naturals, wrong types, exotic objects) */
const weird = fc.constantFrom<unknown>(
  -0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 53,
  "",
  "x",
  null,
  true,
  [],
  {},
  undefined,
  Object.create(null),
  new Map(),
  [1, 2],
  0,
  7
)

/** mostly JSON naturals, sometimes a value that breaks a rule */
const nat = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.nat(1_000), fc.constant(Number.MAX_SAFE_INTEGER)) },
  { weight: 1, arbitrary: weird }
) as fc.Arbitrary<number>
/** mostly strings, sometimes a value that is not one */
const str = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("", "\u0000", "\ud800", "__proto__", "é🙂")) },
  { weight: 1, arbitrary: weird }
) as fc.Arbitrary<string>

const block = fc.oneof(
  fc.record({ type: fc.constant("text"), text: str }),
  fc.record({ type: fc.constant("reasoning"), text: str }),
  fc.record({ type: fc.constant("tool-call"), id: str, name: str, arguments: str }),
  fc.record({ type: fc.constant("tool-result"), toolCallId: str, content: fc.constant([]), isError: fc.boolean() }),
  fc.record({ type: fc.constant("x-ext"), payload: str })
)

const usage = fc.record(
  {
    inputTokens: nat,
    outputTokens: nat,
    cacheReadTokens: nat,
    cacheWriteTokens: nat,
    reasoningTokens: nat
  },
  { requiredKeys: ["inputTokens", "outputTokens"] }
)

/** well-formed chunks of every kind, as the adapters build them */
const validChunk: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.tuple(nat, str).map(([i, t]) => S.textDelta(i, t)),
  fc.tuple(nat, str).map(([i, t]) => S.reasoningDelta(i, t)),
  fc.tuple(nat, str, str, fc.option(str, { nil: undefined })).map(([i, id, a, n]) => S.toolCallDelta(i, id, a, n)),
  fc.tuple(nat, fc.constantFrom("text", "reasoning", "tool-call", "x-ext")).map(([i, t]) => S.blockStart(i, t as never)),
  fc.tuple(nat, block).map(([i, b]) => S.blockEnd(i, b as never)),
  usage.map((u) => S.usage(u as never)),
  fc.constantFrom(S.finish({ kind: "stop" }), S.finish({ kind: "error", message: "m" }, { k: 1 }))
) as unknown as fc.Arbitrary<Record<string, unknown>>

/** copies own properties by descriptor (a getter stays a getter and is not called) */
const clone = (o: object, proto: object | null = Object.getPrototypeOf(o) as object | null, reverse = false): Record<string, unknown> => {
  const out = Object.create(proto) as Record<string, unknown>
  const keys = Reflect.ownKeys(o)
  for (const key of reverse ? keys.reverse() : keys) {
    Object.defineProperty(out, key, Object.getOwnPropertyDescriptor(o, key) as PropertyDescriptor)
  }
  return out
}

const define = (o: object, key: string | symbol, descriptor: PropertyDescriptor): Record<string, unknown> => {
  const out = clone(o)
  Object.defineProperty(out, key, { enumerable: true, configurable: true, ...descriptor })
  return out
}

/** one structural change to a plain object */
const mutate = (o: Record<string, unknown>, how: number, key: string, value: unknown): unknown => {
  const keys = Object.keys(o)
  const k = keys.length === 0 ? key : keys[how % keys.length] as string
  switch (how % 9) {
    case 0:
      return define(o, k, { value, writable: true }) // a field (maybe the tag) takes a weird value
    case 1: {
      const out = clone(o) // a field is missing
      delete out[k]
      return out
    }
    case 2:
      return define(o, key, { value, writable: true }) // an extra key
    case 3:
      return clone(o, Object.getPrototypeOf(o) as object | null, true) // another key order (valid)
    case 4:
      return clone(o, null) // null prototype (valid lossless JSON)
    case 5:
      return define(o, Symbol("s"), { value: 1 })
    case 6:
      return define(o, k, {
        get: () => {
          throw new Error("boom")
        }
      })
    case 7: {
      const d = Object.getOwnPropertyDescriptor(o, k)
      return d === undefined || !("value" in d) ? o : define(o, k, { get: () => d.value }) // a well-behaved getter (valid)
    }
    default:
      return o
  }
}

const innerOf = (c: unknown): readonly [string, unknown] | undefined => {
  if (typeof c !== "object" || c === null) return undefined
  for (const field of ["block", "usage"]) {
    const d = Object.getOwnPropertyDescriptor(c, field)
    if (d !== undefined && "value" in d && typeof d.value === "object" && d.value !== null) return [field, d.value]
  }
  return undefined
}

/** where a mutation lands: the envelope, the payload, the chunk, or a nested block/usage */
const input = fc.tuple(
  validChunk,
  nat,
  nat,
  fc.array(fc.tuple(fc.nat(3), fc.oneof(fc.constant(0), fc.nat(50)), fc.constantFrom("type", "data", "turn", "step", "chunk", "index", "text", "name", "extra", "__proto__"), weird), { maxLength: 2 })
).map(([chunk, turn, step, mutations]) => {
  let c: unknown = chunk
  let data: unknown = { turn, step, chunk }
  let envelope: unknown = { type: "assistant/chunk", data }
  for (const [level, how, key, value] of mutations) {
    switch (level) {
      case 0:
        envelope = mutate(envelope as Record<string, unknown>, how, key, value)
        break
      case 1:
        data = mutate(data as Record<string, unknown>, how, key, value)
        envelope = { type: "assistant/chunk", data }
        break
      case 2:
        c = mutate(c as Record<string, unknown>, how, key, value)
        data = { turn, step, chunk: c }
        envelope = { type: "assistant/chunk", data }
        break
      default: {
        const inner = innerOf(c)
        if (inner === undefined) break
        c = define(c as object, inner[0], { value: mutate(inner[1] as Record<string, unknown>, how, key, value), writable: true })
        data = { turn, step, chunk: c }
        envelope = { type: "assistant/chunk", data }
      }
    }
  }
  return envelope
})

const deepFrozen = (u: unknown): boolean =>
  typeof u !== "object" || u === null || (Object.isFrozen(u) && Object.values(u).every(deepFrozen))

/** the same tree, key order included, built from different objects */
const sameTree = (a: unknown, b: unknown): void => {
  expect(a).toStrictEqual(b)
  expect(JSON.stringify(a)).toBe(JSON.stringify(b))
}

const compare = (raw: unknown) => {
  const fast = Validate.appendInput(Surface.makeState(), raw, 5, 1234)
  const full = Validate.appendInputGeneric(Surface.makeState(), raw, 5, 1234)
  expect(Result.isSuccess(fast)).toBe(Result.isSuccess(full))
  if (Result.isFailure(fast) && Result.isFailure(full)) {
    expect(fast.left.code).toBe(full.left.code)
    expect(fast.left.message).toBe(full.left.message)
  }
  if (Result.isSuccess(fast) && Result.isSuccess(full)) {
    sameTree(fast.right, full.right)
    expect(deepFrozen(fast.right)).toBe(true)
    expect(fast.right.data).not.toBe((raw as { data: unknown }).data) // detached (S-4)
    // the stored form is accepted by the load-time check exactly as by the schema guard
    const guard = Schema.is(payloadSchemas["assistant/chunk"])
    expect(Validate.checkPayload("load", "assistant/chunk", fast.right.data as never) === undefined).toBe(guard(fast.right.data))
  }
  return Result.isSuccess(fast)
}

/** the stored form of an append input: the envelope with `seq` and `time` (in some key order) */
const stored = (raw: unknown, seq: unknown, time: unknown, flip: boolean): unknown => {
  if (typeof raw !== "object" || raw === null) return raw
  const out = clone(raw)
  if (flip) {
    Object.defineProperty(out, "time", { value: time, enumerable: true, configurable: true, writable: true })
    Object.defineProperty(out, "seq", { value: seq, enumerable: true, configurable: true, writable: true })
  } else {
    Object.defineProperty(out, "seq", { value: seq, enumerable: true, configurable: true, writable: true })
    Object.defineProperty(out, "time", { value: time, enumerable: true, configurable: true, writable: true })
  }
  return out
}

const compareStored = (raw: unknown) => {
  const fast = Validate.storedEvent(raw, 5)
  const full = Validate.storedEventGeneric(raw, 5)
  expect(Result.isSuccess(fast)).toBe(Result.isSuccess(full))
  if (Result.isFailure(fast) && Result.isFailure(full)) expect(fast.left.message).toBe(full.left.message)
  if (Result.isSuccess(fast) && Result.isSuccess(full)) {
    sameTree(fast.right, full.right)
    expect(deepFrozen(fast.right)).toBe(true)
  }
  return Result.isSuccess(fast)
}

describe("assistant/chunk append fast path (issue 17)", () => {
  it("[S-11] property: stored events (seed, resume, batch) take the same decisions on the fast and generic paths", () => {
    let accepted = 0
    fc.assert(
      fc.property(input, fc.oneof({ weight: 4, arbitrary: fc.constant<unknown>(5) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(4, -0, 5.5, "5") }),
        fc.oneof({ weight: 4, arbitrary: fc.constantFrom<unknown>(0, 1234) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(-1, 1.5, -0) }), fc.boolean(), (raw, seq, time, flip) => {
        if (compareStored(stored(raw, seq, time, flip))) accepted++
      }),
      { numRuns: 300, seed: 18 }
    )
    expect(accepted).toBeGreaterThan(20)
  })

  it("[S-3,S-4] property: fast and generic paths accept/reject the same inputs and build identical events", () => {
    let accepted = 0
    let fastTaken = 0
    fc.assert(
      fc.property(input, (raw) => {
        if (compare(raw)) accepted++
        if (ChunkFastPath.chunkEvent(raw, 5, 1234) !== undefined) fastTaken++
      }),
      { numRuns: 500, seed: 17 }
    )
    // the generator exercises both outcomes and the fast path itself
    expect(accepted).toBeGreaterThan(60)
    expect(fastTaken).toBeGreaterThan(60)
    expect(fastTaken).toBeLessThan(500)
  })

  it("[S-3] every covered chunk kind as the adapters build it takes the fast path; finish does not", () => {
    const covered = [
      S.textDelta(0, "a"),
      S.reasoningDelta(1, "b"),
      S.toolCallDelta(2, "call_1", "{\"a\":", "write"),
      S.toolCallDelta(2, "", "1}"),
      S.blockStart(3, "tool-call"),
      S.blockEnd(0, { type: "text", text: "a" }),
      S.blockEnd(1, { type: "reasoning", text: "b" }),
      S.blockEnd(2, { type: "tool-call", id: "call_1", name: "write", arguments: "{\"a\":1}" } as never),
      S.usage({ inputTokens: 1, outputTokens: 2, cacheReadTokens: 3 })
    ]
    for (const chunk of covered) {
      const raw = { type: "assistant/chunk", data: { turn: 1, step: 2, chunk } }
      expect(ChunkFastPath.chunkEvent(raw, 0, 0)).toBeDefined()
      expect(compare(raw)).toBe(true)
    }
    const finish = { type: "assistant/chunk", data: { turn: 1, step: 2, chunk: S.finish({ kind: "stop" }) } }
    expect(ChunkFastPath.chunkEvent(finish, 0, 0)).toBeUndefined()
    expect(compare(finish)).toBe(true)
  })

  it("[S-3,AC-31] rejections the fast path leaves to the generic path keep their errors", () => {
    const bad: ReadonlyArray<unknown> = [
      { type: "assistant/chunk", data: { turn: -0, step: 1, chunk: S.textDelta(0, "a") } },
      { type: "assistant/chunk", data: { turn: 1, step: 1, chunk: { type: "text-delta", index: 1.5, text: "a" } } },
      { type: "assistant/chunk", data: { turn: 1, step: 1, chunk: { type: "tool-call-delta", index: 0, id: "c", name: 3, argumentsDelta: "" } } },
      { type: "assistant/chunk", data: { turn: 1, step: 1, chunk: { type: "usage", usage: { inputTokens: 1 } } } },
      { type: "assistant/chunk", data: { turn: 1, step: 1, chunk: S.textDelta(0, "a") }, surfaceOp: "append" }
    ]
    for (const raw of bad) expect(compare(raw)).toBe(false)
  })
})
