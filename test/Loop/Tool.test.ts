import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Tool from "../../src/Loop/Tool.js"
import * as ToolRegistry from "../../src/Loop/ToolRegistry.js"

const messageOf = (e: unknown): string => (e instanceof Tool.ToolArgsError ? e.message : `not a ToolArgsError: ${String(e)}`)

const readProps = {
  path: { type: "string", required: true, description: "file path" },
  limit: { type: "number" },
  mode: { type: "string", enum: ["r", "w"] },
  opts: {
    type: "object",
    properties: { deep: { type: "boolean", required: true }, inner: { type: "object", properties: { x: { type: "number" } } } }
  },
  tags: { type: "array", items: { type: "string" } },
  anyObj: { type: "object" },
  anyArr: { type: "array" },
  withDefault: { type: "number", default: 5 }
} as const

describe("Tool (T-10 DSL)", () => {
  it("AC-94 [T-10] JSON Schema: type object, properties, required only when non-empty, nested objects get their own", () => {
    expect(Tool.propertiesSchema(readProps)).toEqual({
      type: "object",
      properties: {
        path: { type: "string", description: "file path" },
        limit: { type: "number" },
        mode: { type: "string", enum: ["r", "w"] },
        opts: {
          type: "object",
          properties: { deep: { type: "boolean" }, inner: { type: "object", properties: { x: { type: "number" } } } },
          required: ["deep"]
        },
        tags: { type: "array", items: { type: "string" } },
        anyObj: { type: "object" },
        anyArr: { type: "array" },
        withDefault: { type: "number", default: 5 }
      },
      required: ["path"]
    })
    expect(Tool.propertiesSchema({ a: { type: "string" } })).toEqual({ type: "object", properties: { a: { type: "string" } } })
  })

  it("AC-94 [T-10] messages: missing, undefined, wrong primitive, enum, a.b, a[0], non-object top level", () => {
    expect(Tool.validateProperties(readProps, {})).toEqual([`missing required property "path"`])
    expect(Tool.validateProperties(readProps, { path: undefined })).toEqual([`missing required property "path"`])
    expect(Tool.validateProperties(readProps, { path: 1, limit: "x" })).toEqual([
      `"path" must be a string`,
      `"limit" must be a number`
    ])
    expect(Tool.validateProperties(readProps, { path: "p", mode: "x" })).toEqual([`"mode" must be one of ["r","w"]`])
    expect(Tool.validateProperties(readProps, { path: "p", opts: {} })).toEqual([`missing required property "opts.deep"`])
    expect(Tool.validateProperties(readProps, { path: "p", opts: { deep: true, inner: { x: "no" } } })).toEqual([
      `"opts.inner.x" must be a number`
    ])
    expect(Tool.validateProperties(readProps, { path: "p", tags: ["a", 2] })).toEqual([`"tags[1]" must be a string`])
    expect(Tool.validateProperties(readProps, { path: "p", opts: [] })).toEqual([`"opts" must be an object`])
    expect(Tool.validateProperties(readProps, { path: "p", tags: "a" })).toEqual([`"tags" must be an array`])
    for (const top of [[], "x", 1, null, true]) {
      expect(Tool.validateProperties(readProps, top)).toEqual([`"arguments" must be an object`])
    }
  })

  it("AC-94 [T-10] extra keys allowed, object/array without properties/items only type-checked, enum on any type", () => {
    expect(Tool.validateProperties(readProps, { path: "p", extra: 1, anyObj: { z: [1] }, anyArr: [1, "a", {}] })).toEqual([])
    expect(Tool.validateProperties({ n: { type: "number", enum: ["1"] } }, { n: 1 })).toEqual([`"n" must be one of ["1"]`])
  })

  it.effect("AC-94 [T-10] violations in declaration order, joined in one ToolArgsError; defaults not applied", () =>
    Effect.gen(function*() {
      let seen: unknown
      const tool = Tool.fromProperties({
        name: "read",
        description: "Reads",
        properties: readProps,
        execute: (args) => Effect.sync(() => {
          seen = args
          return [ContentBlock.text(args.path)]
        })
      })
      const error = yield* Effect.flip(tool.execute({ limit: "x", mode: 3 }, undefined as never))
      expect(error).toBeInstanceOf(Tool.ToolArgsError)
      const e = error as Tool.ToolArgsError
      expect(e.code).toBe("INVALID_ARGS")
      expect(e.message).toBe(
        `invalid arguments: missing required property "path"; "limit" must be a number; "mode" must be a string`
      )
      yield* tool.execute({ path: "a" }, undefined as never)
      expect(seen).toEqual({ path: "a" })
    }))
})

describe("Tool (Schema parameters)", () => {
  const params = Schema.Struct({
    path: Schema.String.annotate({ description: "file path" }),
    count: Schema.optionalKey(Schema.Int),
    mode: Schema.optionalKey(Schema.Literals(["r", "w"])),
    nested: Schema.optionalKey(Schema.Struct({ flag: Schema.Boolean })),
    list: Schema.optionalKey(Schema.Array(Schema.Number))
  })
  const tool = Tool.make({
    name: "files",
    description: "Files",
    parameters: params,
    isConcurrencySafe: (args) => args.mode === "r",
    execute: (args) => Effect.succeed([ContentBlock.text(`${args.path}:${args.count ?? 0}`)])
  })

  it("[T-10] JSON Schema is inline: no $ref, $defs or $schema, even with Schema.Int", () => {
    const text = JSON.stringify(tool.parameters)
    expect(text).not.toContain("$ref")
    expect(text).not.toContain("$defs")
    expect(text).not.toContain("$schema")
    expect(tool.parameters["type"]).toBe("object")
    expect(tool.parameters["required"]).toEqual(["path"])
    expect((tool.parameters["properties"] as Record<string, unknown>)["count"]).toMatchObject({ type: "integer" })
    expect((tool.parameters["properties"] as Record<string, unknown>)["path"]).toEqual({ type: "string", description: "file path" })
    expect(Object.isFrozen(tool.parameters)).toBe(true)
  })

  it.effect("[T-10] a validation failure is INVALID_ARGS naming the paths", () =>
    Effect.gen(function*() {
      const e1 = yield* Effect.flip(tool.execute({}, undefined as never))
      expect(messageOf(e1)).toBe(`invalid arguments: missing required property "path"`)
      const e2 = yield* Effect.flip(
        tool.execute({ path: 1, mode: "x", nested: { flag: "no" }, list: [1, "b"] }, undefined as never)
      )
      expect(messageOf(e2)).toBe(
        `invalid arguments: "path" must be a string; "mode" must be one of ["r","w"]; "nested.flag" must be a boolean; "list[1]" must be a number`
      )
      const e3 = yield* Effect.flip(tool.execute({ path: "p", count: 1.5 }, undefined as never))
      expect(messageOf(e3)).toMatch(/^invalid arguments: "count" is invalid: /)
      const e4 = yield* Effect.flip(tool.execute([], undefined as never))
      expect(messageOf(e4)).toBe(`invalid arguments: "arguments" must be an object`)
      const e5 = yield* Effect.flip(tool.execute({ path: undefined }, undefined as never))
      expect(messageOf(e5)).toBe(`invalid arguments: missing required property "path"`)
      expect(yield* tool.execute({ path: "p", count: 2, extra: true }, undefined as never)).toEqual([ContentBlock.text("p:2")])
    }))

  it("[L-14,T-10] the classifier sees decoded arguments and is soft on invalid ones", () => {
    expect(tool.isConcurrencySafe?.({ path: "p", mode: "r" })).toBe(true)
    expect(tool.isConcurrencySafe?.({ path: "p", mode: "w" })).toBe(false)
    expect(tool.isConcurrencySafe?.({ mode: "r" })).toBe(false)
    expect(tool.isConcurrencySafe?.("not json")).toBe(false)
  })

  it("[T-14] presenters validate softly (fallback undefined), never throw", () => {
    const presented = Tool.make({
      name: "p",
      description: "",
      parameters: Schema.Struct({ x: Schema.String }),
      presentCall: (args) => ({ card: "generic", title: args.x }),
      presentResult: () => {
        throw new Error("boom")
      },
      execute: () => Effect.succeed([])
    })
    expect(presented.presentCall?.({ x: "hi" })).toEqual({ card: "generic", title: "hi" })
    expect(presented.presentCall?.({ x: 1 })).toBeUndefined()
    expect(presented.presentResult?.({ x: "hi" }, { content: [], isError: false })).toBeUndefined()
  })

  it.effect("AC-101 [V-7,T-1] schemas() excludes execute, timeout, classifier, presenters", () =>
    Effect.gen(function*() {
      const hostHeavy = Tool.raw({
        name: "raw",
        description: "Raw tool",
        parameters: { type: "object", properties: { q: { type: "string" } } },
        timeoutMs: 50,
        isConcurrencySafe: () => true,
        presentCall: () => undefined,
        presentResult: () => undefined,
        execute: () => Effect.succeed([])
      })
      const registry = yield* ToolRegistry.make([hostHeavy, tool])
      const schemas = yield* ToolRegistry.view({ global: registry }).schemas()
      expect(schemas.map((s) => Object.keys(s).sort())).toEqual([
        ["description", "name", "parameters"],
        ["description", "name", "parameters"]
      ])
      expect(schemas[0]).toEqual({
        name: "raw",
        description: "Raw tool",
        parameters: { type: "object", properties: { q: { type: "string" } } }
      })
      // detached: mutating a returned schema does not touch the tool
      ;(schemas[0]!.parameters as Record<string, unknown>)["type"] = "changed"
      expect(hostHeavy.parameters["type"]).toBe("object")
      expect(JSON.stringify(schemas)).not.toMatch(/timeout|execute|isConcurrencySafe|present/)
    }))

  it("[T-10] constructor rejects bad definitions (programmer errors)", () => {
    expect(() => Tool.raw({ name: "", description: "", parameters: {}, execute: () => Effect.succeed([]) })).toThrow()
    expect(() => Tool.raw({ name: "t", description: "", parameters: {}, timeoutMs: 0, execute: () => Effect.succeed([]) }))
      .toThrow()
  })
})
