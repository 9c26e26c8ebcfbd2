import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import * as IdEncoding from "../../../src/Session/persistence/IdEncoding.js"

const enc = (id: string) => Result.getOrThrow(IdEncoding.encode(id))

// ids biased towards the interesting units: kept chars, `~`, `.`, separators, surrogates
const codeUnit = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 0xffff })))
const interesting = Arbitrary.schema(
  Schema.Literals(["a", "Z", "0", ".", "-", "_", "~", "/", "\\", "\u0000", "é", "\ud83d", "\ude00"])
)
const idArb = Arbitrary.flatMap(Arbitrary.schema(Schema.Boolean), (units) =>
  units
    ? Arbitrary.map(Arbitrary.array(codeUnit, { minLength: 1, maxLength: 30 }), (codes) => String.fromCharCode(...codes))
    : Arbitrary.map(Arbitrary.array(interesting, { minLength: 1, maxLength: 12 }), (parts) => parts.join("")))

describe("IdEncoding [D-9]", () => {
  it("keeps [A-Za-z0-9._-], escapes everything else and `~` as ~xxxx, fully escapes . and ..", () => {
    expect(enc("abc-DEF_0.9")).toBe("abc-DEF_0.9")
    expect(enc("a/b")).toBe("a~002fb")
    expect(enc("~")).toBe("~007e")
    expect(enc("é😀")).toBe("~00e9~d83d~de00")
    expect(enc(".")).toBe("~002e")
    expect(enc("..")).toBe("~002e~002e")
    expect(enc("...")).toBe("...")
    expect(enc("../etc/passwd")).toBe("..~002fetc~002fpasswd")
    expect(IdEncoding.encode("")).toEqual(Result.fail("empty"))
    expect(IdEncoding.encode("/".repeat(60))).toEqual(Result.fail("too-long"))
  })

  it.prop("decode(encode(id)) === id: injective", [idArb], ([id]) => {
    const name = enc(id)
    expect(IdEncoding.decode(name)).toBe(id)
  }, { arbitrary: { runs: 2000 } })

  it.prop("distinct ids never share a name", [idArb, idArb], ([a, b]) => {
    if (a === b) return
    expect(enc(a)).not.toBe(enc(b))
  }, { arbitrary: { runs: 2000 } })

  it.prop("traversal-proof: one plain path component, never . or ..", [idArb], ([id]) => {
    const name = enc(id)
    expect(name).toMatch(/^[A-Za-z0-9._~-]+$/)
    expect(name).not.toBe(".")
    expect(name).not.toBe("..")
  }, { arbitrary: { runs: 2000 } })

  it("decode rejects names encode cannot produce", () => {
    expect(IdEncoding.decode("a~0061")).toBeUndefined() // escaped kept unit
    expect(IdEncoding.decode("a~00")).toBeUndefined()
    expect(IdEncoding.decode("a~00E9")).toBeUndefined() // upper-case hex
    expect(IdEncoding.decode("a b")).toBeUndefined()
    expect(IdEncoding.decode("..")).toBeUndefined()
    expect(IdEncoding.decode("")).toBeUndefined()
  })
})
