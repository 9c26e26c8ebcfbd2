import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ToolName from "../../src/Mcp/ToolName.js"
import * as ToolResult from "../../src/Mcp/ToolResult.js"
import * as ToolSchema from "../../src/Mcp/ToolSchema.js"

const ok = (u: unknown) => Result.getOrThrow(ToolSchema.normalize(u))

describe("ToolSchema.normalize", () => {
  it("drops $schema, inlines local $refs, removes odd formats", () => {
    expect(ok({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { p: { $ref: "#/$defs/P" }, when: { type: "string", format: "date-time" }, c: { type: "string", format: "color" } },
      $defs: { P: { type: "object", properties: { x: { type: "number" } } } }
    })).toEqual({
      type: "object",
      properties: {
        p: { type: "object", properties: { x: { type: "number" } } },
        when: { type: "string", format: "date-time" },
        c: { type: "string" }
      }
    })
  })

  it("turns a top-level anyOf of objects into one object requiring what every branch requires", () => {
    expect(ok({
      anyOf: [
        { type: "object", properties: { a: { type: "string" }, id: { type: "string" } }, required: ["a", "id"] },
        { type: "object", properties: { b: { type: "number" }, id: { type: "string" } }, required: ["b", "id"] }
      ]
    })).toEqual({
      type: "object",
      properties: { a: { type: "string" }, id: { type: "string" }, b: { type: "number" } },
      required: ["id"]
    })
  })

  it("adds a missing type and properties; skips recursive refs and non-object schemas with a reason", () => {
    expect(ok({})).toEqual({ type: "object", properties: {} })
    expect(ToolSchema.normalize({ type: "string" })).toEqual(Result.fail(`its input schema is not an object schema (type "string")`))
    expect(ToolSchema.normalize({
      type: "object",
      properties: { n: { $ref: "#/definitions/N" } },
      definitions: { N: { type: "object", properties: { next: { $ref: "#/definitions/N" } } } }
    })).toEqual(Result.fail(`its input schema has an recursive $ref "#/definitions/N"`))
    expect(Result.isFailure(ToolSchema.normalize({ anyOf: [{ type: "string" }, { type: "object" }] }))).toBe(true)
  })

  it("validates arguments with T-10 style messages", () => {
    const v = Result.getOrThrow(ToolSchema.validator(ok({
      type: "object",
      properties: { s: { type: "string" }, mode: { enum: ["r", "w"] }, list: { type: "array", items: { type: "number" } } },
      required: ["s"]
    })))
    expect(v({ s: "x" })).toEqual([])
    expect(v({})).toEqual([`missing required property "s"`])
    expect(v({ s: 1, mode: "x", list: [1, "2"] })).toEqual([
      `"s" must be string`,
      `"mode" must be one of ["r","w"]`,
      `"list[1]" must be number`
    ])
    expect(v("nope")).toEqual([`"arguments" must be an object`])
  })
})

describe("ToolName", () => {
  it("sanitises, limits to 64 characters with a hash, and reports collisions", () => {
    expect(ToolName.loopName("my server", "read.file")).toBe("mcp__my_server__read_file")
    const long = ToolName.loopName("s", "x".repeat(100))
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^mcp__s__x+_[0-9a-f]{8}$/)
    expect(ToolName.loopName("s", "x".repeat(100))).not.toBe(ToolName.loopName("s", `${"x".repeat(99)}y`))
    const { collisions, named } = ToolName.assign([
      { server: "a", tool: "b.c" },
      { server: "a", tool: "b_c" }
    ])
    expect(named.map((n) => n.name)).toEqual(["mcp__a__b_c"])
    expect(collisions).toEqual([{ server: "a", tool: "b_c", name: "mcp__a__b_c", with: `tool "b.c" of MCP server "a"` }])
  })
})

describe("ToolResult", () => {
  it("maps text, media and resources; caps huge text with a marker", () => {
    expect(ToolResult.toText({
      content: [
        { type: "text", text: "a" },
        { type: "image", mimeType: "image/png", data: "AAAA" },
        { type: "audio", mimeType: "audio/wav", data: "AAA=" },
        { type: "resource", resource: { uri: "file:///x", mimeType: "text/plain", text: "body" } },
        { type: "resource", resource: { uri: "file:///y", mimeType: "application/zip", blob: "AAAAAA==" } },
        { type: "resource_link", uri: "file:///z", name: "z" }
      ]
    })).toBe(
      "a\n[image: image/png, 3 bytes]\n[audio: audio/wav, 2 bytes]\n[resource file:///x (text/plain)]\nbody\n" +
        "[resource file:///y: application/zip, 4 bytes]\n[resource link: file:///z (z)]"
    )
    expect(ToolResult.toText({ content: [], structuredContent: { n: 1 } })).toBe(`{"n":1}`)
    const capped = ToolResult.cap("é".repeat(10), 5)
    expect(capped).toBe("éé\n… [output truncated: 20 bytes in total, 5 shown]")
  })
})
