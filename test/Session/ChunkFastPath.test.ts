/**
 * The `assistant/chunk` append fast path (issue 17) agrees with the generic validation: for every
 * input, `Validate.appendInput` (fast path first) and `Validate.appendInputGeneric` (lossless copy
 * + schema guards + surface rules) accept and reject the same inputs, with the same error, and
 * build identical stored events (same values, same key order, deep-frozen, detached). The
 * stored-event check (`checkPayload`, used at seed and load) agrees with the schema guard too.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as ChunkFastPath from "../../src/Session/ChunkFastPath.js"
import { payloadSchemas } from "../../src/Session/SessionEvent.js"
import * as Surface from "../../src/Session/Surface.js"
import * as Validate from "../../src/Session/Validate.js"

const S = StreamChunk

/** an index below `n`, uniformly */
const index = (n: number): Arbitrary.Arbitrary<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: n - 1 })))
/** one of `values` (the same instances every time, as fast-check's `constantFrom`) */
const pick = <A>(...values: ReadonlyArray<A>): Arbitrary.Arbitrary<A> => Arbitrary.map(index(values.length), (i) => values[i]!)
/** one of the arbitraries, each with its weight */
const weighted = <A>(...cases: ReadonlyArray<readonly [number, Arbitrary.Arbitrary<A>]>): Arbitrary.Arbitrary<A> => {
  const total = cases.reduce((n, [w]) => n + w, 0)
  return Arbitrary.flatMap(index(total), (i) => {
    let left = i
    for (const [w, arb] of cases) {
      if (left < w) return arb
      left -= w
    }
    return cases[cases.length - 1]![1]
  })
}
/** one of the arbitraries, each as likely */
const oneOf = <A>(...arbs: ReadonlyArray<Arbitrary.Arbitrary<A>>): Arbitrary.Arbitrary<A> =>
  weighted(...arbs.map((arb) => [1, arb] as const))
/** runs a property (`fc.assert` in the Effect 3 version); fails the test with the shrunk input */
const check = <A>(arb: Arbitrary.Arbitrary<A>, property: (value: A) => void, options: Arbitrary.CheckOptions): void => {
  const result = Effect.runSync(Arbitrary.checkEffect(arb, (value) => {
    property(value)
    return true
  }, options))
  expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
}

/** values that break one rule or another (numbers that are not JSON naturals, wrong types, exotic objects) */
const weird = pick<unknown>(
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
const nat = weighted<number>(
  [6, oneOf(index(1_001), Arbitrary.Constant(Number.MAX_SAFE_INTEGER))],
  [1, weird as Arbitrary.Arbitrary<number>]
)
/** mostly strings, sometimes a value that is not one */
const str = weighted<string>(
  [6, oneOf(Arbitrary.schema(Schema.String.check(Schema.isMaxLength(6))), pick("", "\u0000", "\ud800", "__proto__", "é🙂"))],
  [1, weird as Arbitrary.Arbitrary<string>]
)

const block = oneOf<object>(
  Arbitrary.all({ type: Arbitrary.Constant("text"), text: str }),
  Arbitrary.all({ type: Arbitrary.Constant("reasoning"), text: str }),
  Arbitrary.all({ type: Arbitrary.Constant("tool-call"), id: str, name: str, arguments: str }),
  Arbitrary.all({
    type: Arbitrary.Constant("tool-result"),
    toolCallId: str,
    content: Arbitrary.Constant([]),
    isError: Arbitrary.schema(Schema.Boolean)
  }),
  Arbitrary.all({ type: Arbitrary.Constant("x-ext"), payload: str })
)

/** an optional key: absent, or present with a value */
const ABSENT: unique symbol = Symbol("absent")
const optional = <A>(arb: Arbitrary.Arbitrary<A>) => oneOf<A | typeof ABSENT>(Arbitrary.Constant(ABSENT), arb)
const usage = Arbitrary.map(
  Arbitrary.all({
    inputTokens: nat,
    outputTokens: nat,
    cacheReadTokens: optional(nat),
    cacheWriteTokens: optional(nat),
    reasoningTokens: optional(nat)
  }),
  (u) => Object.fromEntries(Object.entries(u).filter(([, v]) => v !== ABSENT))
)

const asRecord = (chunk: object): Record<string, unknown> => chunk as Record<string, unknown>

/** well-formed chunks of every kind, as the adapters build them */
const validChunk: Arbitrary.Arbitrary<Record<string, unknown>> = Arbitrary.map(
  oneOf<object>(
    Arbitrary.map(Arbitrary.all([nat, str]), ([i, t]) => S.textDelta(i, t)),
    Arbitrary.map(Arbitrary.all([nat, str]), ([i, t]) => S.reasoningDelta(i, t)),
    Arbitrary.map(
      Arbitrary.all([nat, str, str, oneOf<string | undefined>(Arbitrary.Constant(undefined), str)]),
      ([i, id, a, n]) => S.toolCallDelta(i, id, a, n)
    ),
    Arbitrary.map(Arbitrary.all([nat, pick("text", "reasoning", "tool-call", "x-ext")]), ([i, t]) => S.blockStart(i, t as never)),
    Arbitrary.map(Arbitrary.all([nat, block]), ([i, b]) => S.blockEnd(i, b as never)),
    Arbitrary.map(usage, (u) => S.usage(u as never)),
    pick<object>(S.finish({ kind: "stop" }), S.finish({ kind: "error", message: "m" }, { k: 1 }))
  ),
  asRecord
)

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
const mutation = Arbitrary.all([
  index(4),
  oneOf(Arbitrary.Constant(0), index(51)),
  pick("type", "data", "turn", "step", "chunk", "index", "text", "name", "extra", "__proto__"),
  weird
])
const input = Arbitrary.map(Arbitrary.all([
  validChunk,
  nat,
  nat,
  Arbitrary.array(mutation, { maxLength: 2 })
]), ([chunk, turn, step, mutations]) => {
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
    expect(fast.failure.code).toBe(full.failure.code)
    expect(fast.failure.message).toBe(full.failure.message)
  }
  if (Result.isSuccess(fast) && Result.isSuccess(full)) {
    sameTree(fast.success, full.success)
    expect(deepFrozen(fast.success)).toBe(true)
    expect(fast.success.data).not.toBe((raw as { data: unknown }).data) // detached (S-4)
    // the stored form is accepted by the load-time check exactly as by the schema guard
    const guard = Schema.is(payloadSchemas["assistant/chunk"])
    expect(Validate.checkPayload("load", "assistant/chunk", fast.success.data as never) === undefined).toBe(guard(fast.success.data))
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
  if (Result.isFailure(fast) && Result.isFailure(full)) expect(fast.failure.message).toBe(full.failure.message)
  if (Result.isSuccess(fast) && Result.isSuccess(full)) {
    sameTree(fast.success, full.success)
    expect(deepFrozen(fast.success)).toBe(true)
  }
  return Result.isSuccess(fast)
}

describe("assistant/chunk append fast path (issue 17)", () => {
  it("[S-11] property: stored events (seed, resume, batch) take the same decisions on the fast and generic paths", () => {
    let accepted = 0
    check(
      Arbitrary.all([
        input,
        weighted<unknown>([4, Arbitrary.Constant(5)], [1, pick<unknown>(4, -0, 5.5, "5")]),
        weighted<unknown>([4, pick<unknown>(0, 1234)], [1, pick<unknown>(-1, 1.5, -0)]),
        Arbitrary.schema(Schema.Boolean)
      ]),
      ([raw, seq, time, flip]) => {
        if (compareStored(stored(raw, seq, time, flip))) accepted++
      },
      { runs: 300, seed: 18 }
    )
    expect(accepted).toBeGreaterThan(20)
  })

  it("[S-3,S-4] property: fast and generic paths accept/reject the same inputs and build identical events", () => {
    let accepted = 0
    let fastTaken = 0
    check(input, (raw) => {
      if (compare(raw)) accepted++
      if (ChunkFastPath.chunkEvent(raw, 5, 1234) !== undefined) fastTaken++
    }, { runs: 500, seed: 17 })
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
