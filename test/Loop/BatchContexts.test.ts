import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as Json from "../../src/Llm/Json.js"
import * as Message from "../../src/Llm/Message.js"
import * as BatchContexts from "../../src/Loop/BatchContexts.js"
import type { HookContext } from "../../src/Loop/HookContext.js"

const ctx = (t: string, meta?: Json.Json): HookContext =>
  meta === undefined
    ? { content: [ContentBlock.text(t)], source: Message.pluginSource("p") }
    : { content: [ContentBlock.text(t)], source: Message.pluginSource("p"), meta }

const texts = (list: ReadonlyArray<HookContext>) => list.map((c) => ContentBlock.flattenText(c.content))

describe("BatchContexts (L-19)", () => {
  it.effect("[L-19] FIFO: drain hands contexts over in arrival order, then the FIFO is closed", () =>
    Effect.gen(function*() {
      const fifo = yield* BatchContexts.make
      expect(yield* BatchContexts.offer(fifo, ctx("one"))).toBe(true)
      expect(yield* BatchContexts.offer(fifo, ctx("two", { k: 1 }))).toBe(true)
      expect(texts(yield* BatchContexts.pending(fifo))).toEqual(["one", "two"])
      const out: Array<HookContext> = []
      yield* BatchContexts.drain(fifo, (c) => Effect.sync(() => void out.push(c)))
      expect(texts(out)).toEqual(["one", "two"])
      expect(out[1]?.meta).toEqual({ k: 1 })
      expect(yield* BatchContexts.isOpen(fifo)).toBe(false)
      expect(yield* BatchContexts.offer(fifo, ctx("late"))).toBe(false)
    }))

  it.effect("[L-19] contexts offered while draining (e.g. from an observer of the append) are drained too, in order", () =>
    Effect.gen(function*() {
      const fifo = yield* BatchContexts.make
      yield* BatchContexts.offer(fifo, ctx("a"))
      const out: Array<string> = []
      yield* BatchContexts.drain(fifo, (c) =>
        Effect.gen(function*() {
          const t = ContentBlock.flattenText(c.content)
          out.push(t)
          if (t === "a") {
            expect(yield* BatchContexts.offer(fifo, ctx("b"))).toBe(true)
            expect(yield* BatchContexts.offer(fifo, ctx("c"))).toBe(true)
          }
        }))
      expect(out).toEqual(["a", "b", "c"])
      expect(yield* BatchContexts.offer(fifo, ctx("d"))).toBe(false)
    }))

  it.effect("[L-3,S-4] offer keeps a detached frozen copy; later mutation has no effect; extra keys are dropped", () =>
    Effect.gen(function*() {
      const fifo = yield* BatchContexts.make
      const block = { type: "text" as const, text: "original" }
      const meta: { [k: string]: Json.Json } = { n: 1 }
      const input = { content: [block], source: Message.pluginSource("p"), meta, extra: "x" }
      yield* BatchContexts.offer(fifo, input)
      block.text = "mutated"
      meta["n"] = 2
      const [stored] = yield* BatchContexts.pending(fifo)
      expect(stored).toEqual({ content: [ContentBlock.text("original")], source: Message.pluginSource("p"), meta: { n: 1 } })
      expect(Object.isFrozen(stored)).toBe(true)
    }))

  it.effect("[L-3,V-11] a context that is not lossless JSON is rejected and not queued", () =>
    Effect.gen(function*() {
      const fifo = yield* BatchContexts.make
      const error = yield* Effect.flip(BatchContexts.offer(fifo, ctx("x", { n: 1n } as unknown as Json.Json)))
      expect(error.code).toBe("INVALID_JSON")
      expect(yield* BatchContexts.pending(fifo)).toEqual([])
    }))

  it.effect("[L-18] drain stops at the first failing append; the rest stay queued and the FIFO stays open", () =>
    Effect.gen(function*() {
      const fifo = yield* BatchContexts.make
      yield* BatchContexts.offer(fifo, ctx("a"))
      yield* BatchContexts.offer(fifo, ctx("b"))
      const error = yield* Effect.flip(BatchContexts.drain(fifo, () => Effect.fail("append failed")))
      expect(error).toBe("append failed")
      expect(texts(yield* BatchContexts.pending(fifo))).toEqual(["b"])
      expect(yield* BatchContexts.isOpen(fifo)).toBe(true)
    }))
})
