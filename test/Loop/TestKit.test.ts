import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Message from "../../src/Llm/Message.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

describe("TestKit", () => {
  it.effect("drives an agent deterministically over the real layers: global tools, helpers, requests", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.prompt("ping")
      expect(yield* t.texts).toEqual(["", "pong"])
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      expect((yield* t.history).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      const requests = yield* t.requests
      expect(requests.map((r) => [r.provider, r.model])).toEqual([["scripted", "test"], ["scripted", "test"]])
      expect(requests[0]?.tools?.map((x) => x.name)).toEqual(["echo"])
      expect(requests[0]).not.toHaveProperty("system")
      expect(requests[0]?.messages).toEqual([Message.user("ping")])
      expect((yield* t.types).slice(0, 2)).toEqual(["turn/start", "user/message"])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "echo", "{\"text\":\"ping\"}"), Scripted.text("pong")],
      tools: [echo]
    }))))

  it.effect("`identity: true` registers the harness identity section; a custom provider route works", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ provider: "custom", model: "m" })
      yield* t.prompt("hi")
      const [request] = yield* t.requests
      expect(request?.system).toBe(SystemPrompt.identity.text)
      expect(request?.provider).toBe("custom")
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("hello")], identity: true, provider: "custom" }))))
})
