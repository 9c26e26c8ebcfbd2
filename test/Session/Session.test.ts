import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Arbitrary from "effect/Arbitrary"
import * as Fiber from "effect/Fiber"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type { SessionId } from "../../src/Llm/Message.js"
import * as Projection from "../../src/Session/Projection.js"
import * as Session from "../../src/Session/Session.js"
import type { AppendInput, SessionEvent } from "../../src/Session/SessionEvent.js"
import {
  appendAll,
  appendRaw,
  assistant,
  call,
  chunk,
  context,
  failsWith,
  requestHeader,
  stepEnd,
  stepStart,
  steering,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage
} from "../support/sessionInputs.js"

const basic = (): ReadonlyArray<AppendInput> => [
  turnStart(1),
  userMessage("u0"),
  stepStart(1, 1),
  assistant(1, 1, [text("a1")]),
  stepEnd(1, 1),
  turnEnd(1)
]

/** A fresh session seeded with the log derives the same messages (S-15). */
const scratch = (events: ReadonlyArray<SessionEvent>) =>
  Effect.flatMap(Session.make({ id: "scratch", seed: events }), (s) => s.deriveMessages)

describe("Session", () => {
  it.effect("append assigns contiguous seqs and time from the Clock; returns the stored event", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* TestClock.adjust("5 seconds")
      const first = yield* s.append(turnStart(1))
      yield* TestClock.adjust("1 second")
      const second = yield* s.append(userMessage("hi"))
      expect([first.seq, first.time, second.seq, second.time]).toEqual([0, 5000, 1, 6000])
      expect(yield* s.nextSeq).toBe(2)
      expect(yield* s.events).toEqual([first, second])
      expect(s.header).toEqual({ version: 0, id: "s", createdAt: 0 })
    }))

  it.effect("AC-31 [S-3] non-JSON data (bigint, function, Infinity, sparse array, Map) → fails, log unchanged", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* appendAll(s, [turnStart(1)])
      const before = yield* s.events
      const bad: ReadonlyArray<unknown> = [1n, () => 1, Infinity, [1, , 3], new Map([["a", 1]])]
      for (const value of bad) {
        const e = yield* failsWith(appendRaw(s, { type: "x/ext", data: { value } }), "INVALID_EVENT")
        expect(e.rule).toBe("S-3")
        expect(e.message).not.toContain("S-3")
        yield* failsWith(appendRaw(s, { type: "context/message", data: { content: [text("c")], source: { kind: "user" }, meta: value }, surfaceOp: "append" }), "INVALID_EVENT")
      }
      expect(yield* s.events).toEqual(before)
      expect(yield* s.nextSeq).toBe(1)
      expect(yield* s.deriveMessages).toEqual([])
    }))

  it.effect("AC-32 [S-5,S-6,S-7] surface intent rules", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* appendAll(s, [turnStart(1), userMessage("u0")])
      const u = userMessage("x")
      const noIntent = { type: u.type, data: u.data }
      yield* failsWith(appendRaw(s, noIntent), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...turnStart(1), surfaceOp: "append" }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...turnStart(1), sourceEventSeqs: [0] }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, surfaceOp: "invalid" }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, surfaceOp: { op: "replace", start: -1, end: 1 }, sourceEventSeqs: [1] }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, surfaceOp: { op: "replace", start: 1, end: 1, extra: true }, sourceEventSeqs: [1] }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, sourceEventSeqs: [0, -1] }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, sourceEventSeqs: [0, 0] }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, sourceEventSeqs: [2] }), "INVALID_EVENT") // own seq is 2
      yield* failsWith(appendRaw(s, { ...u, sourceEventSeqs: [0.5] }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { ...u, sourceEventSeqs: [] }), "INVALID_EVENT")
      expect(yield* s.nextSeq).toBe(2)
      const ok = yield* s.append(assistant(1, 1, [text("a")], { surfaceOp: "append", sourceEventSeqs: [] }))
      expect(ok.sourceEventSeqs).toEqual([])
      const withSources = yield* s.append(userMessage("y", { surfaceOp: "append", sourceEventSeqs: [0, 1] }))
      expect(withSources.sourceEventSeqs).toEqual([0, 1])
    }))

  it.effect("AC-33 [S-8] replace u0..a1 with sources [u0,a1] → [new, t2], generation 1", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      // seqs: 0 turn/start, 1 u0, 2 a1, 3 t2
      yield* appendAll(s, [turnStart(1), userMessage("u0"), assistant(1, 1, [text("a1"), call("c1")]), toolResult(1, 1, "c1", "t2")])
      const missing = context("summary", undefined, { surfaceOp: { op: "replace", start: 1, end: 2 }, sourceEventSeqs: [1] })
      yield* failsWith(s.append(missing), "INVALID_EVENT")
      const after = context("summary", undefined, { surfaceOp: { op: "replace", start: 2, end: 1 }, sourceEventSeqs: [1, 2] })
      yield* failsWith(s.append(after), "INVALID_EVENT")
      const unknown = context("summary", undefined, { surfaceOp: { op: "replace", start: 0, end: 2 }, sourceEventSeqs: [0, 1, 2] })
      yield* failsWith(s.append(unknown), "INVALID_EVENT")
      const absent = context("summary", undefined, { surfaceOp: { op: "replace", start: 1, end: 2 } })
      yield* failsWith(s.append(absent), "INVALID_EVENT")
      expect((yield* s.surface).replaceGeneration).toBe(0)

      const replacing = yield* s.append(context("summary", undefined, { surfaceOp: { op: "replace", start: 1, end: 2 }, sourceEventSeqs: [1, 2] }))
      const surface = yield* s.surface
      expect(surface.nodes.map((n) => n.seq)).toEqual([replacing.seq, 3])
      expect(surface.replaceGeneration).toBe(1)
      expect((yield* s.events).length).toBe(5) // shadowed events stay in the log
      const messages = yield* s.deriveMessages
      expect(messages.map((m) => m.content)).toEqual([[text("summary")], [{ type: "tool-result", toolCallId: "c1", content: [text("t2")], isError: false }]])

      // start = end replaces one node
      const single = yield* s.append(userMessage("again", { surfaceOp: { op: "replace", start: 3, end: 3 }, sourceEventSeqs: [3] }))
      const surface2 = yield* s.surface
      expect(surface2.nodes.map((n) => n.seq)).toEqual([replacing.seq, single.seq])
      expect(surface2.replaceGeneration).toBe(2)
    }))

  it.effect("AC-34 [S-4] caller mutation after append has no effect; stored event frozen; earlier events array never grows", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      const content = [{ type: "text" as const, text: "original" }]
      const data = { content, source: { kind: "user" as const } }
      const input = { type: "user/message" as const, data, surfaceOp: "append" as const }
      const stored = yield* s.append(input)
      content[0] = { type: "text", text: "mutated" }
      content.push({ type: "text", text: "more" })
      expect(stored.data).toEqual({ content: [text("original")], source: { kind: "user" } })
      expect(Object.isFrozen(stored)).toBe(true)
      expect(Object.isFrozen(stored.data)).toBe(true)
      expect(Object.isFrozen((stored.data as { content: unknown }).content)).toBe(true)
      expect(stored.data).not.toBe(data)
      const earlier = yield* s.events
      expect(Object.isFrozen(earlier)).toBe(true)
      yield* s.append(userMessage("next"))
      expect(earlier.length).toBe(1)
      expect((yield* s.events).length).toBe(2)
      expect(() => (earlier as Array<SessionEvent>).push(stored)).toThrow()
      const messages = yield* s.deriveMessages
      expect(messages[0]?.content).toEqual([text("original")])
    }))

  it.effect("AC-35 [S-11] invalid seeds are rejected; unknown type with data null accepted; valid seed → same derivation and next seq", () =>
    Effect.gen(function*() {
      const ok = (type: string, seq: number, data: unknown, extra: Record<string, unknown> = {}) => ({ type, seq, time: 1, data, ...extra })
      const user0 = ok("user/message", 0, { content: [text("u")], source: { kind: "user" } }, { surfaceOp: "append" })
      const bad: ReadonlyArray<ReadonlyArray<unknown>> = [
        [ok("turn/start", 0, { turn: 1, trigger: { kind: "message", source: { kind: "user" } } }), ok("x/y", 2, null)], // gap
        [{ ...ok("x/y", 0, null), extra: 1 }], // extra key
        [ok("x/y", 0.5, null)],
        [ok("x/y", -1, null)],
        [{ ...ok("x/y", 0, null), time: 1.5 }],
        [{ ...ok("x/y", 0, null), time: -1 }],
        [{ type: "x/y", seq: 0, time: 1 }], // data missing
        [ok("user/message", 0, { content: [text("u")], source: { kind: "user" } })], // surface event without marker
        [ok("turn/start", 0, { turn: 1, trigger: { kind: "message", source: { kind: "user" } } }, { surfaceOp: "append" })],
        [ok("request/header", 0, { header: { config: { provider: "", model: "m" } }, reason: "initial" })],
        [ok("request/header", 0, { header: { config: { model: "m" } }, reason: "initial" })],
        [ok("assistant/message", 0, { turn: 1, step: 1, content: [], provenance: { provider: "p", model: "" } }, { surfaceOp: "append" })],
        [ok("assistant/message", 0, { turn: 1, step: 1, content: [] }, { surfaceOp: "append" })],
        [{ ...ok("x/y", 0, null), type: 5 }]
      ]
      for (const seed of bad) yield* failsWith(Session.make({ id: "s", seed }), "INVALID_EVENT")
      const unknown = yield* Session.make({ id: "s", seed: [ok("x-plugin/note", 0, null)] })
      expect((yield* unknown.events)[0]).toEqual({ type: "x-plugin/note", seq: 0, time: 1, data: null })

      const live = yield* Session.make({ id: "live" })
      yield* appendAll(live, [...basic(), turnStart(2), userMessage("u1"), { type: "x-plugin/note", data: { n: 1 } } as never])
      const log = yield* live.events
      const seeded = yield* Session.make({ id: "seeded", seed: log })
      expect(yield* seeded.deriveMessages).toEqual(yield* live.deriveMessages)
      expect(yield* seeded.nextSeq).toBe(log.length)
      expect(yield* seeded.events).toEqual(log)
      expect(yield* Session.make({ id: "s2", seed: [user0] }).pipe(Effect.flatMap((x) => x.nextSeq))).toBe(1)
    }))

  it.effect("AC-36 [S-9] request/header-delta and reason fallback are rejected at append and seed", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* failsWith(appendRaw(s, { type: "request/header-delta", data: {} }), "LEGACY_EVENT")
      const fallback = { type: "request/header", data: { header: { config: { provider: "p", model: "m" } }, reason: "fallback" } }
      yield* failsWith(appendRaw(s, fallback), "LEGACY_EVENT")
      expect(yield* s.nextSeq).toBe(0)
      yield* failsWith(Session.make({ id: "t", seed: [{ type: "request/header-delta", seq: 0, time: 0, data: {} }] }), "LEGACY_EVENT")
      yield* failsWith(Session.make({ id: "t", seed: [{ ...fallback, seq: 0, time: 0 }] }), "LEGACY_EVENT")
    }))

  it.effect("AC-37 [S-15] cached derivation = scratch derivation after every append and after a replace; new array per call", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      const inputs: ReadonlyArray<AppendInput> = [
        turnStart(1),
        userMessage("u0"),
        stepStart(1, 1),
        chunk(1, 1, "a"),
        assistant(1, 1, [text("a"), call("c1")]),
        toolCall(1, 1, "c1"),
        toolResult(1, 1, "c1", "r"),
        context("ctx", { k: 1 }),
        steering(1, "steer"),
        assistant(1, 1, []),
        stepEnd(1, 1),
        context("summary", undefined, { surfaceOp: { op: "replace", start: 1, end: 6 }, sourceEventSeqs: [1, 4, 6] }),
        userMessage("u1"),
        turnEnd(1)
      ]
      for (const input of inputs) {
        yield* s.append(input)
        const cached = yield* s.deriveMessages
        expect(cached).toEqual(yield* scratch(yield* s.events))
      }
      expect((yield* s.surface).replaceGeneration).toBe(1)
      const a = yield* s.deriveMessages
      const b = yield* s.deriveMessages
      expect(a).not.toBe(b)
      expect(a).toEqual(b)
      a.forEach((m, i) => expect(m).toBe(b[i])) // shared immutable messages
      expect(Object.isFrozen(a[0])).toBe(true)
    }))

  const nat50 = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 50 })))
  // "replace" twice as likely as any other kind, as before
  const kinds = ["user", "context", "steering", "assistant", "assistant-empty", "tool-result", "chunk", "ext", "replace", "replace"] as const
  const command = Arbitrary.all({
    kind: Arbitrary.map(
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: kinds.length - 1 }))),
      (i) => kinds[i]!
    ),
    a: nat50,
    b: nat50,
    t: Arbitrary.schema(Schema.String.check(Schema.isMaxLength(8)))
  })

  it.effect.prop(
    "AC-37 [S-15] property: for random valid logs with replaces, the cached derivation after every append = a fresh seeded derivation",
    [Arbitrary.array(command, { minLength: 1, maxLength: 40 })],
    ([commands]) =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "prop" })
        for (const c of commands) {
          const nodes = (yield* s.surface).nodes
          let input: AppendInput = userMessage(c.t)
          switch (c.kind) {
            case "user":
              input = userMessage(c.t)
              break
            case "context":
              input = context(c.t, { a: c.a })
              break
            case "steering":
              input = steering(1, c.t)
              break
            case "assistant":
              input = assistant(1, 1, [text(c.t), call(`c${c.a}`)])
              break
            case "assistant-empty":
              input = assistant(1, 1, [], { surfaceOp: "append", sourceEventSeqs: [] })
              break
            case "tool-result":
              input = toolResult(1, 1, `c${c.a}`, c.t, c.b % 2 === 0)
              break
            case "chunk":
              input = chunk(1, 1, c.t)
              break
            case "ext":
              input = { type: "x-plugin/note", data: { t: c.t } } as never
              break
            case "replace": {
              if (nodes.length === 0) break
              const p1 = Math.min(c.a % nodes.length, c.b % nodes.length)
              const p2 = Math.max(c.a % nodes.length, c.b % nodes.length)
              const shadowed = nodes.slice(p1, p2 + 1).map((n) => n.seq)
              const op = { op: "replace" as const, start: shadowed[0] as number, end: shadowed[shadowed.length - 1] as number }
              input = c.a % 2 === 0
                ? context(`summary ${c.t}`, undefined, { surfaceOp: op, sourceEventSeqs: shadowed })
                : assistant(1, 1, c.b % 3 === 0 ? [] : [text(c.t)], { surfaceOp: op, sourceEventSeqs: shadowed })
              break
            }
          }
          yield* s.append(input)
          expect(yield* s.deriveMessages).toEqual(yield* scratch(yield* s.events))
        }
      }),
    { arbitrary: { runs: 40 } }
  )

  it.effect("AC-42 [S-16,S-17] injection turn then message turn → turns 1 and 2; a seed with 3 turns → next turn 4", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      expect(yield* s.nextTurn).toBe(1)
      yield* appendAll(s, [turnStart(yield* s.nextTurn, "injection"), context("inject"), turnEnd(1)])
      yield* appendAll(s, [turnStart(yield* s.nextTurn, "message"), userMessage("send"), turnEnd(2)])
      const turns = (yield* s.events).flatMap((e) => e.type === "turn/start" ? [[e.data.turn, e.data.trigger.kind]] : [])
      expect(turns).toEqual([[1, "injection"], [2, "message"]])

      const seedSource = yield* Session.make({ id: "src" })
      for (let t = 1; t <= 3; t++) yield* appendAll(seedSource, [turnStart(t), userMessage(`p${t}`), turnEnd(t)])
      const seeded = yield* Session.make({ id: "seeded", seed: yield* seedSource.events })
      expect(yield* seeded.nextTurn).toBe(4)
    }))

  it.effect("[S-18,S-19] requestHeader is the latest logged header, canonical", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      expect(yield* s.requestHeader).toBeUndefined()
      yield* s.append(requestHeader({ config: { provider: "p", model: "m" }, system: "", tools: [], messagePrefix: [] }))
      expect(yield* s.requestHeader).toEqual({ config: { provider: "p", model: "m" } })
      yield* s.append(requestHeader({ config: { provider: "p", model: "m2" }, system: "sys" }, "change"))
      expect(yield* s.requestHeader).toEqual({ config: { provider: "p", model: "m2" }, system: "sys" })
      const seeded = yield* Session.make({ id: "t", seed: yield* s.events })
      expect(yield* seeded.requestHeader).toEqual({ config: { provider: "p", model: "m2" }, system: "sys" })
    }))

  it.effect("[S-1] known payloads are validated; unknown types keep any JSON data verbatim", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* failsWith(appendRaw(s, { type: "turn/start", data: { turn: "one" } }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { type: "assistant/chunk", data: { turn: 1, step: 1, chunk: { type: "nope" } } }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { type: "assistant/message", data: { turn: 1, step: 1, content: [], provenance: { provider: "", model: "m" } }, surfaceOp: "append" }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { type: "", data: null }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { type: "x/y", data: null, seq: 4 }), "INVALID_EVENT")
      yield* failsWith(appendRaw(s, { type: "x/y" }), "INVALID_EVENT")
      const data = { nested: [1, "two", null, { deep: true }], unicode: "é😀" }
      const ext = yield* appendRaw(s, { type: "x-plugin/note", data })
      expect(ext.data).toEqual(data)
      // open unions: unknown turn-end reason, extension block and source
      yield* appendRaw(s, { type: "turn/end", data: { turn: 1, reason: { kind: "x-custom", detail: 1 } } })
      yield* appendRaw(s, { type: "user/message", data: { content: [{ type: "x-citation", url: "u" }], source: { kind: "x-bot", id: 1 } }, surfaceOp: "append" })
      expect(yield* s.nextSeq).toBe(3)
    }))

  it.effect("[S-12] invalid headers are rejected; a bare session gets a synthesized header", () =>
    Effect.gen(function*() {
      yield* failsWith(Session.make({ header: { version: 1 as 0, id: "x" as SessionId, createdAt: 0 } }), "INVALID_EVENT")
      yield* failsWith(Session.make({ header: { version: 0, id: "x" as SessionId, createdAt: 0, cwd: "relative/dir" } }), "INVALID_EVENT")
      yield* failsWith(Session.make({ header: { version: 0, id: "x" as SessionId, createdAt: 0, seedLength: -1 } }), "INVALID_EVENT")
      const bare = yield* Session.make()
      expect(bare.header.version).toBe(0)
      expect(bare.id.length).toBeGreaterThan(0)
      expect(Object.isFrozen(bare.header)).toBe(true)
    }))

  describe("observers and changes [S-10]", () => {
    it.effect("observers run after commit in seq order; a failing observer is contained", () =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "s" })
        const seen = yield* Ref.make<Array<string>>([])
        yield* s.observe((e) =>
          Effect.flatMap(s.nextSeq, (next) => Ref.update(seen, (xs) => [...xs, `a${e.seq}/next${next}`]))
        )
        yield* s.observe(() => Effect.fail("boom"))
        yield* s.observe(() => Effect.die("defect"))
        yield* s.observe((e) => Ref.update(seen, (xs) => [...xs, `b${e.seq}`]))
        yield* appendAll(s, [turnStart(1), userMessage("u")])
        expect(yield* Ref.get(seen)).toEqual(["a0/next1", "b0", "a1/next2", "b1"])
        expect(yield* s.nextSeq).toBe(2)
      }))

    it.effect("concurrent appends are serialized; every observer sees every event in seq order", () =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "s" })
        const seen = yield* Ref.make<Array<number>>([])
        yield* s.observe((e) => Effect.andThen(Effect.yieldNow, Ref.update(seen, (xs) => [...xs, e.seq])))
        yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => s.append({ type: "x/n", data: i } as never), {
          concurrency: "unbounded"
        })
        expect(yield* Ref.get(seen)).toEqual(Array.from({ length: 20 }, (_, i) => i))
      }))

    it.effect("an append from inside an observer is rejected with REENTRANT_APPEND; later appends work", () =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "s" })
        const codes = yield* Ref.make<Array<string>>([])
        yield* s.observe((e) =>
          e.type === "turn/start"
            ? s.append(userMessage("from observer")).pipe(
              Effect.catch((err) => Ref.update(codes, (xs) => [...xs, err.code]))
            )
            : Effect.void
        )
        yield* s.append(turnStart(1))
        expect(yield* Ref.get(codes)).toEqual(["REENTRANT_APPEND"])
        expect(yield* s.nextSeq).toBe(1)
        yield* s.append(userMessage("after"))
        expect(yield* s.nextSeq).toBe(2)
        // another session may be appended from an observer
        const other = yield* Session.make({ id: "other" })
        yield* s.observe((e) =>
          (e.type as string) === "x/mirror" ? Effect.asVoid(other.append({ type: "x/mirrored", data: e.seq } as never)) : Effect.void
        )
        yield* s.append({ type: "x/mirror", data: null } as never)
        expect(yield* other.nextSeq).toBe(1)
      }))

    it.effect("[S-10] an append from a fiber an observer forks is rejected while the publication runs; allowed once it ended", () =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "s" })
        const codes = yield* Ref.make<Array<string>>([])
        const release = yield* Deferred.make<void>()
        const late: Array<Fiber.Fiber<SessionEvent, unknown>> = []
        yield* s.observe((e) =>
          e.type !== "turn/start" ? Effect.void : Effect.gen(function*() {
            // joined during the publication: it inherits the publication and is refused (not deadlocked)
            const fork = yield* Effect.forkChild(
              s.append(userMessage("from a fork")).pipe(
                Effect.catch((err) => Ref.update(codes, (xs) => [...xs, err.code])),
                Effect.asVoid
              )
            )
            yield* Fiber.join(fork)
            // forked now, appends after the publication ended: allowed
            late.push(yield* Effect.forkDetach(Effect.andThen(Deferred.await(release), s.append(userMessage("later")))))
          })
        )
        yield* s.append(turnStart(1))
        expect(yield* Ref.get(codes)).toEqual(["REENTRANT_APPEND"])
        yield* Deferred.succeed(release, undefined)
        const appended = yield* Fiber.join(late[0]!)
        expect(appended.seq).toBe(1)
        expect(yield* s.nextSeq).toBe(2)
      }))

    it.effect("observers are unregistered when their scope closes", () =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "s" })
        const count = yield* Ref.make(0)
        yield* Effect.scoped(s.observe(() => Ref.update(count, (n) => n + 1)))
        yield* s.append(turnStart(1))
        expect(yield* Ref.get(count)).toBe(0)
      }))

    it.effect("changes and subscribe deliver committed events in seq order; seeding publishes nothing", () =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "s", seed: [{ type: "x/seed", seq: 0, time: 0, data: null }] })
        const queue = yield* s.subscribe
        const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(s.changes, 3)))
        yield* Effect.yieldNow
        yield* Effect.sleep("10 millis").pipe(Effect.forkChild, Effect.andThen(TestClock.adjust("10 millis")))
        yield* failsWith(appendRaw(s, { type: "user/message", data: null }), "INVALID_EVENT")
        yield* appendAll(s, [turnStart(1), userMessage("u"), turnEnd(1)])
        const fromQueue = yield* PubSub.takeUpTo(queue, Number.POSITIVE_INFINITY)
        expect(fromQueue.map((e) => e.seq)).toEqual([1, 2, 3])
        const fromStream = yield* Fiber.join(fiber)
        expect(fromStream.map((e) => e.seq)).toEqual([1, 2, 3])
      }))
  })

  it.effect("[S-14] deriveMessages uses Projection per node", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      const events = yield* appendAll(s, basic())
      expect(yield* s.deriveMessages).toEqual(Projection.deriveMessages(events.filter((e) => e.surfaceOp !== undefined)))
    }))
})
