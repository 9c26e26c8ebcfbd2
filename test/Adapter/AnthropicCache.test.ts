import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"

const key = Redacted.make("sk-ant-secret-abcdef")
const model = "claude-sonnet-4-5"
const tool = (name: string) => ({ name, description: name, parameters: { type: "object" } })

const assistantCall = (id: string): Message.Message => ({
  role: "assistant",
  content: [ContentBlock.text("calling"), ContentBlock.toolCall(id, "read", "{}")]
})
const result = (id: string): Message.Message => ({
  role: "user",
  content: [ContentBlock.toolResult(id, [ContentBlock.text("ok")])]
})

const body = (options: Partial<Anthropic.Options>, messages: ReadonlyArray<Message.Message>) =>
  Effect.map(
    Anthropic.resolve({ apiKey: key, ...options }),
    (resolved) =>
      Result.getOrThrow(Anthropic.buildBody(resolved, {
        provider: "anthropic",
        model,
        system: "you are terse",
        tools: [tool("read"), tool("write")],
        messages
      }))
  )

/** every `cache_control` of a body, as the JSON path it sits at */
const breakpoints = (value: unknown, path = ""): Array<string> => {
  if (Array.isArray(value)) return value.flatMap((v, i) => breakpoints(v, `${path}[${i}]`))
  if (typeof value !== "object" || value === null) return []
  return Object.entries(value).flatMap(([k, v]) => k === "cache_control" ? [path] : breakpoints(v, `${path}.${k}`))
}

describe("Anthropic prompt caching (issue 30, DEC-17)", () => {
  it.effect("breakpoints: last tool, system, the previous request's tail and this request's tail (at most 4)", () =>
    Effect.gen(function*() {
      const history = [Message.user("read a"), assistantCall("t1"), result("t1"), assistantCall("t2"), result("t2")]
      const wire = yield* body({}, history)
      expect(breakpoints(wire)).toEqual([
        ".system[0]",
        ".messages[2].content[0]",
        ".messages[4].content[0]",
        ".tools[1]"
      ])
      expect((wire["tools"] as Array<Record<string, unknown>>)[1]?.["cache_control"]).toEqual({ type: "ephemeral" })
    }))

  it.effect("the next request carries this request's tail breakpoint at the same position (what it wrote, it reads)", () =>
    Effect.gen(function*() {
      const first = [Message.user("read a"), assistantCall("t1"), result("t1")]
      const now = yield* body({}, first)
      const later = yield* body({}, [...first, assistantCall("t2"), result("t2")])
      const tail = (b: Record<string, unknown>, i: number) => (b["messages"] as Array<Record<string, unknown>>)[i]
      expect(tail(later, 2)).toEqual(tail(now, 2))
      expect(breakpoints(later)).toContain(".messages[2].content[0]")
    }))

  it.effect("1h TTL: every breakpoint carries ttl 1h and the extended-TTL beta header is sent", () =>
    Effect.gen(function*() {
      const resolved = yield* Anthropic.resolve({ apiKey: key, promptCache: { ttl: "1h" }, betas: ["other"] })
      expect(resolved.headers["anthropic-beta"]).toBe(`other,${Anthropic.extendedCacheTtlBeta}`)
      const wire = yield* body({ promptCache: { ttl: "1h" } }, [Message.user("hi")])
      expect(JSON.stringify(wire).match(/"cache_control":\{"type":"ephemeral","ttl":"1h"\}/g)?.length).toBe(3)
      const fiveMinutes = yield* Anthropic.resolve({ apiKey: key })
      expect(fiveMinutes.headers["anthropic-beta"]).toBeUndefined()
    }))

  it.effect("thinking blocks never carry cache_control; promptCache false turns caching off", () =>
    Effect.gen(function*() {
      const marked = Anthropic.cacheBreakpoints({
        messages: [{ role: "assistant", content: [{ type: "text", text: "a" }, { type: "thinking", thinking: "t", signature: "s" }] }]
      }, "5m")
      expect(breakpoints(marked)).toEqual([".messages[0].content[0]"])
      const off = yield* Anthropic.resolve({ apiKey: key, promptCache: false })
      expect(off.cacheTtl).toBeUndefined()
    }))
})
