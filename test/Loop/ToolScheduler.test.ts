import { describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as Json from "../../src/Llm/Json.js"
import * as Message from "../../src/Llm/Message.js"
import * as StepSignal from "../../src/Loop/StepSignal.js"
import * as Tool from "../../src/Loop/Tool.js"
import * as ToolRegistry from "../../src/Loop/ToolRegistry.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import * as ToolScheduler from "../../src/Loop/ToolScheduler.js"
import * as SessionErrors from "../../src/Session/SessionError.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { batchEvents, call, resultOf, rig, runCalls, shape, textOf } from "../support/ToolKit.js"

const text = ContentBlock.text
const plugin = Message.pluginSource("test")
const ctx = (t: string) => ({ content: [text(t)], source: plugin })

class NeverHappened extends Data.TaggedError("NeverHappened")<{ readonly what: string }> {}

/** Fails the test (instead of hanging) when a latch is never reached (live clock: used in `it.live` tests). */
const within = <A, E, R>(effect: Effect.Effect<A, E, R>, what: string) =>
  Effect.timeoutOrElse(effect, { duration: Duration.seconds(5), orElse: () => Effect.fail(new NeverHappened({ what })) })

const yields = (n: number) => Effect.repeat(Effect.yieldNow, { times: n })

/**
 * A controllable tool: each call records `start <id>` / `end <id>`, tracks the in-flight count,
 * signals `started[id]` and waits for `gates[id]` before returning `done <id>`.
 */
const controlled = Effect.gen(function*() {
  const events = yield* Ref.make<ReadonlyArray<string>>([])
  const inflight = yield* Ref.make(0)
  const maxInflight = yield* Ref.make(0)
  const started = new Map<string, Deferred.Deferred<void>>()
  const gates = new Map<string, Deferred.Deferred<void>>()
  const latch = (map: Map<string, Deferred.Deferred<void>>, id: string) =>
    Effect.suspend(() => {
      const existing = map.get(id)
      if (existing !== undefined) return Effect.succeed(existing)
      return Effect.map(Deferred.make<void>(), (d) => {
        map.set(id, d)
        return d
      })
    })
  const mark = (m: string) => Ref.update(events, (l) => [...l, m])
  const body = (id: string, gated: boolean) =>
    Effect.gen(function*() {
      yield* mark(`start ${id}`)
      const now = yield* Ref.updateAndGet(inflight, (n) => n + 1)
      yield* Ref.update(maxInflight, (m) => Math.max(m, now))
      yield* Deferred.succeed(yield* latch(started, id), undefined)
      if (gated) yield* Deferred.await(yield* latch(gates, id))
      yield* Ref.update(inflight, (n) => n - 1)
      yield* mark(`end ${id}`)
      return [text(`done ${id}`)]
    })
  const make = (name: string, parallel: boolean, gated = true) =>
    Tool.make({
      name,
      description: name,
      parameters: Schema.Struct({ id: Schema.String }),
      ...(parallel ? { isConcurrencySafe: () => true } : {}),
      execute: ({ id }) => body(id, gated)
    })
  return {
    events: Ref.get(events),
    maxInflight: Ref.get(maxInflight),
    make,
    // Effect 4 resumes a waiter synchronously inside the body's `Deferred.succeed`: yield once so the body reaches
    // its gate before the test goes on (v3 resumed the waiter later, through the scheduler)
    started: (id: string) => Effect.andThen(Effect.flatMap(latch(started, id), Deferred.await), Effect.yieldNow),
    open: (id: string) => Effect.flatMap(latch(gates, id), (d) => Deferred.succeed(d, undefined)),
    mark
  }
})

const c = (id: string, name: string) => call(id, name, { id })

const layerOf = (tools: ReadonlyArray<Tool.Tool<never>>, maxParallelToolCalls?: number) =>
  ToolRuntime.layer(maxParallelToolCalls === undefined ? { tools } : { tools, maxParallelToolCalls })

const isSynthetic = (events: ReadonlyArray<SessionEvent>, id: string) => {
  const r = resultOf(events, id)
  return r.isError && r.error?.code === "ABORTED" && r.error.name === "AbortError" &&
    ContentBlock.flattenText(r.content).startsWith("Error: tool call skipped because the step was aborted before execution")
}

describe("ToolScheduler", () => {
  it.live("AC-97 [L-14..L-16] parallel calls all start before any finishes; an exclusive one between → 3 groups; model order everywhere", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      yield* ToolRuntime.registerTool(k.make("par", true))
      yield* ToolRuntime.registerTool(k.make("ex", false))
      const r = yield* rig
      const order = yield* Ref.make<ReadonlyArray<string>>([])
      const rec = (m: string) => Ref.update(order, (l) => [...l, m])
      yield* ToolRuntime.onPreExecute((input, next) => Effect.andThen(rec(`pre ${input.callId}`), next()))
      yield* ToolRuntime.onPostExecute((input, next) =>
        Effect.andThen(
          rec(`post ${input.callId}`),
          Effect.map(next(), (d) =>
            d._tag === "Accept" ? { ...d, additionalContexts: [...(d.additionalContexts ?? []), ctx(`ctx ${input.callId}`)] } : d)
        ))
      const view = yield* ToolRuntime.view()
      const calls = [c("p1", "par"), c("p2", "par"), c("p3", "par"), c("x", "ex"), c("q1", "par"), c("q2", "par")]
      const fiber = yield* Effect.forkChild(runCalls(r, calls, view))
      // group 1: all three in flight at once (none can finish before its gate opens)
      yield* within(Effect.all([k.started("p1"), k.started("p2"), k.started("p3")]), "p1..p3 in flight together")
      expect(yield* k.events).toEqual(["start p1", "start p2", "start p3"])
      // completion order p3, p2, p1
      yield* k.open("p3")
      yield* k.open("p2")
      yield* yields(20)
      expect(shape(yield* batchEvents(r)).filter((s) => s.startsWith("result"))).toEqual([])
      yield* k.open("p1")
      // group 2: the exclusive call runs alone
      yield* within(k.started("x"), "x started")
      expect((yield* k.events).slice(3)).toEqual(["end p3", "end p2", "end p1", "start x"])
      yield* yields(20)
      expect((yield* k.events).includes("start q1")).toBe(false)
      yield* k.open("x")
      // group 3
      yield* within(Effect.all([k.started("q1"), k.started("q2")]), "q1, q2 in flight together")
      yield* k.open("q2")
      yield* k.open("q1")
      const outcome = yield* Fiber.join(fiber)
      expect(outcome).toEqual({ aborted: false })
      const events = yield* batchEvents(r)
      expect(shape(events).filter((s) => s.startsWith("result") || s.startsWith("ctx"))).toEqual([
        "result p1",
        "result p2",
        "result p3",
        "result x",
        "result q1",
        "result q2",
        "ctx ctx p1",
        "ctx ctx p2",
        "ctx ctx p3",
        "ctx ctx x",
        "ctx ctx q1",
        "ctx ctx q2"
      ])
      // the exclusive call started only after every earlier result committed, and committed before q1 started
      const s = shape(events)
      expect(s.indexOf("call x")).toBeGreaterThan(s.indexOf("result p3"))
      expect(s.indexOf("call q1")).toBeGreaterThan(s.indexOf("result x"))
      expect(yield* Ref.get(order)).toEqual([
        "pre p1",
        "pre p2",
        "pre p3",
        "post p1",
        "post p2",
        "post p3",
        "pre x",
        "post x",
        "pre q1",
        "pre q2",
        "post q1",
        "post q2"
      ])
      expect(textOf(events, "p2")).toBe("done p2")
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.live("AC-98 [L-14] cap 2 with 4 parallel calls → at most 2 in flight, rolling", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      yield* ToolRuntime.registerTool(k.make("par", true))
      const view = yield* ToolRuntime.view()
      const fiber = yield* Effect.forkChild(runCalls(r, ["a", "b", "c", "d"].map((id) => c(id, "par")), view))
      yield* within(Effect.all([k.started("a"), k.started("b")]), "a, b in flight")
      yield* yields(50)
      expect(yield* k.events).toEqual(["start a", "start b"])
      yield* k.open("b")
      yield* within(k.started("c"), "c takes b's slot")
      yield* yields(50)
      expect((yield* k.events).includes("start d")).toBe(false)
      yield* k.open("a")
      yield* within(k.started("d"), "d takes a's slot")
      yield* k.open("c")
      yield* k.open("d")
      yield* Fiber.join(fiber)
      expect(yield* k.maxInflight).toBe(2)
      expect(shape(yield* batchEvents(r)).filter((s) => s.startsWith("result"))).toEqual([
        "result a",
        "result b",
        "result c",
        "result d"
      ])
    }).pipe(Effect.scoped, Effect.provide(layerOf([], 2))))

  it.effect("AC-98 [L-14] cap 1 → serial", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      yield* ToolRuntime.registerTool(k.make("par", true, false))
      const view = yield* ToolRuntime.view()
      yield* runCalls(r, ["a", "b", "c"].map((id) => c(id, "par")), view)
      expect(yield* k.events).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"])
      expect(yield* k.maxInflight).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(layerOf([], 1))))

  it.live("AC-98 [L-14] a tool replaced by an exclusive one before its call starts → re-classified (waits, runs alone)", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      yield* ToolRuntime.registerTool(k.make("first", true))
      const scope = yield* Scope.make()
      yield* ToolRuntime.registerTool(k.make("second", true, false)).pipe(Scope.provide(scope))
      // the pre-execute of the first call swaps "second" for an exclusive tool of the same name
      const rt = yield* ToolRuntime.ToolRuntime
      const replacementScope = yield* Scope.make()
      yield* ToolRuntime.onPreExecute((input, next) =>
        input.callId === "a"
          ? Effect.gen(function*() {
            yield* Scope.close(scope, Exit.void)
            yield* ToolRegistry.register(rt.globals, k.make("second", false, false)).pipe(
              Scope.provide(replacementScope),
              Effect.orDie
            )
            return yield* next()
          })
          : next())
      const view = yield* ToolRuntime.view()
      const fiber = yield* Effect.forkChild(runCalls(r, [c("a", "first"), c("b", "second")], view))
      yield* within(k.started("a"), "a started")
      yield* yields(50)
      // had "b" stayed parallel it would have started (logged) by now
      expect(shape(yield* batchEvents(r))).toEqual(["call a"])
      yield* k.open("a")
      yield* Fiber.join(fiber)
      expect(shape(yield* batchEvents(r))).toEqual(["call a", "result a", "call b", "result b"])
      expect(yield* k.events).toEqual(["start a", "end a", "start b", "end b"])
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("AC-98 [L-14] caps 0 and 1.5 (and -1, NaN) → config error at layer build; default is 10", () =>
    Effect.gen(function*() {
      for (const cap of [0, 1.5, -1, Number.NaN]) {
        const error = yield* Effect.flip(Effect.scoped(Layer.build(ToolRuntime.layer({ maxParallelToolCalls: cap }))))
        expect(error).toBeInstanceOf(ToolRuntime.ToolConfigError)
        expect((error as ToolRuntime.ToolConfigError).code).toBe("INVALID_CONFIG")
      }
      const rt = yield* ToolRuntime.make()
      expect(rt.maxParallelToolCalls).toBe(10)
    }))

  it.effect("[L-14] unknown tool, no classifier, throwing or non-true classifier, invalid args → exclusive", () =>
    Effect.gen(function*() {
      const base = { description: "", parameters: Schema.Struct({ n: Schema.Number }), execute: () => Effect.succeed([]) }
      const throwing = Tool.make({ ...base, name: "t", isConcurrencySafe: () => { throw new Error("no") } })
      const truthy = Tool.make({ ...base, name: "u", isConcurrencySafe: () => 1 as unknown as boolean })
      const safe = Tool.make({ ...base, name: "s", isConcurrencySafe: () => true })
      const none = Tool.make({ ...base, name: "n" })
      expect(ToolScheduler.classify(Option.none(), {})).toBe("exclusive")
      expect(ToolScheduler.classify(Option.some(throwing), { n: 1 })).toBe("exclusive")
      expect(ToolScheduler.classify(Option.some(truthy), { n: 1 })).toBe("exclusive")
      expect(ToolScheduler.classify(Option.some(none), { n: 1 })).toBe("exclusive")
      expect(ToolScheduler.classify(Option.some(safe), { n: "x" })).toBe("exclusive")
      expect(ToolScheduler.classify(Option.some(safe), "not json")).toBe("exclusive")
      expect(ToolScheduler.classify(Option.some(safe), { n: 1 })).toBe("parallel")
    }))

  it.effect("AC-99 [L-17] abort before a parallel group → no bodies, all synthetic pairs", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      yield* ToolRuntime.registerTool(k.make("par", true, false))
      yield* StepSignal.abort(r.signal, { _tag: "Cancelled", reason: "user stop" })
      const outcome = yield* runCalls(r, [c("a", "par"), c("b", "par")], yield* ToolRuntime.view())
      expect(outcome).toEqual({ aborted: true })
      expect(yield* k.events).toEqual([])
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual(["call a", "result a", "call b", "result b"])
      expect(isSynthetic(events, "a") && isSynthetic(events, "b")).toBe(true)
      expect(textOf(events, "a")).toBe("Error: tool call skipped because the step was aborted before execution (user stop)")
      expect(events[1]?.sourceEventSeqs).toEqual([events[0]?.seq])
      expect(events[0]).toMatchObject({ type: "tool/call", data: { turn: 1, step: 1, callId: "a", name: "par", arguments: `{"id":"a"}` } })
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("AC-72 [L-17] cancel from an assistant/message observer → the tool never runs; synthetic ABORTED pair", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      yield* ToolRuntime.registerTool(k.make("ex", false, false))
      yield* r.session.observe((event) => event.type === "assistant/message" ? r.agent.cancel("observer") : Effect.void)
      const outcome = yield* runCalls(r, [c("c1", "ex")], yield* ToolRuntime.view())
      expect(outcome.aborted).toBe(true)
      expect(yield* k.events).toEqual([])
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual(["call c1", "result c1"])
      expect(isSynthetic(events, "c1")).toBe(true)
      // the next request would carry the error tool-result (S-14)
      const messages = yield* r.session.deriveMessages
      expect(messages[messages.length - 1]?.content[0]).toMatchObject({ type: "tool-result", toolCallId: "c1", isError: true })
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("AC-99 [L-17] abort during ordered pre-execute → later siblings never start", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      yield* ToolRuntime.registerTool(k.make("par", true))
      const pres: Array<string> = []
      yield* ToolRuntime.onPreExecute((input, next) =>
        Effect.gen(function*() {
          pres.push(input.callId)
          if (input.callId === "b") yield* r.agent.cancel("stop in pre")
          return yield* next()
        }))
      const outcome = yield* runCalls(r, [c("a", "par"), c("b", "par"), c("c", "par")], yield* ToolRuntime.view())
      expect(outcome.aborted).toBe(true)
      expect(pres).toEqual(["a", "b"])
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual(["call a", "call b", "result a", "result b", "call c", "result c"])
      expect(textOf(events, "a")).toBe("Error: tool call aborted (stop in pre)")
      expect(textOf(events, "b")).toBe("Error: tool call aborted (stop in pre)")
      expect(isSynthetic(events, "c")).toBe(true)
      expect((yield* k.events).includes("start c")).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("AC-99 [L-17,L-19] abort mid-pool → started results committed in order, contexts drained, the next barrier never runs", () =>
    Effect.gen(function*() {
      const r = yield* rig
      const ran: Array<string> = []
      const bInjected = yield* Deferred.make<void>()
      const aCommitted = yield* Deferred.make<void>()
      yield* ToolRuntime.onResult((input) => input.callId === "a" ? Deferred.succeed(aCommitted, undefined) : Effect.void)
      const par = Tool.make({
        name: "par",
        description: "",
        parameters: Schema.Struct({ id: Schema.String }),
        isConcurrencySafe: () => true,
        execute: ({ id }, run) =>
          Effect.gen(function*() {
            ran.push(id)
            yield* run.deferContext(ctx(`deferred ${id}`))
            if (id === "b") {
              yield* run.agent.inject([text("injected by b")], { source: plugin, meta: { from: "b" } })
              yield* Deferred.succeed(bInjected, undefined)
              yield* Deferred.await(aCommitted)
              yield* run.agent.cancel("mid pool")
              return yield* Effect.never
            }
            yield* Deferred.await(bInjected)
            return [text(`done ${id}`)]
          })
      })
      const ex = Tool.raw({ name: "ex", description: "", parameters: {}, execute: () => Effect.sync(() => (ran.push("ex"), [])) })
      yield* ToolRuntime.registerTool(par)
      yield* ToolRuntime.registerTool(ex)
      const outcome = yield* runCalls(r, [c("a", "par"), c("b", "par"), call("x", "ex"), c("d", "par")], yield* ToolRuntime.view())
      expect(outcome.aborted).toBe(true)
      expect(ran).toEqual(["a", "b"])
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual([
        "call a",
        "call b",
        "result a",
        "result b",
        "call x",
        "result x",
        "call d",
        "result d",
        // FIFO: b's inject arrived before any commit; then the committed results' contexts in model order
        "ctx injected by b",
        "ctx deferred a",
        "ctx deferred b"
      ])
      expect(textOf(events, "a")).toBe("done a")
      expect(textOf(events, "b")).toBe("Error: tool call aborted (mid pool)")
      expect(isSynthetic(events, "x") && isSynthetic(events, "d")).toBe(true)
      const injected = events.find((e) => e.type === "context/message")
      expect(injected).toMatchObject({ data: { source: plugin, meta: { from: "b" } }, surfaceOp: "append" })
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("AC-73 [L-17,L-19] abort inside tool 1 of 2 → call c1, real result, call c2, synthetic result, context", () =>
    Effect.gen(function*() {
      const r = yield* rig
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (_, run) =>
          Effect.gen(function*() {
            yield* run.agent.inject([text("ctx from c1")], { source: plugin })
            yield* run.agent.cancel("inside c1")
            return [text("c1 finished")]
          })
      })
      yield* ToolRuntime.registerTool(tool)
      const outcome = yield* runCalls(r, [call("c1", "t"), call("c2", "t")], yield* ToolRuntime.view())
      expect(outcome.aborted).toBe(true)
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual(["call c1", "result c1", "call c2", "result c2", "ctx ctx from c1"])
      expect(resultOf(events, "c1").error?.code ?? "ABORTED").toBe("ABORTED")
      expect(isSynthetic(events, "c2")).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("AC-56 [L-3,L-19] two injects inside a body (first mutated afterwards) → none during the body, both after the result, verbatim", () =>
    Effect.gen(function*() {
      const r = yield* rig
      const during: Array<number> = []
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (_, run) =>
          Effect.gen(function*() {
            const first = { type: "text" as const, text: "first" }
            const meta: { [k: string]: Json.Json } = { n: 1 }
            yield* run.agent.inject([first], { source: plugin, meta })
            first.text = "mutated"
            meta["n"] = 2
            yield* run.agent.inject([text("second")], { source: plugin })
            const bad = yield* Effect.flip(run.agent.inject([text("bad")], { meta: { n: 1n } as unknown as Json.Json }))
            during.push((yield* r.session.events).filter((e) => e.type === "context/message").length)
            return [text(`rejected: ${bad.code}`)]
          })
      })
      yield* ToolRuntime.registerTool(tool)
      yield* runCalls(r, [call("c1", "t")], yield* ToolRuntime.view())
      expect(during).toEqual([0])
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual(["call c1", "result c1", "ctx first", "ctx second"])
      expect(events[2]).toMatchObject({ data: { meta: { n: 1 }, source: plugin } })
      expect(textOf(events, "c1")).toBe("rejected: INVALID_INPUT")
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("[L-19] an inject arriving after the batch settled is not lost (appended directly, still after the results)", () =>
    Effect.gen(function*() {
      const r = yield* rig
      yield* runCalls(r, [call("c1", "nope")], yield* ToolRuntime.view())
      yield* r.agent.inject([text("late")], { source: plugin })
      expect(shape(yield* batchEvents(r))).toEqual(["call c1", "result c1", "ctx late"])
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.live("[L-17,DEC-1] interrupting runBatch itself settles the batch: started calls answered, synthetic pairs, contexts, then interruption", () =>
    Effect.gen(function*() {
      const k = yield* controlled
      const r = yield* rig
      const finalized: Array<string> = []
      const blocking = Tool.make({
        name: "block",
        description: "",
        parameters: Schema.Struct({ id: Schema.String }),
        isConcurrencySafe: () => true,
        execute: ({ id }, run) =>
          Effect.gen(function*() {
            yield* run.deferContext(ctx(`deferred ${id}`))
            return yield* Effect.andThen(k.mark(`start ${id}`), Effect.never)
          }).pipe(Effect.ensuring(Effect.sync(() => void finalized.push(id))))
      })
      yield* ToolRuntime.registerTool(blocking)
      yield* ToolRuntime.registerTool(k.make("ex", false))
      const fiber = yield* Effect.forkChild(runCalls(r, [c("a", "block"), c("b", "block"), c("x", "ex")], yield* ToolRuntime.view()))
      yield* within(
        Effect.repeat(k.events, { until: (l) => l.length === 2 }),
        "a and b running"
      )
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      expect(Exit.hasInterrupts(exit)).toBe(true)
      expect(finalized.sort()).toEqual(["a", "b"])
      const events = yield* batchEvents(r)
      expect(shape(events)).toEqual([
        "call a",
        "call b",
        "result a",
        "result b",
        "call x",
        "result x",
        "ctx deferred a",
        "ctx deferred b"
      ])
      expect(textOf(events, "a")).toBe("Error: tool call aborted (interrupted)")
      expect(isSynthetic(events, "x")).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("[L-18] a session append failure is the only way runBatch fails (ToolSchedulerError); tool failures never are", () =>
    Effect.gen(function*() {
      const r = yield* rig
      const failing = {
        ...r,
        session: {
          ...r.session,
          append: (input: Parameters<typeof r.session.append>[0]) =>
            input.type === "tool/result"
              ? Effect.fail(SessionErrors.make("IO", "disk full"))
              : r.session.append(input)
        }
      }
      const broken = Tool.raw({ name: "t", description: "", parameters: {}, execute: () => Effect.die("boom") })
      yield* ToolRuntime.registerTool(broken)
      const error = yield* Effect.flip(runCalls(failing, [call("c1", "t")], yield* ToolRuntime.view()))
      expect(error).toBeInstanceOf(ToolScheduler.ToolSchedulerError)
      expect(error.code).toBe("TOOL_SCHEDULER")
      expect(error.message).toContain("disk full")
      // the same broken tool with a healthy session: an error result, the batch succeeds
      const r2 = yield* rig
      const outcome = yield* runCalls(r2, [call("c1", "t")], yield* ToolRuntime.view())
      expect(outcome.aborted).toBe(false)
      expect(textOf(yield* batchEvents(r2), "c1")).toBe("Error: boom")
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))

  it.effect("[L-14,T-1] a call to a hidden (restricted) tool is indistinguishable from an unknown one", () =>
    Effect.gen(function*() {
      const r = yield* rig
      const secret = Tool.raw({ name: "secret", description: "", parameters: {}, isConcurrencySafe: () => true, execute: () => Effect.succeed([text("leak")]) })
      yield* ToolRuntime.registerTool(secret)
      const view = yield* ToolRuntime.view({ restrictions: { deny: ["secret"] } })
      yield* runCalls(r, [call("c1", "secret"), call("c2", "never-existed")], view)
      const events = yield* batchEvents(r)
      const strip = (id: string) => {
        const { callId: _c, ...rest } = resultOf(events, id)
        return { ...rest, content: ContentBlock.flattenText(rest.content).replace(/"[^"]+"/, "<name>") }
      }
      expect(strip("c1")).toEqual(strip("c2"))
      expect(textOf(events, "c1")).toBe(`Error: unknown tool "secret"`)
      expect((yield* view.schemas()).map((s) => s.name)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(layerOf([]))))
})

