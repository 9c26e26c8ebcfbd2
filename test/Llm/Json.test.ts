import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Json from "../../src/Llm/Json.js"

const rejects = (value: unknown): Json.JsonError => {
  const result = Json.copyJson(value)
  if (Result.isSuccess(result)) throw new Error(`accepted ${String(value)}`)
  return result.failure
}

describe("Json (V-11)", () => {
  it("AC-7 [V-11] rejects 1n, an undefined property, NaN, Infinity, −0, a cycle, a sparse array, Map, Date, a class instance", () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const cycle: Record<string, unknown> = { a: 1 }
    cycle["self"] = cycle
    const cases: ReadonlyArray<readonly [unknown, string, RegExp]> = [
      [1n, "$", /bigint/],
      [{ a: undefined }, "$.a", /undefined/],
      [{ n: NaN }, "$.n", /non-finite/],
      [[Infinity], "$[0]", /non-finite/],
      [{ deep: [-Infinity] }, "$.deep[0]", /non-finite/],
      [-0, "$", /negative zero/],
      [{ z: [0, -0] }, "$.z[1]", /negative zero/],
      [cycle, "$.self", /cycle/],
      // eslint-disable-next-line no-sparse-arrays
      [[1, , 3], "$[1]", /sparse/],
      [new Map([["a", 1]]), "$", /Map/],
      [new Set([1]), "$", /Set/],
      [new Date(0), "$", /Date/],
      [new Point(1), "$", /Point/],
      [{ f: () => 1 }, "$.f", /function/],
      [Symbol("s"), "$", /symbol/],
      [{ [Symbol("k")]: 1 }, "$", /symbol/],
      [Object.assign(new (class extends Array {})(), [1]), "$", /subclass/],
      [{ "odd key": { x: 1n } }, "$[\"odd key\"].x", /bigint/]
    ]
    for (const [value, path, reason] of cases) {
      const error = rejects(value)
      expect(error.path).toBe(path)
      expect(error.reason).toMatch(reason)
      expect(error.code).toBe("INVALID_JSON")
      expect(Json.isJson(value)).toBe(false)
    }
  })

  it("AC-7 [V-11] accepts null-prototype objects, shared (acyclic) references and every plain JSON value", () => {
    const bare = Object.create(null) as Record<string, unknown>
    bare["k"] = [1, "two", null, true, { n: 0.5 }]
    const shared = { s: 1 }
    const value = { bare, a: shared, b: shared, e: "", zero: 0 }
    const copy = Result.getOrThrow(Json.copyJson(value))
    expect(copy).toEqual({ bare: { k: [1, "two", null, true, { n: 0.5 }] }, a: { s: 1 }, b: { s: 1 }, e: "", zero: 0 })
    // detached: nothing shared with the input
    expect((copy as Json.JsonObject)["a"]).not.toBe(shared)
    expect((copy as Json.JsonObject)["bare"]).not.toBe(bare)
    for (const scalar of [null, true, false, 0, 1.5, -3, "x"]) expect(Json.isJson(scalar)).toBe(true)
  })

  it("AC-7 [V-11] a getter is read exactly once, and the copy holds the value of that single read", () => {
    let reads = 0
    const tricky = {
      get value() {
        reads++
        return reads === 1 ? "first" : 1n
      }
    }
    const copy = Result.getOrThrow(Json.copyJson(tricky))
    expect(reads).toBe(1)
    expect(copy).toEqual({ value: "first" })
    const copyDescriptor = Object.getOwnPropertyDescriptor(copy, "value")
    expect(copyDescriptor?.get).toBeUndefined()
    expect(copyDescriptor?.value).toBe("first")
  })

  it("[V-11] a throwing getter is rejected, never thrown", () => {
    const hostile = {
      get boom(): never {
        throw new Error("nope")
      }
    }
    expect(rejects(hostile).reason).toMatch(/unreadable value \(nope\)/)
  })

  it("[V-11] snapshot deep-freezes its copy; a \"__proto__\" key stays an own data property", () => {
    const input = JSON.parse("{\"__proto__\":{\"polluted\":true},\"list\":[{\"a\":1}]}") as unknown
    const snap = Result.getOrThrow(Json.snapshot(input)) as Json.JsonObject
    expect(Object.isFrozen(snap)).toBe(true)
    expect(Object.isFrozen(snap["list"])).toBe(true)
    expect(Object.isFrozen((snap["list"] as ReadonlyArray<Json.Json>)[0])).toBe(true)
    expect(Object.getPrototypeOf(snap)).toBe(Object.prototype)
    expect(Object.keys(snap)).toEqual(["__proto__", "list"])
    expect(JSON.stringify(snap)).toBe(JSON.stringify(input))
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it.effect("[V-11] the Json schema decodes to a detached copy and reports the path that broke", () =>
    Effect.gen(function*() {
      const input = { a: [1, { b: "c" }] }
      const decoded = yield* Schema.decodeUnknownEffect(Json.Json)(input)
      expect(decoded).toEqual(input)
      expect(decoded).not.toBe(input)
      const error = yield* Effect.flip(Schema.decodeUnknownEffect(Json.Json)({ a: [1, NaN] }))
      expect(error.message).toContain("$.a[1]")
    }))

  it("[V-11] canonical text sorts keys; equals is order-insensitive for objects only", () => {
    expect(Json.canonical({ b: 1, a: [2, { d: null, c: "x" }] })).toBe("{\"a\":[2,{\"c\":\"x\",\"d\":null}],\"b\":1}")
    expect(Json.equals({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true)
    expect(Json.equals([1, 2], [2, 1])).toBe(false)
  })
})
