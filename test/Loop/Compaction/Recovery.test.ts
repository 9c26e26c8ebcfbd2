import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Scripted from "../../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../../src/Llm/ContentBlock.js"
import type { GenerateOptions } from "../../../src/Llm/Message.js"
import * as Agent from "../../../src/Loop/Agent.js"
import * as Hooks from "../../../src/Loop/Hooks.js"
import * as TestKit from "../../../src/Loop/TestKit.js"
import * as Memory from "../../../src/Session/persistence/Memory.js"
import * as Projection from "../../../src/Session/Projection.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import * as Surface from "../../../src/Session/Surface.js"
import * as LoopKit from "../../support/LoopKit.js"
import * as Kit from "./Kit.js"

const ofType = <T extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: T) =>
  events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type)

const calls = (n: number, size: number, prefix = "c") =>
  Array.from({ length: n }, (_, i) => Kit.bigCall(`${prefix}${i + 1}`, size))

const firstText = (request: GenerateOptions): string => {
  const m = request.messages[0]
  return m === undefined ? "" : ContentBlock.flattenText(m.content)
}

describe("Compaction: recall, fork, crash, manual, hooks (K-8, K-9, K-12..K-14)", () => {
  // after the compaction the model recalls the cited range, then a range outside any compaction
  const recallState = { n: 0 }
  const recaller: Scripted.Responder = (request, call) => {
    const cited = /\[#(\d+)-#(\d+)\]/.exec(firstText(request))
    if (firstText(request).startsWith("[Summary") && cited !== null && recallState.n < 2) {
      recallState.n++
      const args = recallState.n === 1 ? { from: Number(cited[1]), to: Number(cited[2]) } : { from: 900_000, to: 900_001 }
      return Kit.sized(() => Scripted.call(`r${recallState.n}`, "recall", JSON.stringify(args)))(request, call)
    }
    return Kit.bigCall(`b${call}`, 8_000)(request, call)
  }
  const recall = Kit.scenario(Array.from({ length: 14 }, () => recaller))
  it.effect("AC-115 [K-8 K-9] citations outside the range are dropped and counted; recall of a cited range returns the original content; outside → tool error", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {} })
      yield* t.prompt("audit the repository")
      const events = yield* t.events
      const summary = ofType(events, "compact/summary")[0]!
      expect(summary.data.droppedCitations).toBe(1)
      expect(summary.data.rawOutput).toContain("#900000")
      const [first, last] = summary.data.shadowedSeqs
      for (const [a, b] of Array.from(summary.data.summary.matchAll(/\[#(\d+)(?:-#(\d+))?\]/g), (m) => [Number(m[1]), Number(m[2] ?? m[1])])) {
        expect(a).toBeGreaterThanOrEqual(first)
        expect(b).toBeLessThanOrEqual(last)
      }
      const results = ofType(events, "tool/result")
      const ok = results.find((e) => e.data.callId === "r1")!
      expect(ok.data.isError).toBe(false)
      const recalled = ContentBlock.flattenText(ok.data.content)
      // the original projected content of a shadowed tool result and of the opening prompt
      const original = ofType(events, "tool/result").find((e) => e.seq >= first && e.seq <= last && e.surfaceOp === "append")!
      expect(recalled).toContain(ContentBlock.flattenText(original.data.content).slice(0, 2_000))
      expect(recalled).toContain(`#${first} user:\naudit the repository`)
      const bad = results.find((e) => e.data.callId === "r2")!
      expect(bad.data.isError).toBe(true)
      expect(ContentBlock.flattenText(bad.data.content)).toMatch(/not inside a compacted range/)
      yield* Kit.verify(t.agent.session, yield* t.requests)
    }).pipe(Effect.provide(Kit.layer(recall.script, 32_000))))

  const fork = Kit.scenario([...calls(3, 8_000, "a"), Kit.say("turn one done"), ...calls(10, 8_000, "b")])
  it.effect("AC-116 [K-13] a fork at a turn before a compaction sees the uncompacted history", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {} })
      yield* t.prompt("turn one")
      yield* t.prompt("turn two")
      const events = yield* t.events
      expect(ofType(events, "compact/summary")).toHaveLength(1)
      const boundary = ofType(events, "turn/end")[0]!.seq
      const child = yield* Agent.make({
        provider: "scripted",
        model: "test",
        compaction: {},
        session: { _tag: "Fork", from: t.agent.id, boundary }
      })
      yield* child.send([ContentBlock.text("child")])
      yield* child.whenIdle
      const mine = (yield* t.requests).filter((r) => r.sessionId === child.id)
      expect(mine.length).toBeGreaterThan(0)
      const texts = mine[0]!.messages.map((m) => ContentBlock.flattenText(m.content.flatMap((b) => b.type === "tool-result" ? b.content : [b])))
      expect(texts.some((x) => x.startsWith("[Summary"))).toBe(false)
      for (const id of ["a1", "a2", "a3"]) expect(texts.some((x) => x.startsWith(`${id}: lorem`))).toBe(true)
      // the parent log keeps every shadowed event (nothing deleted)
      for (const id of ["b1", "b2"]) expect(ofType(events, "tool/result").some((e) => e.data.callId === id)).toBe(true)
    }).pipe(Effect.provide(Kit.layer(fork.script, 32_000))))

  it.effect("AC-114 [K-12] a crash between compact/start and compact/end: reopen repairs the tail, the surface is the pre-compaction one, the next turn compacts and succeeds", () =>
    Effect.gen(function*() {
      // 1. the first process: its summary request never answers; the log as a SIGKILL leaves it
      //    (write-through: every committed event) is captured once compact/start is committed
      const hanging = Kit.scenario(calls(12, 8_000), { summarize: () => [Scripted.forever] })
      const snapshot = yield* Effect.scoped(Effect.gen(function*() {
        const t = yield* TestKit.agent({ compaction: {} })
        yield* t.agent.send([ContentBlock.text("work")])
        yield* LoopKit.whenEvent(t.agent.session, (e) => e.type === "compact/start")
        return { header: t.agent.session.header, events: yield* t.events }
      })).pipe(Effect.provide(Kit.layer(hanging.script, 32_000)))
      expect(snapshot.events[snapshot.events.length - 1]?.type).toBe("compact/start")
      // 2. the stored log of the killed process
      const storage = Memory.makeStorage()
      const backend = yield* Memory.make(storage)
      yield* backend.create(snapshot.header)
      yield* backend.append(snapshot.header.id, snapshot.events)
      // 3. reopen and continue
      const next = Kit.scenario([Kit.say("resumed")])
      yield* Effect.scoped(Effect.gen(function*() {
        const a = yield* Agent.make({
          provider: "scripted",
          model: "test",
          compaction: {},
          session: { _tag: "Resume", id: snapshot.header.id }
        })
        const reopened = yield* a.session.events
        const repaired = reopened.slice(snapshot.events.length)
        expect(repaired.map((e) => e.type)).toEqual(["compact/end", "turn/end"])
        const end = repaired[0] as Extract<SessionEvent, { type: "compact/end" }>
        expect(end.data.error?.code).toBe("INTERRUPTED")
        expect(yield* a.session.deriveMessages).toEqual(
          Projection.deriveMessages(Surface.foldSurface(snapshot.events).nodes)
        )
        yield* a.send([ContentBlock.text("continue")])
        yield* a.whenIdle
        const after = (yield* a.session.events).slice(reopened.length)
        const summaries = ofType(after, "compact/summary")
        expect(summaries).toHaveLength(1)
        expect(summaries[0]!.data.summary).not.toBe("")
        expect(ofType(after, "compact/end")[0]!.data.error).toBeUndefined()
        expect(ofType(after, "turn/end")[0]!.data.reason).toEqual({ kind: "completed" })
        yield* Kit.verify(a.session, yield* Scripted.requests, reopened.length)
      })).pipe(Effect.provide(Kit.layer(next.script, 32_000, { persistence: Memory.layerWith(storage) })))
    }))

  const manual = Kit.scenario([...calls(3, 8_000), Kit.say("first done"), Kit.say("second done")])
  it.effect("K-3c K-14 manual compaction while idle opens its own turn; pre-compact adds instructions, post-compact sees the summary and injects", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      const seen: Array<string | undefined> = []
      yield* hooks.preCompact.register((input, next) =>
        next({ ...input, instructions: [...input.instructions, "Mention the parser."] }))
      const t = yield* TestKit.agent({ compaction: { retain: 0.05 } })
      yield* hooks.postCompact.register((input) =>
        Effect.gen(function*() {
          seen.push(input.summary)
          yield* t.agent.inject([ContentBlock.text("post-compact note")])
        })
      )
      yield* t.prompt("first")
      yield* t.agent.compact({ instructions: "Focus on the files." })
      const events = yield* t.events
      const turns = ofType(events, "turn/start")
      expect(turns[1]!.data.trigger).toEqual({ kind: "compaction", source: { kind: "user" } })
      const summary = ofType(events, "compact/summary")[0]!
      expect(summary.data.instruction).toContain("Focus on the files.")
      expect(summary.data.instruction).toContain("Mention the parser.")
      expect(ofType(events, "compact/start")[0]!.data.trigger).toBe("manual")
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatch(/^\[Summary/)
      yield* t.prompt("second")
      const requests = yield* t.requests
      const last = requests[requests.length - 1]!
      expect(firstText(last)).toMatch(/^\[Summary/)
      expect(last.messages.some((m) => ContentBlock.flattenText(m.content) === "post-compact note")).toBe(true)
      yield* Kit.verify(t.agent.session, requests)
    }).pipe(Effect.provide(Kit.layer(manual.script, 32_000))))

  const vetoed = Kit.scenario(calls(8, 8_000))
  it.effect("K-14 pre-compact may veto an automatic compaction (nothing logged)", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.preCompact.register(() => Effect.succeed(Hooks.PreCompactDecision.Veto({ reason: "not now" })))
      const t = yield* TestKit.agent({ compaction: {} })
      yield* t.prompt("go")
      expect(ofType(yield* t.events, "compact/start")).toEqual([])
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
    }).pipe(Effect.provide(Kit.layer(vetoed.script, 32_000))))

  const runaway = Kit.scenario(Array.from({ length: 10 }, (_, i) => Kit.bigCall(`m${i}`, 10)))
  it.effect("--max-steps: a runaway tool loop ends max-steps, logged, and the next prompt continues", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ maxSteps: 3 })
      yield* t.prompt("loop")
      expect(yield* t.turnEnds).toEqual([{ kind: "max-steps", steps: 3 }])
      const events = yield* t.events
      expect(ofType(events, "tool/result")).toHaveLength(3)
      yield* t.prompt("again")
      expect((yield* t.turnEnds)[1]).toEqual({ kind: "max-steps", steps: 3 })
      expect((yield* t.requests)[3]!.messages.length).toBeGreaterThan(6)
    }).pipe(Effect.provide(Kit.layer(runaway.script, 32_000))))

  it.effect("K-1 an unknown model runs on the default 128k window, announced once by a model/notice event", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {} })
      yield* t.prompt("one")
      yield* t.prompt("two")
      const notices = ofType(yield* t.events, "model/notice")
      expect(notices).toHaveLength(1)
      expect(notices[0]!.data).toMatchObject({ provider: "scripted", model: "test", contextWindow: 128_000 })
    }).pipe(Effect.provide(TestKit.layer({ script: [Kit.say("a"), Kit.say("b")] }))))
})
