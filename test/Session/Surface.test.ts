import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Session from "../../src/Session/Session.js"
import * as Surface from "../../src/Session/Surface.js"
import { appendAll, assistant, context, text, toolResult, turnStart, userMessage } from "../support/sessionInputs.js"

describe("Surface", () => {
  it.effect("[S-13] foldSurface = the live surface; replacements record shadowed seqs", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* appendAll(s, [
        turnStart(1),
        userMessage("u1"),
        assistant(1, 1, [text("a2")]),
        toolResult(1, 1, "c", "t3"),
        context("r4", undefined, { surfaceOp: { op: "replace", start: 1, end: 2 }, sourceEventSeqs: [1, 2] }),
        userMessage("u5")
      ])
      const folded = Surface.foldSurface(yield* s.events)
      const live = yield* s.surface
      expect(folded.nodes).toEqual(live.nodes)
      expect(folded.nodes.map((n) => n.seq)).toEqual([4, 3, 5])
      expect(folded.replacements).toEqual([{ seq: 4, start: 1, end: 2, shadowedSeqs: [1, 2] }])
      expect(live.replaceGeneration).toBe(1)
      // a failed validation leaves the live surface unchanged
      yield* Effect.result(s.append(userMessage("x", { surfaceOp: { op: "replace", start: 1, end: 1 }, sourceEventSeqs: [1] })))
      expect(yield* s.surface).toBe(live)
    }))
})
