/**
 * Embedder API (issue 18): a failed `Agent.make` releases what it acquired at once. The session
 * (and its store registration / persistence lock) is acquired in the agent's own child scope,
 * closed when creation fails, so the same session id can be used again immediately, in the same
 * caller scope.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

describe("Agent.make failure releases the session", () => {
  it.effect("[L-7] duplicate agent tools: make fails, then make with the same session id succeeds in the same scope", () =>
    Effect.gen(function*() {
      // a stored session
      yield* Effect.scoped(Effect.flatMap(TestKit.agent({ session: { _tag: "Auto", id: "shared" } }), (t) => t.prompt("one")))
      const failed = yield* Effect.flip(
        Agent.make({ provider: "scripted", model: "test", session: { _tag: "Resume", id: "shared" }, tools: [echo, echo] })
      )
      expect(failed._tag).toBe("DuplicateToolError")
      // the failed make holds nothing: resuming the same session in the same scope works now
      const t = yield* TestKit.agent({ session: { _tag: "Resume", id: "shared" } })
      expect(t.agent.session.id).toBe("shared")
      yield* t.prompt("two")
      expect(yield* t.texts).toEqual(["first", "second"])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("first"), Scripted.text("second")] }))))
})
