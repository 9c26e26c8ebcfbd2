import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import type { Session } from "../../src/Session/Session.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as StepSignal from "../../src/Loop/StepSignal.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo, text, tool, whenEvent, boom } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

const boundaries = (events: ReadonlyArray<SessionEvent>) =>
  events.filter((e) => ["turn/start", "turn/end", "step/start", "step/end"].includes(e.type)).map((e) => e.type)

const recordStatuses = Effect.gen(function*() {
  const hooks = yield* Hooks.LoopHooks
  const statuses = yield* Ref.make<ReadonlyArray<Hooks.Status>>([])
  yield* hooks.status.register((i) => Ref.update(statuses, (s) => [...s, i.status]))
  return statuses
})

describe("Agent", () => {
  it.effect("AC-52 [L-11,L-12] send hi, model text → boundaries, log head, usage, history, running→idle", () =>
    Effect.gen(function*() {
      const statuses = yield* recordStatuses
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      const events = yield* t.events
      expect(boundaries(events)).toEqual(["turn/start", "step/start", "step/end", "turn/end"])
      expect(events.slice(0, 2).map((e) => e.type)).toEqual(["turn/start", "user/message"])
      const assistant = events.find((e) => e.type === "assistant/message")
      expect(assistant?.type === "assistant/message" ? assistant.data.usage : undefined).toEqual({
        inputTokens: 10,
        outputTokens: 11
      })
      expect((yield* t.history).map((m) => m.role)).toEqual(["user", "assistant"])
      expect(yield* t.texts).toEqual(["hello there"])
      expect(yield* Ref.get(statuses)).toEqual(["running", "idle"])
      expect(yield* t.agent.status).toBe("idle")
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("hello there")] }))))

  it.effect("AC-53 [L-12] tool round trip: 2 requests, tool-result c1 echo: ping; text(abc) → 7 chunk events", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ tools: [echo] })
      yield* t.prompt("hi")
      const requests = yield* t.requests
      expect(requests).toHaveLength(2)
      const last = requests[1]?.messages.at(-1)
      expect(last).toEqual({
        role: "user",
        content: [{ type: "tool-result", toolCallId: "c1", content: [{ type: "text", text: "echo: ping" }], isError: false }]
      })
      const events = yield* t.events
      const chunks = events.filter((e) => e.type === "assistant/chunk" && e.data.step === 2)
      expect(chunks).toHaveLength(7)
      const joined = chunks.map((e) =>
        e.type === "assistant/chunk" && e.data.chunk.type === "text-delta" ? e.data.chunk.text : ""
      ).join("")
      expect(joined).toBe("abc")
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "echo", "{\"text\":\"ping\"}"), Scripted.text("abc")]
    }))))

  it.effect("AC-54 [L-2,L-25] a tool body steers → steering before step 2, in request 2, same turn; idle steer = send", () =>
    Effect.gen(function*() {
      const steerer = tool("steerer", (_args, ctx) => Effect.as(Effect.orDie(ctx.agent.steer(text("go on"))), [ContentBlock.text("ok")]))
      const t = yield* TestKit.agent({ tools: [steerer] })
      yield* t.prompt("hi")
      const events = yield* t.events
      const steering = events.findIndex((e) => e.type === "steering/message")
      const secondStart = events.findIndex((e) => e.type === "step/start" && e.data.step === 2)
      expect(steering).toBeGreaterThan(0)
      expect(steering).toBeLessThan(secondStart)
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1)
      const second = (yield* t.requests)[1]
      expect(second?.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "go on" }] })
      // idle steer → an ordinary user turn
      yield* t.agent.steer(text("again"))
      yield* t.agent.whenIdle
      const after = yield* t.events
      const turn2 = after.filter((e) => e.type === "turn/start").at(-1)
      expect(turn2?.type === "turn/start" ? turn2.data : undefined).toEqual({
        turn: 2,
        trigger: { kind: "message", source: { kind: "user" } }
      })
      const userMessages = after.filter((e) => e.type === "user/message")
      expect(userMessages.at(-1)?.data).toEqual({ content: text("again"), source: { kind: "user" } })
      expect(yield* Reconstruction.check(t)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "steerer", "{}"), Scripted.text("done"), Scripted.text("again done")]
    }))))

  it.effect("AC-55 [L-3] idle inject → injection turn, no model call; the next request holds the text verbatim", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.agent.inject(text("<note>context</note>"), { source: Message.pluginSource("notes"), meta: { k: 1 } })
      const events = yield* t.events
      expect(events.map((e) => e.type)).toEqual(["turn/start", "context/message", "turn/end"])
      expect(events[0]?.data).toEqual({ turn: 1, trigger: { kind: "injection", source: { kind: "plugin", plugin: "notes" } } })
      expect(events[2]?.data).toEqual({ turn: 1, reason: { kind: "completed" } })
      expect(yield* t.requests).toHaveLength(0)
      yield* t.prompt("hi")
      const [request] = yield* t.requests
      expect(request?.messages[0]).toEqual({ role: "user", content: [{ type: "text", text: "<note>context</note>" }] })
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-56 [L-3,L-19] injects inside a tool body queue until the batch settles; bigint meta throws", () =>
    Effect.gen(function*() {
      const seenDuring = yield* Ref.make<ReadonlyArray<string>>([])
      const holder: { session?: Session } = {}
      const injector = tool("injector", (_args, ctx) =>
        Effect.gen(function*() {
          const first = { content: [ContentBlock.text("first")], meta: { n: 1 } }
          yield* Effect.orDie(ctx.agent.inject(first.content, { meta: first.meta }))
          ;(first.content as Array<ContentBlock.ContentBlock>).push(ContentBlock.text("mutated"))
          ;(first.meta as { n: number }).n = 99
          yield* Effect.orDie(ctx.agent.inject(text("second"), { source: Message.pluginSource("p"), meta: "m2" }))
          const bad = yield* Effect.flip(ctx.agent.inject(text("bad"), { meta: 1n as never }))
          expect(bad.code).toBe("INVALID_INPUT")
          const during = holder.session === undefined ? [] : yield* holder.session.events
          yield* Ref.set(seenDuring, during.map((e) => e.type))
          return [ContentBlock.text("injected")]
        }))
      const t = yield* TestKit.agent({ tools: [injector] })
      holder.session = t.agent.session
      yield* t.prompt("hi")
      expect(yield* Ref.get(seenDuring)).not.toContain("context/message")
      const events = yield* t.events
      const types = events.map((e) => e.type)
      const result = types.indexOf("tool/result")
      expect(types.slice(result, result + 3)).toEqual(["tool/result", "context/message", "context/message"])
      expect(events[result + 1]?.data).toEqual({ content: text("first"), source: { kind: "user" }, meta: { n: 1 } })
      expect(events[result + 2]?.data).toEqual({ content: text("second"), source: { kind: "plugin", plugin: "p" }, meta: "m2" })
      expect(events.filter((e) => e.type === "context/message")).toHaveLength(2)
      const second = (yield* t.requests)[1]
      const messages = second?.messages ?? []
      expect(messages.slice(-3).map((m) => m.content[0]?.type)).toEqual(["tool-result", "text", "text"])
      expect(messages.slice(-2)).toEqual([Message.user("first"), Message.user("second")])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "injector", "{}"), Scripted.text("done")]
    }))))

  it.effect("AC-60 [L-4,L-29] cancel during hang → aborted with the reason; cancel() → \"cancelled\"", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.agent.send(text("one"))
      yield* whenEvent(t.agent.session, (e) => e.type === "assistant/chunk")
      yield* t.agent.cancel("user interrupt")
      yield* t.agent.whenIdle
      yield* t.agent.send(text("two"))
      yield* whenEvent(t.agent.session, (e) => e.type === "assistant/chunk" && e.data.turn === 2)
      yield* t.agent.cancel()
      yield* t.agent.whenIdle
      expect(yield* t.turnEnds).toEqual([
        { kind: "aborted", reason: "user interrupt" },
        { kind: "aborted", reason: "cancelled" }
      ])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.hang(), Scripted.hang()] }))))

  it.effect("AC-75 [L-4,L-9] idle cancel is a no-op; send+cancel → no turn; cancel from the running notification → no turn", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.agent.cancel("nothing to cancel")
      yield* t.agent.send(text("kept"))
      yield* t.agent.whenIdle
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      // send + immediate cancel
      yield* t.agent.send(text("dropped"))
      const waiter = yield* Effect.forkChild(t.agent.whenIdle)
      yield* t.agent.cancel()
      yield* Fiber.join(waiter)
      expect(yield* t.agent.status).toBe("idle")
      expect(yield* t.turnEnds).toHaveLength(1)
      // cancel from the running notification
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.status.register((i) => (i.status === "running" ? i.agent.cancel("at start") : Effect.void))
      yield* t.agent.send(text("also dropped"))
      yield* Effect.yieldNow
      yield* t.agent.whenIdle
      const events = yield* t.events
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1)
      expect(events.some((e) => e.type === "user/message" && ContentBlock.flattenText(e.data.content) !== "kept")).toBe(false)
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-76 [L-5] send A, whenIdle, cancel, send B → resolves only after B's turn; A never logged", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.agent.send(text("A"))
      const waiter = yield* Effect.forkChild(t.agent.whenIdle)
      yield* t.agent.cancel()
      yield* t.agent.send(text("B"))
      yield* Fiber.join(waiter)
      const events = yield* t.events
      expect(events.at(-1)?.type).toBe("turn/end")
      const prompts = events.flatMap((e) => (e.type === "user/message" ? [ContentBlock.flattenText(e.data.content)] : []))
      expect(prompts).toEqual(["B"])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("b")] }))))

  it.effect("AC-77 [L-4,L-9] steer then cancel drops the steering; a bare step abort turns queued steering into a new turn", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const signals = yield* Ref.make<ReadonlyArray<StepSignal.StepSignal>>([])
      yield* hooks.preStep.register((i) => Ref.update(signals, (s) => [...s, i.signal]))
      const t = yield* TestKit.agent()
      // steer then cancel
      yield* t.agent.send(text("one"))
      yield* whenEvent(t.agent.session, (e) => e.type === "assistant/chunk")
      yield* t.agent.steer(text("steer 1"))
      yield* t.agent.cancel()
      yield* t.agent.whenIdle
      let events = yield* t.events
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1)
      expect(events.some((e) => e.type === "steering/message")).toBe(false)
      // bare abort with queued steering
      yield* t.agent.send(text("two"))
      yield* whenEvent(t.agent.session, (e) => e.type === "assistant/chunk" && e.data.turn === 2)
      yield* t.agent.steer(text("steer 2"))
      const signal = (yield* Ref.get(signals)).at(-1)
      if (signal === undefined) return expect.fail("no pre-step signal")
      yield* StepSignal.abort(signal, { _tag: "Cancelled", reason: "bare" })
      yield* t.agent.whenIdle
      events = yield* t.events
      expect(yield* t.turnEnds).toEqual([
        { kind: "aborted", reason: "cancelled" },
        { kind: "aborted", reason: "bare" },
        { kind: "completed" }
      ])
      const third = events.filter((e) => e.type === "user/message").at(-1)
      expect(third?.data).toEqual({ content: text("steer 2"), source: { kind: "user" } })
      expect(yield* Reconstruction.check(t)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.hang(), Scripted.hang(), Scripted.text("three")] }))))

  it.effect("AC-78 [L-25,L-9] steer from a step/end observer → a 2nd step in the same turn; from a turn/end observer → a 2nd turn", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      const once = yield* Ref.make(true)
      yield* t.agent.session.observe((e) =>
        e.type === "step/end" && e.data.turn === 1 && e.data.step === 1
          ? Effect.orDie(t.agent.steer(text("from step/end")))
          : e.type === "turn/end" && e.data.turn === 1
          ? Effect.flatMap(Ref.getAndSet(once, false), (first) => (first ? Effect.orDie(t.agent.steer(text("from turn/end"))) : Effect.void))
          : Effect.void
      )
      yield* t.agent.send(text("hi"))
      yield* whenEvent(t.agent.session, (e) => e.type === "turn/end" && e.data.turn === 2)
      yield* t.agent.whenIdle
      const events = yield* t.events
      const starts = events.filter((e) => e.type === "step/start").map((e) => e.data)
      expect(starts).toEqual([{ turn: 1, step: 1 }, { turn: 1, step: 2 }, { turn: 2, step: 1 }])
      const turn2Prompt = events.filter((e) => e.type === "user/message").at(-1)
      expect(turn2Prompt?.data).toEqual({ content: text("from turn/end"), source: { kind: "user" } })
      expect(yield* Reconstruction.check(t)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b"), Scripted.text("c")] }))))

  it.effect("AC-89 [L-1] send with bigint content or source → INVALID_INPUT, no queued, log unchanged; next send works", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const queued = yield* Ref.make(0)
      yield* hooks.queued.register(() => Ref.update(queued, (n) => n + 1))
      const t = yield* TestKit.agent()
      const e1 = yield* Effect.flip(t.agent.send([{ type: "text", text: 1n } as never]))
      const e2 = yield* Effect.flip(t.agent.send(text("x"), { source: { kind: "plugin", plugin: 2n } as never }))
      expect([e1.code, e2.code]).toEqual(["INVALID_INPUT", "INVALID_INPUT"])
      expect(yield* Ref.get(queued)).toBe(0)
      expect(yield* t.events).toEqual([])
      yield* t.prompt("fine")
      expect(yield* Ref.get(queued)).toBe(1)
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-90 [L-6,L-8] dispose during hang → statuses [running, disposed], turn disposed; throwing status listener tolerated", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const statuses = yield* recordStatuses
      yield* hooks.status.register(() => boom("status listener explodes"))
      const disposedSeen = yield* Ref.make(false)
      yield* hooks.disposed.register(() => Ref.set(disposedSeen, true))
      const t = yield* TestKit.agent()
      yield* t.agent.send(text("hi"))
      yield* whenEvent(t.agent.session, (e) => e.type === "assistant/chunk")
      yield* t.agent.dispose
      expect(yield* Ref.get(statuses)).toEqual(["running", "disposed"])
      expect(yield* t.turnEnds).toEqual([{ kind: "disposed" }])
      expect(yield* Ref.get(disposedSeen)).toBe(true)
      expect(yield* t.agent.status).toBe("disposed")
      const error = yield* Effect.flip(t.agent.send(text("late")))
      expect(error.code).toBe("DISPOSED")
      expect((yield* Effect.flip(t.agent.inject(text("late")))).code).toBe("DISPOSED")
      yield* t.agent.whenIdle
      Reconstruction.expectBalanced(yield* t.events)
      expect(yield* Reconstruction.verify(t.agent.session, yield* t.requests)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.hang()] }))))

  it.effect("AC-105 [H-4,L-7] a session-start inject lands in the first request; a throwing session-start listener is contained", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const sources = yield* Ref.make<ReadonlyArray<string>>([])
      yield* hooks.sessionStart.register(() => boom("boom"))
      yield* hooks.sessionStart.register((i) =>
        Effect.andThen(
          Ref.update(sources, (s) => [...s, i.source]),
          Effect.orDie(i.agent.inject(text("from plugin"), { source: Message.pluginSource("boot") }))
        )
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      expect(yield* Ref.get(sources)).toEqual(["startup"])
      const events = yield* t.events
      const ctx = events.find((e) => e.type === "context/message")
      expect(ctx?.data).toEqual({ content: text("from plugin"), source: { kind: "plugin", plugin: "boot" } })
      const [request] = yield* t.requests
      expect(request?.messages).toEqual([Message.user("from plugin"), Message.user("hi")])
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }, { kind: "completed" }])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-86 [S-20] round trip + system/sampling change → requests rebuilt from the log, append-extend; a new instance logs resume", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const sp = yield* SystemPrompt.SystemPrompt
      const sources = yield* Ref.make<ReadonlyArray<string>>([])
      yield* hooks.sessionStart.register((i) => Ref.update(sources, (s) => [...s, i.source]))
      yield* hooks.sessionPrefix.register((_i, next) => Effect.map(next(), (rest) => [Message.user("prefix"), ...rest]))
      yield* hooks.request.register((i, next) =>
        i.turn >= 2 ? Effect.succeed({ ...i.config, temperature: 0.5 }) : next()
      )
      const id = "ac86-session"
      const firstRequests = yield* Effect.scoped(Effect.gen(function*() {
        const t = yield* TestKit.agent({ tools: [echo], session: { _tag: "New", id } })
        yield* t.prompt("one")
        yield* sp.registerSection({ name: "extra", order: 50, text: "Be brief." }, { agentId: id })
        yield* t.prompt("two")
        yield* t.prompt("three")
        const reasons = (yield* t.events).flatMap((e) => (e.type === "request/header" ? [e.data.reason] : []))
        expect(reasons).toEqual(["initial", "change"])
        const requests = (yield* t.requests).filter((r) => r.sessionId === id)
        expect(requests).toHaveLength(4)
        // append-extend: each request's messages start with the previous request's messages
        for (let i = 1; i < requests.length; i++) {
          const previous = requests[i - 1]?.messages ?? []
          expect(requests[i]?.messages.slice(0, previous.length)).toEqual(previous)
        }
        expect(requests[2]?.system).toBe("Be brief.")
        expect(requests[2]?.temperature).toBe(0.5)
        expect(yield* Reconstruction.check(t)).toBe(4)
        return requests
      }))
      // a new loop instance over the same log
      const t2 = yield* TestKit.agent({ session: { _tag: "Resume", id } })
      yield* t2.prompt("four")
      expect(yield* Ref.get(sources)).toEqual(["startup", "resume"])
      const events = yield* t2.events
      const headers = events.flatMap((e) => (e.type === "request/header" ? [e.data.reason] : []))
      expect(headers).toEqual(["initial", "change", "resume"])
      expect(events.filter((e) => e.type === "turn/start").map((e) => e.data.turn)).toEqual([1, 2, 3, 4])
      const last = firstRequests.at(-1)?.messages ?? []
      const resumed = (yield* t2.requests).at(-1)
      expect(resumed?.messages.slice(0, last.length)).toEqual(last)
      expect(yield* Reconstruction.check(t2)).toBe(5)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        Scripted.call("c1", "echo", "{\"text\":\"x\"}"),
        Scripted.text("a"),
        Scripted.text("b"),
        Scripted.text("c"),
        Scripted.text("d")
      ]
    }))))

  it.effect("[L-3,S-16,DEC-10] injects from turn/start and turn/end observers stay enclosed: after turn/start, or an own injection turn", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.agent.session.observe((e) =>
        e.type === "turn/start" && e.data.turn === 1
          ? Effect.orDie(t.agent.inject(text("from turn/start")))
          : e.type === "turn/end" && e.data.turn === 1
          ? Effect.orDie(t.agent.inject(text("from turn/end")))
          : Effect.void
      )
      yield* t.prompt("hi")
      yield* whenEvent(t.agent.session, (e) => e.type === "turn/end" && e.data.turn === 2)
      const events = yield* t.events
      expect(events.slice(0, 3).map((e) => e.type)).toEqual(["turn/start", "context/message", "user/message"])
      expect(events.slice(-3).map((e) => e.type)).toEqual(["turn/start", "context/message", "turn/end"])
      expect(events.at(-3)?.data).toEqual({ turn: 2, trigger: { kind: "injection", source: { kind: "user" } } })
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("[L-7,D-12,DEC-10] session choices: Auto creates then resumes, Fork starts a child; options are validated at creation", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const sources = yield* Ref.make<ReadonlyArray<string>>([])
      yield* hooks.sessionStart.register((i) => Ref.update(sources, (s) => [...s, `${i.agent.id}:${i.source}`]))
      yield* Effect.scoped(Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "Auto", id: "auto-1" } })
        yield* t.prompt("one")
      }))
      const again = yield* TestKit.agent({ session: { _tag: "Auto", id: "auto-1" } })
      expect((yield* again.events).filter((e) => e.type === "turn/end")).toHaveLength(1)
      const child = yield* TestKit.agent({ session: { _tag: "Fork", from: "auto-1", id: "child-1" } })
      expect((yield* child.events).length).toBe((yield* again.events).length)
      expect(child.agent.session.header.parentSession).toBe("auto-1")
      expect(yield* Ref.get(sources)).toEqual(["auto-1:startup", "auto-1:resume", "child-1:startup"])
      const missing = yield* Effect.flip(TestKit.agent({ session: { _tag: "Resume", id: "never-stored" } }))
      expect(missing._tag === "SessionError" ? missing.code : missing._tag).toBe("SESSION_NOT_FOUND")
      const cap = yield* Effect.flip(TestKit.agent({ maxParallelToolCalls: 0 }))
      expect(cap._tag).toBe("AgentOptionsError")
      const order = yield* Effect.flip(TestKit.agent({ systemPrompt: { toolOrder: ["a", "b"] } }))
      expect(order._tag === "SystemPromptError" ? order.code : order._tag).toBe("INVALID_TOOL_ORDER")
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("[L-8,DEC-10] dispose from inside the agent's own tool body: no self-deadlock, the turn ends disposed", () =>
    Effect.gen(function*() {
      const holder: { dispose?: Effect.Effect<void> } = {}
      const disposer = tool("disposer", () =>
        Effect.as(holder.dispose ?? Effect.void, [ContentBlock.text("disposing")]))
      const t = yield* TestKit.agent({ tools: [disposer] })
      holder.dispose = t.agent.dispose
      yield* t.agent.send(text("go"))
      yield* t.agent.whenIdle
      expect(yield* t.agent.status).toBe("disposed")
      expect(yield* t.turnEnds).toEqual([{ kind: "disposed" }])
      Reconstruction.expectBalanced(yield* t.events)
      expect(yield* Reconstruction.verify(t.agent.session, yield* t.requests)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.call("c1", "disposer", "{}")] }))))
})
