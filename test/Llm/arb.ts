/**
 * The few fast-check shapes the property tests use, built on Effect 4's own `effect/Arbitrary`
 * (Effect 4 no longer re-exports fast-check as `effect/FastCheck`). Same names and meanings as
 * fast-check's, so the properties read as before.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"

export type Arb<A> = Arbitrary.Arbitrary<A>

/** an integer in [min, max] */
export const integer = (options: { readonly min: number; readonly max: number }): Arb<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: options.min, maximum: options.max })))

/** a natural number up to `max` (default 2^31 - 1) */
export const nat = (max = 0x7fffffff): Arb<number> => integer({ min: 0, max })

export const boolean = (): Arb<boolean> => Arbitrary.schema(Schema.Boolean)

export const constant = <const A>(value: A): Arb<A> => Arbitrary.Constant(value)

/** one of the arbitraries, picked uniformly */
export const oneof = <A>(...arbs: ReadonlyArray<Arb<A>>): Arb<A> =>
  Arbitrary.flatMap(nat(arbs.length - 1), (i) => arbs[i] as Arb<A>)

export const constantFrom = <const A>(...values: ReadonlyArray<A>): Arb<A> =>
  Arbitrary.map(nat(values.length - 1), (i) => values[i] as A)

export const array = <A>(
  item: Arb<A>,
  options: { readonly minLength?: number; readonly maxLength?: number } = {}
): Arb<Array<A>> => Arbitrary.array(item, options)

/** `undefined` or a value, like fast-check's `option` with `nil: undefined` */
export const option = <A>(arb: Arb<A>): Arb<A | undefined> => oneof<A | undefined>(constant(undefined), arb)

export const record = Arbitrary.all

export const map = Arbitrary.map

const fromCodePoints = (points: ReadonlyArray<number>): string => String.fromCodePoint(...points)

/** a string of printable ASCII */
export const string = (options: { readonly minLength?: number; readonly maxLength?: number } = {}): Arb<string> =>
  Arbitrary.map(array(integer({ min: 0x20, max: 0x7e }), options), fromCodePoints)

/** a string of any code points (astral planes included), never a lone surrogate */
export const fullUnicodeString = (
  options: { readonly minLength?: number; readonly maxLength?: number } = {}
): Arb<string> =>
  Arbitrary.map(
    array(oneof(integer({ min: 0, max: 0xd7ff }), integer({ min: 0xe000, max: 0x10ffff })), options),
    fromCodePoints
  )

/** every element of `values`, in a random order (fast-check's full-length `shuffledSubarray`) */
export const shuffled = <A>(values: ReadonlyArray<A>): Arb<Array<A>> =>
  Arbitrary.map(
    array(nat(), { minLength: values.length, maxLength: values.length }),
    (keys) => values.map((v, i) => [keys[i] as number, i, v] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((e) => e[2])
  )

type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | { readonly [k: string]: JsonValue }

const jsonValue = (depth: number): Arb<JsonValue> => {
  const leaf = oneof<JsonValue>(
    constant(null),
    boolean(),
    integer({ min: -1000, max: 1000 }),
    fullUnicodeString({ maxLength: 6 })
  )
  if (depth <= 0) return leaf
  const inner = jsonValue(depth - 1)
  return oneof<JsonValue>(
    leaf,
    array(inner, { maxLength: 4 }),
    Arbitrary.map(array(record([string({ maxLength: 4 }), inner]), { maxLength: 4 }), (entries) => Object.fromEntries(entries))
  )
}

/** a JSON text (fast-check's `json`) */
export const json = (options: { readonly maxDepth: number }): Arb<string> =>
  Arbitrary.map(jsonValue(options.maxDepth), (value) => JSON.stringify(value))
