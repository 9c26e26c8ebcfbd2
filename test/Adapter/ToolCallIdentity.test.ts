/**
 * Tool-call identity when `index` is absent (issue 11 item 2; rule in `OpenAiCompatible`'s module
 * doc, beside P-5): a new `id` opens a new call, a known `id` continues its call, a fragment with
 * neither `index` nor `id` continues the last call touched. Streams decoded through the real SSE
 * decoder and translator, assembled with `BlockAssembler.sink`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"

const encoder = new TextEncoder()

const chunk = (toolCalls: ReadonlyArray<Record<string, unknown>>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: finish }] })}\n\n`

const call = (id: string | undefined, name: string | undefined, args: string, index?: number) => ({
  ...(index === undefined ? {} : { index }),
  ...(id === undefined ? {} : { id, type: "function" }),
  function: { ...(name === undefined ? {} : { name }), arguments: args }
})

const assemble = (...events: ReadonlyArray<string>) =>
  Stream.fromIterable([...events, "data: [DONE]\n\n"].map((e) => encoder.encode(e))).pipe(
    OpenAiCompatible.decodeResponse(["reasoning_content", "reasoning"], "gemini"),
    Stream.run(BlockAssembler.sink)
  )

describe("OpenAI-compatible tool calls without index (P-5, issue 11)", () => {
  it.effect("[P-5] two complete calls in separate chunks, no index: two calls with their own ids, names, arguments", () =>
    Effect.gen(function*() {
      const assembled = yield* assemble(
        chunk([call("call_1", "get_weather", "{\"location\":\"Sydney\"}")]),
        chunk([call("call_2", "get_time", "{\"tz\":\"UTC\"}")], "tool_calls")
      )
      expect(assembled.blocks).toEqual([
        ContentBlock.toolCall("call_1", "get_weather", "{\"location\":\"Sydney\"}"),
        ContentBlock.toolCall("call_2", "get_time", "{\"tz\":\"UTC\"}")
      ])
      expect(assembled.finish).toEqual({ kind: "tool-calls" })
    }))

  it.effect("[P-5] three complete calls in separate chunks, no index (same tool name twice)", () =>
    Effect.gen(function*() {
      const assembled = yield* assemble(
        chunk([call("a", "read", "{\"path\":\"x\"}")]),
        chunk([call("b", "read", "{\"path\":\"y\"}")]),
        chunk([call("c", "ls", "{}")], "tool_calls")
      )
      expect(assembled.blocks).toEqual([
        ContentBlock.toolCall("a", "read", "{\"path\":\"x\"}"),
        ContentBlock.toolCall("b", "read", "{\"path\":\"y\"}"),
        ContentBlock.toolCall("c", "ls", "{}")
      ])
    }))

  it.effect("[P-5] two complete calls in ONE chunk's array, no index: two calls", () =>
    Effect.gen(function*() {
      const assembled = yield* assemble(
        chunk([call("a", "f", "{\"x\":1}"), call("b", "g", "{\"y\":2}")], "tool_calls")
      )
      expect(assembled.blocks).toEqual([ContentBlock.toolCall("a", "f", "{\"x\":1}"), ContentBlock.toolCall("b", "g", "{\"y\":2}")])
    }))

  it.effect("[P-5] a fragment with neither id nor index continues the last open call; a repeated id continues its own call", () =>
    Effect.gen(function*() {
      const assembled = yield* assemble(
        chunk([call("a", "f", "{\"x\":")]),
        chunk([call(undefined, undefined, "1}")]),
        chunk([call("b", "g", "{\"y\"")]),
        chunk([call(undefined, undefined, ":2}")]),
        chunk([call("a", undefined, "")], "tool_calls")
      )
      expect(assembled.blocks).toEqual([ContentBlock.toolCall("a", "f", "{\"x\":1}"), ContentBlock.toolCall("b", "g", "{\"y\":2}")])
    }))

  it.effect("[P-5] mixed: indexed calls keep their index keys; an unindexed new id opens a new call; id-less unindexed continues the last touched", () =>
    Effect.gen(function*() {
      const assembled = yield* assemble(
        chunk([call("i0", "f", "{", 0)]),
        chunk([call(undefined, undefined, "}", 0)]),
        chunk([call("n1", "g", "[")]),
        chunk([call(undefined, undefined, "]")]),
        chunk([call(undefined, undefined, "\"\"", 1)]),
        chunk([call(undefined, undefined, "")], "tool_calls")
      )
      expect(assembled.blocks).toEqual([
        ContentBlock.toolCall("i0", "f", "{}"),
        ContentBlock.toolCall("n1", "g", "[]"),
        ContentBlock.toolCall("call-2", "", "\"\"")
      ])
    }))

  it.effect("[P-5] unchanged: a fragment without id but with an index is keyed by its index (streamed arguments)", () =>
    Effect.gen(function*() {
      const assembled = yield* assemble(
        chunk([call("a", "f", "", 0), call("b", "g", "", 1)]),
        chunk([call(undefined, undefined, "{\"p\"", 1)]),
        chunk([call(undefined, undefined, "{\"q\"", 0)]),
        chunk([call(undefined, undefined, ":1}", 0), call(undefined, undefined, ":2}", 1)], "tool_calls")
      )
      expect(assembled.blocks).toEqual([ContentBlock.toolCall("a", "f", "{\"q\":1}"), ContentBlock.toolCall("b", "g", "{\"p\":2}")])
    }))
})
