import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import { Adapter } from "../../src/Llm/LlmAdapter.js"
import { ProviderError } from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"

const S = StreamChunk
const request = (text = "hi"): Message.GenerateOptions => ({ provider: "scripted", model: "demo", messages: [Message.user(text)] })

const collect = (handle: Scripted.Handle, options = request()) =>
  Stream.runCollect(handle.adapter.stream(options))

const settle = Effect.repeat(Effect.yieldNow, Schedule.recurs(50))

describe("Scripted adapter (DEC-5)", () => {
  it.effect("§12 text(s) = block-start, one delta per character, block-end, usage {10, len}, finish stop", () =>
    Effect.gen(function*() {
      const handle = yield* Scripted.make([Scripted.text("hé😊")])
      expect(yield* collect(handle)).toEqual([
        S.blockStart(0, "text"),
        S.textDelta(0, "h"),
        S.textDelta(0, "é"),
        S.textDelta(0, "😊"),
        S.blockEnd(0, ContentBlock.text("hé😊")),
        S.usage({ inputTokens: 10, outputTokens: 3 }),
        S.finish({ kind: "stop" })
      ])
    }))

  it.effect("§12 call(id, name, args) = block-start, two deltas splitting the JSON (name on the first), block-end, usage, finish tool-calls", () =>
    Effect.gen(function*() {
      const args = "{\"text\":\"ping\"}"
      const handle = yield* Scripted.make([Scripted.call("c1", "echo", args)])
      const chunks = yield* collect(handle)
      expect(chunks).toEqual([
        S.blockStart(0, "tool-call"),
        S.toolCallDelta(0, "c1", args.slice(0, 7), "echo"),
        S.toolCallDelta(0, "c1", args.slice(7)),
        S.blockEnd(0, ContentBlock.toolCall("c1", "echo", args)),
        S.usage({ inputTokens: 10, outputTokens: args.length }),
        S.finish({ kind: "tool-calls" })
      ])
      // the open-block assembly of the deltas equals the block-end (C-1)
      const withoutEnd = chunks.filter((c) => c.type !== "block-end")
      expect(BlockAssembler.partialBlocks(BlockAssembler.foldAll(withoutEnd))).toEqual([ContentBlock.toolCall("c1", "echo", args)])
    }))

  it.effect("AC-53 text(\"abc\") is 7 chunks whose deltas join to \"abc\"", () =>
    Effect.gen(function*() {
      const chunks = Scripted.toChunks(Scripted.text("abc"))
      expect(chunks).toHaveLength(7)
      expect(chunks.flatMap((c) => (c.type === "text-delta" ? [c.text] : [])).join("")).toBe("abc")
    }))

  it.effect("high-level blocks get consecutive indexes after raw chunks; reasoning, usage extras and replay state", () =>
    Effect.gen(function*() {
      const reply: Scripted.Reply = [
        Scripted.chunk(S.textDelta(4, "raw")),
        Scripted.think("hm"),
        Scripted.say("ok"),
        Scripted.toolCall("t", "n", "{}"),
        Scripted.usage(5, 6, { reasoningTokens: 2 }),
        Scripted.finish("tool-calls", { sig: "x" })
      ]
      const chunks = Scripted.toChunks(reply)
      const indexes = [...new Set(chunks.flatMap((c) => (c.type === "usage" || c.type === "finish" ? [] : [c.index])))]
      expect(indexes).toEqual([4, 5, 6, 7])
      const handle = yield* Scripted.make([reply])
      const assembled = yield* Stream.run(handle.adapter.stream(request()), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([
        ContentBlock.text("raw"),
        ContentBlock.reasoning("hm"),
        ContentBlock.text("ok"),
        ContentBlock.toolCall("t", "n", "{}")
      ])
      expect(assembled.usage).toEqual({ inputTokens: 5, outputTokens: 6, reasoningTokens: 2 })
      expect(assembled.finish).toEqual({ kind: "tool-calls" })
      expect(assembled.replayState).toEqual({ sig: "x" })
    }))

  it.effect("records every request in order and fails loudly with SCRIPT_EXHAUSTED past the script", () =>
    Effect.gen(function*() {
      const handle = yield* Scripted.make([Scripted.text("one")])
      const first = request("first")
      yield* collect(handle, first)
      const error = yield* Effect.flip(collect(handle, request("second")))
      expect(error).toBeInstanceOf(ProviderError)
      expect(error).toMatchObject({ code: "SCRIPT_EXHAUSTED", provider: "scripted" })
      expect(error.message).toContain("call 2")
      const seen = yield* handle.requests
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe(first)
      // a stream that is built but never run is not a call
      const unused = handle.adapter.stream(request("unused"))
      expect(Stream.isStream(unused)).toBe(true)
      expect(yield* handle.requests).toHaveLength(2)
    }))

  it.effect("a response may be a function of the request (plain or effectful), e.g. answering from a tool result", () =>
    Effect.gen(function*() {
      const handle = yield* Scripted.make([
        Scripted.call("c1", "echo", "{\"text\":\"ping\"}"),
        (req, call) => {
          const last = req.messages[req.messages.length - 1]
          const result = last?.content.find((b) => b.type === "tool-result")
          const text = result?.type === "tool-result" ? ContentBlock.flattenText(result.content) : "no result"
          return Scripted.text(`call ${call}: ${text}`)
        },
        () => Effect.succeed(Scripted.text("effectful")),
        () => Effect.fail(new ProviderError({ code: "AUTH", message: "computed failure" }))
      ])
      yield* collect(handle)
      const followUp: Message.GenerateOptions = {
        ...request(),
        messages: [
          Message.user("hi"),
          Message.assistant([ContentBlock.toolCall("c1", "echo", "{\"text\":\"ping\"}")]),
          Message.user([ContentBlock.toolResult("c1", [ContentBlock.text("echo: ping")])])
        ]
      }
      const second = yield* Stream.run(handle.adapter.stream(followUp), BlockAssembler.sink)
      expect(second.blocks).toEqual([ContentBlock.text("call 1: echo: ping")])
      const third = yield* Stream.run(handle.adapter.stream(request()), BlockAssembler.sink)
      expect(third.blocks).toEqual([ContentBlock.text("effectful")])
      const fourth = yield* Effect.flip(collect(handle))
      expect(fourth).toMatchObject({ code: "AUTH", message: "computed failure" })
    }))

  it.effect("in-stream failures: before any chunk and after some chunks (C-4)", () =>
    Effect.gen(function*() {
      const handle = yield* Scripted.make([
        [Scripted.fail("RATE_LIMIT", "slow down", { status: 429, retryAfterMillis: 1000 })],
        [Scripted.say("Hel"), Scripted.fail("SERVER", "overloaded")]
      ])
      const before = yield* Effect.flip(collect(handle))
      expect(before).toMatchObject({ _tag: "ProviderError", code: "RATE_LIMIT", status: 429, retryAfterMillis: 1000 })
      const seen: Array<StreamChunk.StreamChunk> = []
      const after = yield* Effect.flip(Stream.runForEach(handle.adapter.stream(request()), (c) => Effect.sync(() => seen.push(c))))
      expect(after).toMatchObject({ code: "SERVER", message: "overloaded" })
      expect(seen).toEqual(Scripted.toChunks([Scripted.say("Hel")]))
    }))

  it.effect("delay waits on the (test) clock between chunks; chunkDelay spaces every chunk", () =>
    Effect.gen(function*() {
      const handle = yield* Scripted.make([[Scripted.chunk(S.textDelta(0, "a")), Scripted.delay("5 seconds"), Scripted.chunk(S.textDelta(0, "b"))]])
      const seen: Array<string> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(handle.adapter.stream(request()), (c) => Effect.sync(() => c.type === "text-delta" && seen.push(c.text)))
      )
      yield* settle
      expect(seen).toEqual(["a"])
      yield* TestClock.adjust("4999 millis")
      yield* settle
      expect(seen).toEqual(["a"])
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      expect(seen).toEqual(["a", "b"])

      const spaced = yield* Scripted.make([Scripted.text("xy")], { chunkDelay: "100 millis" })
      const count: Array<StreamChunk.StreamChunk> = []
      const fiber2 = yield* Effect.forkChild(Stream.runForEach(spaced.adapter.stream(request()), (c) => Effect.sync(() => count.push(c))))
      yield* settle
      expect(count).toHaveLength(1)
      yield* TestClock.adjust("100 millis")
      yield* settle
      expect(count).toHaveLength(2)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber2)
      expect(count).toHaveLength(6)
    }))

  it.effect("§12 hang = one chunk, then wait until interrupted (finalizers run)", () =>
    Effect.gen(function*() {
      const handle = yield* Scripted.make([Scripted.hang()])
      const seen: Array<StreamChunk.StreamChunk> = []
      let finalized = false
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(
          handle.adapter.stream(request()).pipe(Stream.ensuring(Effect.sync(() => {
            finalized = true
          }))),
          (c) => Effect.sync(() => seen.push(c))
        )
      )
      yield* settle
      yield* TestClock.adjust("1 day")
      yield* settle
      expect(seen).toEqual([S.blockStart(0, "text")])
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* Fiber.interrupt(fiber)
      expect(Exit.hasInterrupts(yield* Fiber.await(fiber))).toBe(true)
      expect(finalized).toBe(true)
      // hang with explicit items
      expect(Scripted.hang(Scripted.say("x"))).toEqual([Scripted.say("x"), Scripted.forever])
    }))

  it.effect("layer provides the Adapter and its Recorder; provider, display name and catalog are configurable", () =>
    Effect.gen(function*() {
      const adapter = yield* Adapter
      expect(adapter.providers).toEqual([{ id: "fake", name: "Fake" }])
      expect(adapter.models).toEqual([{ provider: "fake", id: "demo", name: "demo" }])
      yield* Stream.runDrain(adapter.stream(request()))
      expect(yield* Scripted.requests).toEqual([request()])
    }).pipe(Effect.provide(Scripted.layer([Scripted.text("x")], { provider: "fake", name: "Fake", model: "demo" }))))

  it.effect("layerLlm registers the adapter with Llm for the layer's lifetime", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(Scripted.layerLlm([Scripted.text("routed")], { model: "demo" }), scope)
      expect(yield* Llm.listProviders).toEqual([{ id: "scripted", name: "Scripted" }])
      expect(yield* Llm.listModels()).toEqual([{ provider: "scripted", id: "demo", name: "demo" }])
      const assembled = yield* Stream.run(Llm.stream(request()), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([ContentBlock.text("routed")])
      expect(yield* Scripted.requests.pipe(Effect.provide(context))).toHaveLength(1)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Llm.listProviders).toEqual([])
    }).pipe(Effect.provide(Llm.layer)))
})

describe("Scripted script files", () => {
  const file = JSON.stringify({
    provider: "scripted",
    model: "demo",
    responses: [
      { text: "Hello!" },
      { call: { id: "c1", name: "read", arguments: "{\"path\":\"README.md\"}" } },
      [
        { reasoning: "thinking" },
        { text: "partial" },
        { delayMs: 50 },
        { toolCall: { id: "c2", name: "ls", arguments: "{}" } },
        { usage: { inputTokens: 10, outputTokens: 5 } },
        { finish: { kind: "tool-calls" }, replayState: { n: 1 } }
      ],
      [{ text: "Hel" }, { fail: { code: "SERVER", message: "overloaded", status: 529 } }],
      [{ chunk: { type: "text-delta", index: 0, text: "raw" } }, { hang: true }]
    ]
  })

  it.effect("fromJson decodes every item kind into the same script the constructors build", () =>
    Effect.gen(function*() {
      const { options, script } = yield* Scripted.fromJson(file)
      expect(options).toEqual({ provider: "scripted", model: "demo" })
      expect(script).toEqual([
        Scripted.text("Hello!"),
        Scripted.call("c1", "read", "{\"path\":\"README.md\"}"),
        [
          Scripted.think("thinking"),
          Scripted.say("partial"),
          Scripted.delay("50 millis"),
          Scripted.toolCall("c2", "ls", "{}"),
          Scripted.usage(10, 5),
          Scripted.finish("tool-calls", { n: 1 })
        ],
        [Scripted.say("Hel"), Scripted.fail("SERVER", "overloaded", { status: 529 })],
        [Scripted.chunk(S.textDelta(0, "raw")), Scripted.forever]
      ])
    }))

  it.effect("invalid scripts fail with ScriptError INVALID_SCRIPT naming the problem", () =>
    Effect.gen(function*() {
      const cases = [
        "not json",
        "{}",
        JSON.stringify({ responses: [{ txt: "typo" }] }),
        JSON.stringify({ responses: [[{ text: 1 }]] }),
        JSON.stringify({ responses: [[{ text: "a", extra: true }]] }),
        JSON.stringify({ responses: [[{ delayMs: -1 }]] }),
        JSON.stringify({ responses: [[{ finish: { kind: "error" } }]] }),
        JSON.stringify({ responses: [[{ chunk: { type: "nope", index: 0 } }]] }),
        JSON.stringify({ provider: "", responses: [] })
      ]
      for (const json of cases) {
        const error = yield* Effect.flip(Scripted.fromJson(json))
        expect(error._tag, json).toBe("ScriptError")
        expect(error.code).toBe("INVALID_SCRIPT")
        expect(error.message).toMatch(/^invalid script: /)
      }
    }))

  it.effect("load reads a real file and plays it", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "scripted-"))),
        (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
      )
      const path = join(dir, "script.json")
      writeFileSync(path, file)
      const { options, script } = yield* Scripted.load(path)
      const handle = yield* Scripted.make(script, options)
      const assembled = yield* Stream.run(handle.adapter.stream(request()), BlockAssembler.sink)
      expect(assembled.blocks).toEqual([ContentBlock.text("Hello!")])
      writeFileSync(path, "{\"responses\": [[{\"hang\": false}]]}")
      const invalid = yield* Effect.flip(Scripted.load(path))
      expect(invalid._tag).toBe("ScriptError")
      expect(invalid.message).toContain(path)
      const missing = yield* Effect.flip(Scripted.load(join(dir, "missing.json")))
      // Effect 4: a PlatformError wrapping the reason (v3: a SystemError with reason NotFound)
      expect(missing).toMatchObject({ _tag: "PlatformError", reason: { _tag: "NotFound" } })
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
