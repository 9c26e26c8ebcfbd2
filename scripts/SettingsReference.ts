/**
 * The settings-key reference (issue 18): every key of the settings schema, nested keys as dotted paths, with its
 * type as the schema states it and what its checks expect (their `expected` annotations) or its description.
 */
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaText from "./SchemaText.js"

interface Row {
  readonly key: string
  readonly type: string
  readonly optional: boolean
  readonly description: string
}

// the shape the user writes: the encoded side, without the `undefined` of an optional key
const encodedSide = (ast: SchemaAST.AST): SchemaAST.AST => {
  const encoded = SchemaAST.toEncoded(ast)
  if (encoded._tag !== "Union") return encoded
  const members = encoded.types.filter((t) => t._tag !== "Undefined")
  return members.length === 1 ? encodedSide(members[0]!) : encoded
}

const textOf = (value: unknown): string | undefined => typeof value === "string" ? value : undefined

// what the last check expects (the one Effect 3 described: "a positive number"), else the description
const descriptionOf = (ast: SchemaAST.AST): string =>
  textOf(ast.checks?.at(-1)?.annotations?.["expected"]) ?? textOf(ast.annotations?.["description"]) ?? ""

const rowsOf = (ast: SchemaAST.AST, prefix: string): ReadonlyArray<Row> => {
  const shape = encodedSide(ast)
  if (shape._tag !== "Objects") return []
  return shape.propertySignatures.flatMap((p) => {
    const key = `${prefix}${String(p.name)}`
    const type = encodedSide(p.type)
    const own: Row = { key, type: type._tag === "Objects" ? "object" : SchemaText.typeText(type), optional: SchemaAST.isOptional(p.type), description: descriptionOf(p.type) }
    return [own, ...rowsOf(type, `${key}.`)]
  })
}

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

/** The reference's markdown body for `schema`. */
export const render = (schema: Schema.Top): string =>
  "| key | type | required | description |\n|---|---|---|---|\n" +
  rowsOf(schema.ast, "").map((r) =>
    `| \`${r.key}\` | \`${escapeCell(r.type)}\` | ${r.optional ? "no" : "yes"} | ${escapeCell(r.description)} |`
  ).join("\n") + "\n"
