import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as SessionPersistence from "../../src/Session/SessionPersistence.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { makeGate, text, boom } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

const of = <K extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: K) =>
  events.filter((e): e is Extract<SessionEvent, { type: K }> => e.type === type)

const recordStatuses = Effect.gen(function*() {
  const hooks = yield* Hooks.LoopHooks
  const statuses = yield* Ref.make<ReadonlyArray<Hooks.Status>>([])
  yield* hooks.status.register((i) => Ref.update(statuses, (s) => [...s, i.status]))
  return statuses
})

describe("Turn", () => {
  it.effect("AC-64 [L-11,L-6] chained turns stay running; a slow flush completes before idle; a rejected flush is an agent error", () =>
    Effect.gen(function*() {
      const gate = yield* makeGate
      yield* Effect.gen(function*() {
        const statuses = yield* recordStatuses
        const hooks = yield* Hooks.LoopHooks
        const errors = yield* Ref.make<ReadonlyArray<Hooks.AgentFailure>>([])
        yield* hooks.error.register((i) => Ref.update(errors, (e) => [...e, i.error]))
        const t = yield* TestKit.agent()
        yield* t.agent.session.observe((e) =>
          e.type === "step/start" && e.data.turn === 1 ? Effect.orDie(t.agent.send(text("second"))) : Effect.void
        )
        yield* t.prompt("first")
        expect(of(yield* t.events, "turn/start").map((e) => e.data.turn)).toEqual([1, 2])
        expect(yield* Ref.get(statuses)).toEqual(["running", "idle"])
        // a slow flush: the agent stays running until it completes
        yield* gate.holdNext(1)
        yield* t.agent.send(text("third"))
        const release = yield* gate.held
        const idle = yield* Effect.forkChild(t.agent.whenIdle)
        expect(yield* t.agent.status).toBe("running")
        expect(idle.pollUnsafe()).toBeUndefined()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(idle)
        expect(yield* t.agent.status).toBe("idle")
        // a rejected flush: an agent error, never an event; the next turn is fine
        yield* gate.failNext(1)
        yield* t.prompt("fourth")
        const reported = yield* Ref.get(errors)
        expect(reported).toHaveLength(1)
        expect(reported[0]).toMatchObject({ step: 0, code: "IO" })
        yield* t.prompt("fifth")
        expect(yield* t.turnEnds).toEqual(Array.from({ length: 5 }, () => ({ kind: "completed" })))
        expect(yield* Ref.get(errors)).toHaveLength(1)
        expect(yield* Reconstruction.check(t)).toBe(5)
      }).pipe(Effect.provide(TestKit.layer({
        script: ["1", "2", "3", "4", "5"].map(Scripted.text),
        persistence: gate.layer
      })))
    }))

  it.effect("[D-7,L-11] the turn-end flush: by whenIdle the backend holds every event of the turn", () =>
    Effect.gen(function*() {
      const backend = yield* Memory.make()
      yield* Effect.gen(function*() {
        const t = yield* TestKit.agent()
        for (const prompt of ["one", "two"]) {
          yield* t.prompt(prompt)
          // read the backend itself right after idle: no later drain (scope close) may fill it
          const persisted = yield* Effect.result(backend.load(t.agent.session.id))
          expect(persisted._tag === "Success" ? persisted.success.events : persisted.failure.message).toEqual(yield* t.events)
        }
        expect(yield* t.turnEnds).toEqual([{ kind: "completed" }, { kind: "completed" }])
      }).pipe(Effect.provide(TestKit.layer({
        script: ["1", "2"].map(Scripted.text),
        persistence: Layer.succeed(SessionPersistence.SessionPersistence, backend)
      })))
    }))

  it.effect("AC-79 [L-26] after a terminal stop, steering during the flush is discarded; a send during the flush → turn 2", () =>
    Effect.gen(function*() {
      const gate = yield* makeGate
      yield* Effect.gen(function*() {
        const hooks = yield* Hooks.LoopHooks
        yield* hooks.turnStop.register((i) => Effect.succeed(i.turn === 1 ? Hooks.TurnStopDecision.Stop() : Hooks.TurnStopDecision.Pass()))
        const t = yield* TestKit.agent()
        yield* gate.holdNext(1)
        yield* t.agent.send(text("one"))
        const release = yield* gate.held
        yield* t.agent.steer(text("steer during flush"))
        yield* t.agent.send(text("send during flush"))
        yield* Deferred.succeed(release, undefined)
        yield* t.agent.whenIdle
        const events = yield* t.events
        expect(of(events, "steering/message")).toHaveLength(0)
        expect(of(events, "user/message").map((e) => ContentBlock.flattenText(e.data.content))).toEqual([
          "one",
          "send during flush"
        ])
        expect(yield* Reconstruction.check(t)).toBe(2)
      }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b")], persistence: gate.layer })))
    }))

  it.effect("AC-81 [L-11] prompt-submit: rewrite, contexts visible to pre-step, block-only → rejected, mixed batch, throwing listener", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const seenByPreStep = yield* Ref.make<ReadonlyArray<string>>([])
      yield* hooks.promptSubmit.register((i, next) => {
        const prompt = ContentBlock.flattenText(i.content)
        if (prompt === "rewrite me") return Effect.succeed(Hooks.PromptDecision.Allow({ content: text("rewritten") }))
        if (prompt === "with context") {
          return Effect.succeed(Hooks.PromptDecision.Allow({
            additionalContexts: [{ content: text("extra"), source: Message.pluginSource("ctx"), meta: { why: "test" } }]
          }))
        }
        if (prompt === "secret" || prompt === "blocked") return Effect.succeed(Hooks.PromptDecision.Block({ reason: `no ${prompt}` }))
        if (prompt === "explode") return boom("prompt listener exploded")
        return next()
      })
      yield* hooks.preStep.register((i) =>
        Effect.flatMap(i.agent.session.events, (events) =>
          Ref.set(seenByPreStep, events.filter((e) => e.type === "context/message").map((e) => ContentBlock.flattenText(e.data.content)))
        )
      )
      const t = yield* TestKit.agent()
      // rewrite: logged and sent
      yield* t.prompt("rewrite me")
      expect((yield* t.requests)[0]?.messages).toEqual([Message.user("rewritten")])
      // additional context with meta, visible to pre-step
      yield* t.prompt("with context")
      const ctx = of(yield* t.events, "context/message")[0]
      expect(ctx?.data).toEqual({ content: text("extra"), source: { kind: "plugin", plugin: "ctx" }, meta: { why: "test" } })
      expect(yield* Ref.get(seenByPreStep)).toEqual(["extra"])
      // block only prompt
      yield* t.prompt("blocked")
      let events = yield* t.events
      expect(of(events, "prompt/blocked").at(-1)?.data).toEqual({
        content: text("blocked"),
        source: { kind: "user" },
        reason: "no blocked"
      })
      expect((yield* t.turnEnds)[2]).toEqual({ kind: "rejected", reason: "no blocked" })
      expect(of(events, "step/start").filter((e) => e.data.turn === 3)).toHaveLength(0)
      // a batch ["secret", "safe"] blocking one
      yield* t.agent.send(text("secret"))
      yield* t.agent.send(text("safe"))
      yield* t.agent.whenIdle
      events = yield* t.events
      const start4 = events.findIndex((e) => e.type === "turn/start" && e.data.turn === 4)
      const after = events.slice(start4)
      expect(of(after, "user/message").map((e) => ContentBlock.flattenText(e.data.content))).toEqual(["safe"])
      expect(of(after, "prompt/blocked")).toHaveLength(1)
      expect((yield* t.turnEnds)[3]).toEqual({ kind: "completed" })
      // a throwing listener → a balanced error turn at step 0
      yield* t.prompt("explode")
      expect((yield* t.turnEnds)[4]).toEqual({ kind: "error", step: 0, message: "prompt listener exploded" })
      expect(yield* Reconstruction.check(t)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b"), Scripted.text("c")] }))))

  it.effect("AC-106 [H-5] a context-only hook then a blocker → blocked, contexts dropped; then allow → both contexts kept", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const block = yield* Ref.make(true)
      // context-only: delegates first, prepends its context to the downstream decision
      yield* hooks.promptSubmit.register((_i, next) =>
        Effect.map(next(), (decision) =>
          Hooks.PromptDecision.$match(decision, {
            Allow: (d) =>
              Hooks.PromptDecision.Allow({
                ...d,
                additionalContexts: [
                  { content: text("ctx A"), source: Message.pluginSource("a") },
                  ...(d.additionalContexts ?? [])
                ]
              }),
            Block: (d) => d
          }))
      )
      yield* hooks.promptSubmit.register(() =>
        Effect.map(Ref.get(block), (b) =>
          b
            ? Hooks.PromptDecision.Block({ reason: "policy" })
            : Hooks.PromptDecision.Allow({ additionalContexts: [{ content: text("ctx B"), source: Message.pluginSource("b") }] }))
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("one")
      expect(of(yield* t.events, "context/message")).toHaveLength(0)
      expect(yield* t.turnEnds).toEqual([{ kind: "rejected", reason: "policy" }])
      yield* Ref.set(block, false)
      yield* t.prompt("two")
      const contexts = of(yield* t.events, "context/message").map((e) => e.data)
      expect(contexts).toEqual([
        { content: text("ctx A"), source: { kind: "plugin", plugin: "a" } },
        { content: text("ctx B"), source: { kind: "plugin", plugin: "b" } }
      ])
      const types = yield* t.types
      const prompt = types.indexOf("user/message")
      expect(types.slice(prompt, prompt + 3)).toEqual(["user/message", "context/message", "context/message"])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))
})
