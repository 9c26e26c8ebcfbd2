/**
 * The settings-key reference (issue 18): every key of the settings schema, nested keys as dotted paths, with its
 * type as the schema states it and its description annotation when it has one.
 */
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Option from "effect/Option"

interface Row {
  readonly key: string
  readonly type: string
  readonly optional: boolean
  readonly description: string
}

// strips refinements and transformations to the shape the user writes
const encodedSide = (ast: SchemaAST.AST): SchemaAST.AST => {
  switch (ast._tag) {
    case "Transformation":
      return encodedSide(ast.from)
    case "Union": {
      const members = ast.types.filter((t) => t._tag !== "UndefinedKeyword")
      return members.length === 1 ? encodedSide(members[0]!) : ast
    }
    default:
      return ast
  }
}

const rowsOf = (ast: SchemaAST.AST, prefix: string): ReadonlyArray<Row> => {
  const shape = encodedSide(ast)
  if (shape._tag !== "TypeLiteral") return []
  return shape.propertySignatures.flatMap((p) => {
    const key = `${prefix}${String(p.name)}`
    const type = encodedSide(p.type)
    const description = Option.getOrElse(SchemaAST.getDescriptionAnnotation(p), () =>
      Option.getOrElse(SchemaAST.getDescriptionAnnotation(p.type), () => ""))
    const own: Row = { key, type: type._tag === "TypeLiteral" ? "object" : String(type), optional: p.isOptional, description }
    return [own, ...rowsOf(type, `${key}.`)]
  })
}

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

/** The reference's markdown body for `schema`. */
export const render = (schema: Schema.Schema.AnyNoContext): string =>
  "| key | type | required | description |\n|---|---|---|---|\n" +
  rowsOf(schema.ast, "").map((r) =>
    `| \`${r.key}\` | \`${escapeCell(r.type)}\` | ${r.optional ? "no" : "yes"} | ${escapeCell(r.description)} |`
  ).join("\n") + "\n"
