import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

const of = <K extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: K) =>
  events.filter((e): e is Extract<SessionEvent, { type: K }> => e.type === type)

describe("SessionPrefix", () => {
  it.effect("AC-82 [L-35] composed once per instance, first in every request, one header, never in history", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const compositions = yield* Ref.make(0)
      const first = Message.user("<rules>first</rules>")
      const contributed = { role: "user" as const, content: [ContentBlock.text("second")] }
      const t = yield* TestKit.agent({ tools: [echo] })
      yield* hooks.sessionPrefix.register(
        (_i, next) => Effect.andThen(Ref.update(compositions, (n) => n + 1), Effect.map(next(), (rest) => [first, ...rest])),
        { agentId: t.agent.id }
      )
      yield* hooks.sessionPrefix.register((_i, next) => Effect.map(next(), (rest) => [contributed, ...rest]), {
        agentId: t.agent.id
      })
      yield* t.prompt("one")
      // mutating a contributed object later has no effect
      ;(contributed.content as Array<ContentBlock.ContentBlock>).push(ContentBlock.text("late mutation"))
      yield* t.prompt("two")
      const requests = yield* t.requests
      expect(requests).toHaveLength(3)
      for (const r of requests) {
        expect(r.messages.slice(0, 2)).toEqual([first, Message.user("second")])
      }
      expect(requests[0]?.messages).toEqual([first, Message.user("second"), Message.user("one")])
      expect(yield* Ref.get(compositions)).toBe(1)
      const headers = of(yield* t.events, "request/header")
      expect(headers).toHaveLength(1)
      expect(headers[0]?.data.header.messagePrefix).toEqual([first, Message.user("second")])
      const history = yield* t.history
      expect(history.some((m) => ContentBlock.flattenText(m.content).includes("first"))).toBe(false)
      expect(yield* Reconstruction.check(t)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "echo", "{\"text\":\"x\"}"), Scripted.text("a"), Scripted.text("b")]
    }))))

  it.effect("AC-82 [L-35] no contributor → no messagePrefix; pushing into the seed fails the turn", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const plain = yield* TestKit.agent()
      yield* plain.prompt("hi")
      const header = of(yield* plain.events, "request/header")[0]
      expect(header?.data.header).not.toHaveProperty("messagePrefix")
      expect(yield* Reconstruction.check(plain)).toBe(1)
      const pusher = yield* TestKit.agent()
      yield* hooks.sessionPrefix.register((i, next) =>
        Effect.suspend(() => {
          ;(i.prefix as Array<Message.Message>).push(Message.user("pushed"))
          return next()
        }), { agentId: pusher.agent.id })
      yield* pusher.prompt("hi")
      const [end] = yield* pusher.turnEnds
      expect(end).toMatchObject({ kind: "error", step: 1 })
      expect(end?.kind === "error" ? end.message : "").toMatch(/not extensible|read.only|frozen/i)
      expect(yield* Reconstruction.check(pusher)).toBe(0)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-82 [L-35] cancel during composition → aborted turn, not cached; the next send recomposes", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const calls = yield* Ref.make(0)
      const t = yield* TestKit.agent()
      yield* hooks.sessionPrefix.register((_i, next) =>
        Effect.flatMap(Ref.updateAndGet(calls, (n) => n + 1), (n) =>
          n === 1 ? Effect.never : Effect.map(next(), (rest) => [Message.user(`prefix ${n}`), ...rest])), {
        agentId: t.agent.id
      })
      yield* t.agent.send([ContentBlock.text("one")])
      yield* Effect.repeat(Ref.get(calls), { until: (n) => n === 1 })
      yield* t.agent.cancel("stop composing")
      yield* t.agent.whenIdle
      expect(yield* t.turnEnds).toEqual([{ kind: "aborted", reason: "stop composing" }])
      expect(yield* t.requests).toHaveLength(0)
      yield* t.prompt("two")
      expect(yield* Ref.get(calls)).toBe(2)
      expect((yield* t.requests)[0]?.messages[0]).toEqual(Message.user("prefix 2"))
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))
})

