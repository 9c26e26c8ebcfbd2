import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"

describe("BlockAssembler", () => {
  it.effect("AC-9 [A-3,A-11] delta-only stream opens a text block; empty stream has no blocks", () =>
    Effect.gen(function*() {
      const one = yield* Stream.run(Stream.make(StreamChunk.textDelta(0, "implicit")), BlockAssembler.sink)
      expect(one.blocks).toEqual([{ type: "text", text: "implicit" }])
      expect(one.finish).toEqual({ kind: "stop" })
      expect(one.usage).toBeUndefined()
      const empty = yield* Stream.run(Stream.empty, BlockAssembler.sink)
      expect(empty.blocks).toEqual([])
      expect(empty.finish).toEqual({ kind: "stop" })
    }))
})
