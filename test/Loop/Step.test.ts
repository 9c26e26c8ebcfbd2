import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as StepSignal from "../../src/Loop/StepSignal.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import { echo, text, tool, boom, Boom } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

const recordErrors = Effect.gen(function*() {
  const hooks = yield* Hooks.LoopHooks
  const errors = yield* Ref.make<ReadonlyArray<Hooks.AgentFailure>>([])
  yield* hooks.error.register((i) => Ref.update(errors, (es) => [...es, i.error]))
  return errors
})

const of = <K extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: K) =>
  events.filter((e): e is Extract<SessionEvent, { type: K }> => e.type === type)

const twoCalls = (a: string, b: string): Scripted.Reply => [
  Scripted.toolCall("c1", a, "{}"),
  Scripted.toolCall("c2", b, "{}"),
  Scripted.usage(10, 4),
  Scripted.finish("tool-calls")
]

describe("Step", () => {

  it.effect("[issue 26] a step that streams past maxOutputBytes is cut: chunks kept up to the limit, OUTPUT_LIMIT finish, turn error, the stream interrupted", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ maxOutputBytes: 10 })
      yield* t.prompt("talk")
      const events = yield* t.events
      const chunks = of(events, "assistant/chunk").map((e) => e.data.chunk)
      expect(chunks.flatMap((c) => c.type === "text-delta" ? [c.text] : []).join("")).toBe("aaaabbbbcc")
      expect(chunks.at(-1)).toMatchObject({ type: "finish", reason: { kind: "error", code: "OUTPUT_LIMIT" } })
      expect(of(events, "assistant/message")).toEqual([])
      expect(yield* t.turnEnds).toMatchObject([{ kind: "error", step: 1, code: "OUTPUT_LIMIT" }])
    }).pipe(Effect.provide(TestKit.layer({
      script: [[Scripted.say("aaaa"), Scripted.say("bbbb"), Scripted.say("cccc"), Scripted.forever]]
    }))))

  it.effect("[issue 26] maxOutputBytes must be a positive integer", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(TestKit.agent({ maxOutputBytes: 0 }))
      expect(failed).toMatchObject({ code: "INVALID_OPTIONS" })
    }).pipe(Effect.provide(TestKit.layer({ script: [] }))))
  it.effect("AC-57 [L-24] continuation forcing continue until 3 steps → 3 requests; forcing stop after a tool call → 1 request", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.turnContinuation.register((i) =>
        Effect.succeed(
          i.turn === 1
            ? (i.step < 3 ? Hooks.ContinuationDecision.Continue({}) : Hooks.ContinuationDecision.Stop())
            : Hooks.ContinuationDecision.Stop()
        )
      )
      const t = yield* TestKit.agent({ tools: [echo] })
      yield* t.prompt("one")
      expect(yield* t.requests).toHaveLength(3)
      yield* t.prompt("two")
      expect(yield* t.requests).toHaveLength(4)
      const events = yield* t.events
      expect(of(events, "tool/result").map((e) => e.data.content)).toEqual([text("echo: x")])
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }, { kind: "completed" }])
      expect(yield* Reconstruction.check(t)).toBe(4)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.text("a"), Scripted.text("b"), Scripted.text("c"), Scripted.call("c1", "echo", "{\"text\":\"x\"}")]
    }))))

  it.effect("AC-58 [L-12.8] `request` replaces the config (the frozen seed cannot be mutated) → adapter and header see it", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const mutation = yield* Ref.make("")
      yield* hooks.request.register((i) =>
        Effect.gen(function*() {
          try {
            ;(i.config as { model: string }).model = "mutated"
          } catch (e) {
            yield* Ref.set(mutation, e instanceof TypeError ? "TypeError" : "other")
          }
          return { ...i.config, model: "other" }
        })
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      expect(yield* Ref.get(mutation)).toBe("TypeError")
      expect((yield* t.requests)[0]?.model).toBe("other")
      const header = of(yield* t.events, "request/header")[0]
      expect(header?.data.header.config).toEqual({ provider: "scripted", model: "other" })
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-59 [L-12.6] pre-step appends join the request; fires (1,1),(1,2); throwing once → no request, error{step 1}", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const fired = yield* Ref.make<ReadonlyArray<readonly [number, number]>>([])
      const failNext = yield* Ref.make(false)
      yield* hooks.preStep.register((i) =>
        Effect.gen(function*() {
          yield* Ref.update(fired, (f) => [...f, [i.turn, i.step] as const])
          if (yield* Ref.getAndSet(failNext, false)) return yield* boom("pre-step exploded")
          if (i.turn === 1 && i.step === 1) yield* Effect.orDie(i.agent.inject(text("pre-step context")))
        })
      )
      const t = yield* TestKit.agent({ tools: [echo] })
      yield* t.prompt("hi")
      const events = yield* t.events
      const ctx = events.findIndex((e) => e.type === "context/message")
      const start = events.findIndex((e) => e.type === "step/start")
      expect(ctx).toBeGreaterThan(0)
      expect(ctx).toBeLessThan(start)
      expect((yield* t.requests)[0]?.messages.at(-1)).toEqual(Message.user("pre-step context"))
      expect(yield* Ref.get(fired)).toEqual([[1, 1], [1, 2]])
      // throwing once
      yield* Ref.set(failNext, true)
      yield* t.prompt("again")
      expect(yield* t.requests).toHaveLength(2)
      expect((yield* t.turnEnds)[1]).toEqual({ kind: "error", step: 1, message: "pre-step exploded" })
      yield* t.prompt("third")
      expect((yield* t.turnEnds)[2]).toEqual({ kind: "completed" })
      expect(yield* Reconstruction.check(t)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "echo", "{\"text\":\"x\"}"), Scripted.text("done"), Scripted.text("third")]
    }))))

  it.effect("AC-61 [L-30] max-tokens ends the turn max-tokens, even after a forced continue; the next turn completes", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.turnContinuation.register((i, next) =>
        i.turn === 2 && i.step === 1 ? Effect.succeed(Hooks.ContinuationDecision.Continue({})) : next()
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("one")
      expect(yield* t.turnEnds).toEqual([{ kind: "max-tokens" }])
      yield* t.prompt("two")
      expect((yield* t.turnEnds)[1]).toEqual({ kind: "max-tokens" })
      const second = (yield* t.requests)[2]
      expect(second?.messages.at(-1)).toEqual(Message.assistant("trunc", { provider: "scripted", model: "test" }))
      yield* t.prompt("three")
      expect((yield* t.turnEnds)[2]).toEqual({ kind: "completed" })
      expect(yield* Reconstruction.check(t)).toBe(4)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        [Scripted.say("cut"), Scripted.usage(10, 3), Scripted.finish("max-tokens")],
        [Scripted.say("trunc"), Scripted.usage(10, 5), Scripted.finish("max-tokens")],
        Scripted.text("rest"),
        Scripted.text("fine")
      ]
    }))))

  it.effect("AC-62 [L-12.11] max-tokens with a closed tool call → no tool/call, content [], history [user]; open call hidden from step-result", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const seen = yield* Ref.make<ReadonlyArray<ReadonlyArray<ContentBlock.ContentBlock>>>([])
      yield* hooks.stepResult.register((i, next) => Effect.andThen(Ref.update(seen, (s) => [...s, i.message.content]), next()))
      const ran = yield* Ref.make(0)
      const probe = tool("probe", () => Effect.as(Ref.update(ran, (n) => n + 1), [ContentBlock.text("ran")]))
      const t = yield* TestKit.agent({ tools: [probe] })
      yield* t.prompt("one")
      const events = yield* t.events
      expect(of(events, "tool/call")).toHaveLength(0)
      expect(yield* Ref.get(ran)).toBe(0)
      const assistant = of(events, "assistant/message")[0]
      expect(assistant?.data.content).toEqual([])
      expect(assistant?.data.usage).toEqual({ inputTokens: 10, outputTokens: 2 })
      expect(assistant?.sourceEventSeqs).toEqual(of(events, "assistant/chunk").map((e) => e.seq))
      expect((yield* t.history).map((m) => m.role)).toEqual(["user"])
      expect(yield* t.turnEnds).toEqual([{ kind: "max-tokens" }])
      // text + an open call: step-result sees only the text
      yield* t.prompt("two")
      expect((yield* Ref.get(seen))[1]).toEqual([ContentBlock.text("partial")])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        [Scripted.toolCall("c1", "probe", "{}"), Scripted.usage(10, 2), Scripted.finish("max-tokens")],
        [
          Scripted.say("partial"),
          Scripted.chunk(StreamChunk.blockStart(1, "tool-call"), StreamChunk.toolCallDelta(1, "c9", "{\"a\":", "probe")),
          Scripted.usage(10, 9),
          Scripted.finish("max-tokens")
        ]
      ]
    }))))

  it.effect("AC-63 [L-22] a stream of only finish stop → assistant {content: [], provenance} with sources [that chunk]", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      const events = yield* t.events
      const chunks = of(events, "assistant/chunk")
      expect(chunks).toHaveLength(1)
      const assistant = of(events, "assistant/message")[0]
      expect(assistant?.data).toEqual({ turn: 1, step: 1, content: [], provenance: { provider: "scripted", model: "test" } })
      expect(assistant?.sourceEventSeqs).toEqual([chunks[0]?.seq])
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [[Scripted.finish("stop")]] }))))

  it.effect("AC-65 [L-20] adapter throws / in-band error / finish aborted / error without code → error{step 1}, one agent error each", () =>
    Effect.gen(function*() {
      const errors = yield* recordErrors
      const t = yield* TestKit.agent()
      yield* t.prompt("1")
      yield* t.prompt("2")
      yield* t.prompt("3")
      yield* t.prompt("4")
      const ends = yield* t.turnEnds
      expect(ends[0]).toEqual({ kind: "error", step: 1, message: "adapter exploded", code: "UNKNOWN" })
      expect(ends[1]).toEqual({ kind: "error", step: 1, message: "provider 401", code: "AUTH" })
      expect(ends[2]).toEqual({ kind: "error", step: 1, message: "model stream aborted", code: "ABORTED" })
      expect(ends[3]).toEqual({ kind: "error", step: 1, message: "no code" })
      expect(ends[3]).not.toHaveProperty("code")
      const recorded = yield* Ref.get(errors)
      expect(recorded.map((e) => [e.step, e.message, e.code])).toEqual([
        [1, "adapter exploded", "UNKNOWN"],
        [1, "provider 401", "AUTH"],
        [1, "model stream aborted", "ABORTED"],
        [1, "no code", undefined]
      ])
      expect(of(yield* t.events, "assistant/message")).toHaveLength(0)
      expect(yield* Reconstruction.check(t)).toBe(4)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        () => {
          throw new Error("adapter exploded")
        },
        [Scripted.say("x"), Scripted.finish({ kind: "error", message: "provider 401", code: "AUTH" })],
        [Scripted.finish("aborted")],
        [Scripted.finish({ kind: "error", message: "no code" })]
      ]
    }))))

  it.effect("AC-66 [L-20] thrown and in-band CONTEXT_WINDOW_EXCEEDED: recovery appends context and retries with a new step", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const attempts = yield* Ref.make<ReadonlyArray<number>>([])
      yield* hooks.requestError.register((i, next) =>
        i.error.code === "CONTEXT_WINDOW_EXCEEDED"
          ? Effect.gen(function*() {
            yield* Ref.update(attempts, (a) => [...a, i.attempt])
            yield* Effect.orDie(i.agent.inject(text("compacted"), { source: Message.pluginSource("compaction") }))
            return Hooks.RequestErrorDecision.Retry()
          })
          : next()
      )
      const t = yield* TestKit.agent()
      for (const prompt of ["thrown", "in-band"]) {
        yield* Ref.set(attempts, [])
        yield* t.prompt(prompt)
        expect(yield* Ref.get(attempts)).toEqual([0])
      }
      const requests = yield* t.requests
      expect(requests[1]?.messages.at(-1)).toEqual(Message.user("compacted"))
      expect(requests[3]?.messages.at(-1)).toEqual(Message.user("compacted"))
      const events = yield* t.events
      for (const turn of [1, 2]) {
        const end1 = events.findIndex((e) => e.type === "step/end" && e.data.turn === turn && e.data.step === 1)
        const ctx = events.findIndex((e, i) => i > end1 && e.type === "context/message")
        const start2 = events.findIndex((e) => e.type === "step/start" && e.data.turn === turn && e.data.step === 2)
        expect(end1).toBeGreaterThan(0)
        expect(end1).toBeLessThan(ctx)
        expect(ctx).toBeLessThan(start2)
      }
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }, { kind: "completed" }])
      expect(yield* Reconstruction.check(t)).toBe(4)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        [Scripted.fail("CONTEXT_WINDOW_EXCEEDED", "too long")],
        Scripted.text("ok 1"),
        [Scripted.finish({ kind: "error", message: "context window exceeded", code: "CONTEXT_WINDOW_EXCEEDED" })],
        Scripted.text("ok 2")
      ]
    }))))

  it.effect("AC-67 [L-20] retry while attempt < 1 → attempts [0,1]; fail-retry-success(tool)-fail → [(1,0),(3,0)]", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const offered = yield* Ref.make<ReadonlyArray<readonly [number, number]>>([])
      yield* hooks.requestError.register((i) =>
        Effect.gen(function*() {
          yield* Ref.update(offered, (a) => [...a, [i.step, i.attempt] as const])
          return i.attempt < 1 ? Hooks.RequestErrorDecision.Retry() : Hooks.RequestErrorDecision.Fail()
        })
      )
      const t = yield* TestKit.agent({ tools: [echo] })
      yield* t.prompt("two failures")
      expect((yield* Ref.get(offered)).map(([, a]) => a)).toEqual([0, 1])
      expect((yield* t.turnEnds)[0]).toEqual({ kind: "error", step: 2, message: "f2", code: "X" })
      yield* Ref.set(offered, [])
      yield* t.prompt("fail, retry, success, fail")
      expect(yield* Ref.get(offered)).toEqual([[1, 0], [3, 0]])
      expect(yield* Reconstruction.check(t)).toBe(6)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        [Scripted.fail("X", "f1")],
        [Scripted.fail("X", "f2")],
        [Scripted.fail("X", "f3")],
        Scripted.call("c1", "echo", "{\"text\":\"y\"}"),
        [Scripted.fail("X", "f4")],
        Scripted.text("recovered")
      ]
    }))))

  it.effect("AC-68 [L-21] failures outside the model request never reach request-error", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const mode = yield* Ref.make("")
      const recoveries = yield* Ref.make(0)
      yield* hooks.requestError.register(() => Effect.as(Ref.update(recoveries, (n) => n + 1), Hooks.RequestErrorDecision.Fail()))
      const failAt = (where: string) => (m: string) => (m === where ? boom(`${where} failed`) : Effect.void)
      yield* hooks.promptSubmit.register((_i, next) => Effect.andThen(Effect.flatMap(Ref.get(mode), failAt("prompt-submit")), next()))
      yield* hooks.preStep.register(() => Effect.flatMap(Ref.get(mode), failAt("pre-step")))
      yield* hooks.request.register((_i, next) => Effect.andThen(Effect.flatMap(Ref.get(mode), failAt("request")), next()))
      yield* hooks.stepResult.register((_i, next) => Effect.andThen(Effect.flatMap(Ref.get(mode), failAt("step-result")), next()))
      yield* hooks.postStep.register(() => Effect.flatMap(Ref.get(mode), failAt("post-step")))
      const llm = yield* Llm.Llm
      yield* llm.addMiddleware((options, next) =>
        Stream.unwrap(Effect.map(Ref.get(mode), (m): Stream.Stream<StreamChunk.StreamChunk, unknown> => {
          if (options.provider === "nowhere") return next()
          if (m === "middleware") return Stream.fail(new Boom({ message: "middleware failed" }))
          if (m === "nested") return llm.stream({ ...options, provider: "nowhere" })
          return next()
        }))
      )
      const failing = tool("failing", () => boom("tool failed"))
      const t = yield* TestKit.agent({ tools: [failing] })
      const expected: Record<string, string> = {}
      for (
        const m of ["prompt-submit", "pre-step", "request", "middleware", "nested", "assembly", "step-result", "tools", "post-step"]
      ) {
        yield* Ref.set(mode, m)
        yield* t.prompt(m)
        expected[m] = m
      }
      expect(yield* Ref.get(recoveries)).toBe(0)
      const ends = yield* t.turnEnds
      expect(ends.map((e) => e.kind)).toEqual([
        "error", "error", "error", "error", "error", "error", "error", "completed", "error"
      ])
      expect(ends[0]).toEqual({ kind: "error", step: 0, message: "prompt-submit failed" })
      expect(ends[3]).toMatchObject({ kind: "error", step: 1, message: "middleware failed" })
      const results = of(yield* t.events, "tool/result")
      expect(results.map((r) => r.data.isError)).toEqual([true])
      expect(yield* Reconstruction.check(t)).toBe(5)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        [Scripted.chunk(StreamChunk.blockStart(0, "image" as never)), Scripted.finish("stop")],
        Scripted.text("step-result"),
        Scripted.call("c1", "failing", "{}"),
        Scripted.text("after tool"),
        Scripted.text("post-step")
      ]
    }))))

  it.effect("AC-69 [L-20] a throwing recovery keeps the original error; cancel or dispose during recovery win", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const mode = yield* Ref.make("throw")
      const inRecovery = yield* Ref.make(0)
      yield* hooks.requestError.register(() =>
        Effect.gen(function*() {
          const m = yield* Ref.get(mode)
          if (m === "throw") return yield* boom("recovery exploded")
          yield* Ref.update(inRecovery, (n) => n + 1)
          return yield* Effect.never
        })
      )
      yield* hooks.requestError.register(() => Effect.succeed(Hooks.RequestErrorDecision.Retry()))
      const t = yield* TestKit.agent()
      yield* t.prompt("throw")
      expect((yield* t.turnEnds)[0]).toEqual({ kind: "error", step: 1, message: "orig", code: "ORIG" })
      // cancel during recovery
      yield* Ref.set(mode, "hang")
      yield* t.agent.send(text("cancel"))
      yield* Effect.repeat(Ref.get(inRecovery), { until: (n) => n === 1 })
      yield* t.agent.cancel("stop recovery")
      yield* t.agent.whenIdle
      expect((yield* t.turnEnds)[1]).toEqual({ kind: "aborted", reason: "stop recovery" })
      expect(yield* t.requests).toHaveLength(2)
      // dispose during recovery
      yield* t.agent.send(text("dispose"))
      yield* Effect.repeat(Ref.get(inRecovery), { until: (n) => n === 2 })
      yield* t.agent.dispose
      expect((yield* t.turnEnds)[2]).toEqual({ kind: "disposed" })
      expect(yield* t.requests).toHaveLength(3)
      Reconstruction.expectBalanced(yield* t.events)
      expect(yield* Reconstruction.verify(t.agent.session, yield* t.requests)).toBe(3)
    }).pipe(Effect.provide(TestKit.layer({
      script: [[Scripted.fail("ORIG", "orig")], [Scripted.fail("ORIG", "orig")], [Scripted.fail("ORIG", "orig")]]
    }))))

  it.effect("AC-70 [L-22] a throwing step-result records an empty anchor with usage and all chunk seqs; error without code", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.stepResult.register(() => boom("step-result exploded"))
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      const events = yield* t.events
      const messages = of(events, "assistant/message")
      expect(messages).toHaveLength(1)
      expect(messages[0]?.data).toEqual({
        turn: 1,
        step: 1,
        content: [],
        provenance: { provider: "scripted", model: "test" },
        usage: { inputTokens: 10, outputTokens: 2 }
      })
      expect(messages[0]?.sourceEventSeqs).toEqual(of(events, "assistant/chunk").map((e) => e.seq))
      expect(yield* t.turnEnds).toEqual([{ kind: "error", step: 1, message: "step-result exploded" }])
      expect((yield* t.history).map((m) => m.role)).toEqual(["user"])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("hi")] }))))

  it.effect("AC-71 [L-22] replay state: kept without rewrite, dropped on rewrite or in-place mutation; a rewritten tool call runs", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const mode = yield* Ref.make("keep")
      yield* hooks.stepResult.register((i, next) =>
        Effect.flatMap(Ref.get(mode), (m) => {
          if (m === "rewrite") return Effect.succeed({ ...i.message, content: [ContentBlock.text("rewritten")] })
          if (m === "mutate") {
            ;(i.message.content as Array<ContentBlock.ContentBlock>).push(ContentBlock.text(" more"))
            return next()
          }
          if (m === "add-call" && i.step === 1) {
            return Effect.succeed({
              ...i.message,
              content: [...i.message.content, ContentBlock.toolCall("added-1", "echo", "{\"text\":\"added\"}")]
            })
          }
          return next()
        })
      )
      const t = yield* TestKit.agent({ tools: [echo] })
      for (const m of ["keep", "rewrite", "mutate", "add-call"]) {
        yield* Ref.set(mode, m)
        yield* t.prompt(m)
      }
      const messages = of(yield* t.events, "assistant/message")
      expect(messages.map((e) => e.data.provenance.replayState)).toEqual([
        { sig: "s1" },
        undefined,
        undefined,
        undefined,
        undefined
      ])
      expect(messages[1]?.data.content).toEqual(text("rewritten"))
      const events = yield* t.events
      expect(of(events, "tool/call").map((e) => e.data.callId)).toEqual(["added-1"])
      expect(of(events, "tool/result")[0]?.data.content).toEqual(text("echo: added"))
      const last = (yield* t.requests).at(-1)
      expect(last?.messages.at(-1)?.content[0]).toMatchObject({ type: "tool-result", toolCallId: "added-1" })
      expect(yield* Reconstruction.check(t)).toBe(5)
    }).pipe(Effect.provide(TestKit.layer({
      script: [
        [Scripted.say("a"), Scripted.finish("stop", { sig: "s1" })],
        [Scripted.say("b"), Scripted.finish("stop", { sig: "s2" })],
        [Scripted.say("c"), Scripted.finish("stop", { sig: "s3" })],
        [Scripted.say("d"), Scripted.finish("stop", { sig: "s4" })],
        Scripted.text("after added call")
      ]
    }))))

  it.effect("AC-72 [L-17] cancel from an assistant/message observer → tool never runs, synthetic ABORTED pair, turn aborted", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make(0)
      const probe = tool("probe", () => Effect.as(Ref.update(ran, (n) => n + 1), [ContentBlock.text("ran")]))
      const t = yield* TestKit.agent({ tools: [probe] })
      yield* t.agent.session.observe((e) =>
        e.type === "assistant/message" && e.data.turn === 1 ? t.agent.cancel("observer") : Effect.void
      )
      yield* t.prompt("go")
      expect(yield* Ref.get(ran)).toBe(0)
      const events = yield* t.events
      const results = of(events, "tool/result")
      expect(results).toHaveLength(1)
      expect(results[0]?.data).toMatchObject({ callId: "c1", isError: true, error: { name: "AbortError", code: "ABORTED" } })
      expect(of(events, "tool/call")).toHaveLength(1)
      expect(yield* t.turnEnds).toEqual([{ kind: "aborted", reason: "observer" }])
      yield* t.prompt("next")
      const next = (yield* t.requests)[1]
      const toolResult = next?.messages.find((m) => m.content[0]?.type === "tool-result")
      expect(toolResult?.content[0]).toMatchObject({ type: "tool-result", toolCallId: "c1", isError: true })
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.call("c1", "probe", "{}"), Scripted.text("ok")] }))))

  it.effect("AC-73 [L-17,L-19] abort inside tool 1 of 2 → real result, synthetic result, context, steering, post-step, step/end, aborted", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const postSaw = yield* Ref.make<boolean | undefined>(undefined)
      yield* hooks.postStep.register((i) =>
        Effect.gen(function*() {
          const aborted = yield* StepSignal.isAborted(i.signal)
          yield* Ref.set(postSaw, aborted)
          yield* Effect.orDie(i.agent.inject(text(`post-step aborted=${aborted}`)))
        })
      )
      // a bare abort of the step signal (not `cancel`: the FIFOs are kept)
      const stepSignal = yield* Ref.make<StepSignal.StepSignal | undefined>(undefined)
      yield* hooks.preStep.register((i) => Ref.set(stepSignal, i.signal))
      // ... fired from tool 1's post-execute stage, after its body completed
      const tools = yield* ToolRuntime.ToolRuntime
      yield* tools.hooks.postExecute.register((i, next) =>
        i.name === "first"
          ? Effect.flatMap(Ref.get(stepSignal), (signal) =>
            Effect.andThen(
              signal === undefined ? Effect.void : StepSignal.abort(signal, { _tag: "Cancelled", reason: "tool aborted" }),
              next()
            ))
          : next()
      )
      const first = tool("first", (_a, ctx) =>
        Effect.gen(function*() {
          yield* Effect.orDie(ctx.agent.inject(text("ctx from tool")))
          yield* Effect.orDie(ctx.agent.steer(text("steer from tool")))
          return [ContentBlock.text("first done")]
        }))
      const second = tool("second", () => Effect.succeed([ContentBlock.text("never")]))
      const t = yield* TestKit.agent({ tools: [first, second] })
      yield* t.prompt("go")
      const events = yield* t.events
      const from = events.findIndex((e) => e.type === "assistant/message")
      expect(events.slice(from).map((e) => e.type)).toEqual([
        "assistant/message",
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
        "context/message",
        "steering/message",
        "context/message",
        "step/end",
        "turn/end"
      ])
      const results = of(events, "tool/result")
      expect(results[0]?.data).toMatchObject({ callId: "c1", isError: false, content: text("first done") })
      expect(results[1]?.data).toMatchObject({ callId: "c2", isError: true, error: { name: "AbortError", code: "ABORTED" } })
      expect(yield* Ref.get(postSaw)).toBe(true)
      expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: "aborted", reason: "tool aborted" } })
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [twoCalls("first", "second")] }))))

  it.effect("AC-74 [L-12.14] two calls with contexts, steering and a post-step inject → the documented order", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.postStep.register((i) => (i.step === 1 ? Effect.orDie(i.agent.inject(text("post"))) : Effect.void))
      const a = tool("a", (_x, ctx) =>
        Effect.gen(function*() {
          yield* ctx.deferContext({ content: text("ctx a"), source: Message.pluginSource("a") })
          yield* Effect.orDie(ctx.agent.steer(text("steer")))
          return [ContentBlock.text("A")]
        }))
      const b = tool("b", (_x, ctx) => Effect.as(Effect.orDie(ctx.agent.inject(text("ctx b"))), [ContentBlock.text("B")]))
      const t = yield* TestKit.agent({ tools: [a, b] })
      yield* t.prompt("go")
      const events = yield* t.events
      const from = events.findIndex((e) => e.type === "assistant/message")
      const to = events.findIndex((e) => e.type === "step/end")
      expect(events.slice(from, to + 1).map((e) => e.type)).toEqual([
        "assistant/message",
        "tool/call",
        "tool/result",
        "tool/call",
        "tool/result",
        "context/message",
        "context/message",
        "steering/message",
        "context/message",
        "step/end"
      ])
      expect(of(events, "context/message").map((e) => ContentBlock.flattenText(e.data.content))).toEqual([
        "ctx a",
        "ctx b",
        "post"
      ])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({ script: [twoCalls("a", "b"), Scripted.text("done")] }))))

  it.effect("AC-80 [L-27] cancel inside continuation while voting continue → 1 step, aborted with that reason", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.turnContinuation.register((i) =>
        Effect.as(i.agent.cancel("from continuation"), Hooks.ContinuationDecision.Continue({}))
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("go")
      expect(of(yield* t.events, "step/start")).toHaveLength(1)
      expect(yield* t.turnEnds).toEqual([{ kind: "aborted", reason: "from continuation" }])
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b")] }))))

  it.effect("AC-87 [L-12.9] middleware pushing into the frozen request → an ordinary turn error about immutability", () =>
    Effect.gen(function*() {
      const recoveries = yield* Ref.make(0)
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.requestError.register(() => Effect.as(Ref.update(recoveries, (n) => n + 1), Hooks.RequestErrorDecision.Fail()))
      yield* Llm.addMiddleware((options, next) =>
        Stream.suspend(() => {
          ;(options.messages as Array<Message.Message>).push(Message.user("sneaky"))
          return next()
        })
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      const [end] = yield* t.turnEnds
      expect(end?.kind).toBe("error")
      expect(end?.kind === "error" ? end.message : "").toMatch(/not extensible|read.only|frozen/i)
      expect(yield* Ref.get(recoveries)).toBe(0)
      expect(yield* t.requests).toHaveLength(0)
      expect(yield* Reconstruction.check(t)).toBe(0)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("never")] }))))

  it.effect("AC-88 [L-12.8] no provider/model → the error names them and the request point; a request listener supplying both works", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const supply = yield* Ref.make(false)
      yield* hooks.request.register((i, next) =>
        Effect.flatMap(Ref.get(supply), (s) => (s ? Effect.succeed({ ...i.config, provider: "scripted", model: "m" }) : next()))
      )
      const agent = yield* Agent.make({})
      yield* agent.send(text("hi"))
      yield* agent.whenIdle
      const events = yield* agent.session.events
      const end = of(events, "turn/end")[0]?.data.reason
      expect(end?.kind).toBe("error")
      const message = end?.kind === "error" ? end.message : ""
      expect(message).toContain("provider and model")
      expect(message).toContain("\"request\" point")
      expect(end).toMatchObject({ step: 1 })
      yield* Ref.set(supply, true)
      yield* agent.send(text("again"))
      yield* agent.whenIdle
      const ends = of(yield* agent.session.events, "turn/end").map((e) => e.data.reason)
      expect(ends[1]).toEqual({ kind: "completed" })
      Reconstruction.expectBalanced(yield* agent.session.events)
      expect(yield* Reconstruction.verify(agent.session, yield* Scripted.requests)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-107 [H-3,L-24] continue{reason} → a steering/message with the reason's source before step 2", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.turnContinuation.register((i, next) =>
        i.step === 1
          ? Effect.succeed(Hooks.ContinuationDecision.Continue({
            reason: { content: text("keep going"), source: Message.pluginSource("stop-hook") }
          }))
          : next()
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("go")
      const events = yield* t.events
      const steering = events.findIndex((e) => e.type === "steering/message")
      const start2 = events.findIndex((e) => e.type === "step/start" && e.data.step === 2)
      expect(steering).toBeGreaterThan(0)
      expect(steering).toBeLessThan(start2)
      expect(events[steering]?.data).toEqual({
        turn: 1,
        content: text("keep going"),
        source: { kind: "plugin", plugin: "stop-hook" }
      })
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b")] }))))

  it.effect("AC-79 [L-26] terminal stop discards steering; a throwing turn-stop fails the turn, later turns are fine", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const mode = yield* Ref.make("stop")
      yield* hooks.turnStop.register(() =>
        Effect.flatMap(Ref.get(mode), (m) =>
          m === "stop"
            ? Effect.succeed(Hooks.TurnStopDecision.Stop())
            : m === "throw"
            ? boom("turn-stop exploded")
            : Effect.void)
      )
      yield* hooks.turnContinuation.register((i, next) =>
        Effect.flatMap(Ref.get(mode), (m) =>
          m === "stop" ? Effect.andThen(Effect.orDie(i.agent.steer(text("late steering"))), next()) : next())
      )
      const t = yield* TestKit.agent()
      yield* t.prompt("one")
      expect(yield* t.requests).toHaveLength(1)
      expect(of(yield* t.events, "steering/message")).toHaveLength(0)
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      yield* Ref.set(mode, "throw")
      yield* t.prompt("two")
      expect((yield* t.turnEnds)[1]).toEqual({ kind: "error", step: 1, message: "turn-stop exploded" })
      yield* Ref.set(mode, "none")
      yield* t.prompt("three")
      expect((yield* t.turnEnds).slice(2).every((r) => r.kind === "completed")).toBe(true)
      expect(yield* Reconstruction.check(t)).toBeGreaterThanOrEqual(3)
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.text("a"), Scripted.text("b"), Scripted.text("c"), Scripted.text("d"), Scripted.text("e")]
    }))))
})
