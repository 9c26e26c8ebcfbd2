/**
 * A schema's type as text, for the generated references: an identifier when the schema has one, else its
 * TypeScript-like shape, with refinements named as Effect 3 printed them (`int & nonNegative`, `minLength(1)`).
 */
import * as SchemaAST from "effect/SchemaAST"

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined

// the name of one check from its `representation` annotation (`{ id, payload }`), else what it expects
const checkText = (check: SchemaAST.Check<unknown>): string => {
  const representation = field(check.annotations, "representation")
  const payload = field(representation, "payload")
  switch (field(representation, "id")) {
    case "effect/schema/isInt":
      return "int"
    case "effect/schema/isFinite":
      return "finite"
    case "effect/schema/isGreaterThanOrEqualTo":
      return field(payload, "minimum") === 0 ? "nonNegative" : `greaterThanOrEqualTo(${String(field(payload, "minimum"))})`
    case "effect/schema/isGreaterThan":
      return field(payload, "exclusiveMinimum") === 0 || field(payload, "minimum") === 0
        ? "positive"
        : `greaterThan(${String(field(payload, "exclusiveMinimum") ?? field(payload, "minimum"))})`
    case "effect/schema/isMinLength":
      return `minLength(${String(field(payload, "minLength"))})`
    default: {
      const expected = field(check.annotations, "expected")
      return typeof expected === "string" ? expected : check._tag
    }
  }
}

const shapeText = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Objects": {
      const members = ast.propertySignatures.map((p) =>
        `readonly ${String(p.name)}${SchemaAST.isOptional(p.type) ? "?" : ""}: ${typeText(p.type)}`
      )
      return members.length === 0 ? "{}" : `{ ${members.join("; ")} }`
    }
    case "Arrays":
      return ast.rest.length === 0
        ? `readonly [${ast.elements.map(typeText).join(", ")}]`
        : ast.elements.length === 0 && ast.rest.length === 1
        ? `ReadonlyArray<${typeText(ast.rest[0]!)}>`
        : "array"
    case "Union":
      return ast.types.filter((t) => t._tag !== "Undefined").map(typeText).join(" | ")
    case "Literal":
      return JSON.stringify(ast.literal)
    default:
      return ast._tag.toLowerCase()
  }
}

/**
 * The type of `ast` as text.
 */
export const typeText = (ast: SchemaAST.AST): string => {
  const identifier = field(ast.annotations, "identifier")
  if (typeof identifier === "string") return identifier
  const checks = ast.checks ?? []
  return checks.length === 0 ? shapeText(ast) : checks.map(checkText).join(" & ")
}
