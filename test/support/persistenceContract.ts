/**
 * The ONE contract suite every `SessionPersistence` backend must pass (§7, D-1..D-12, DEC-4):
 * AC-43..AC-49 and AC-51 (AC-50 belongs to the SessionStore), lock contention in this process,
 * extension event round trip, list metadata and idempotent reload.
 *
 * A {@link Subject} gives a fresh, empty storage per test and can open any number of backend
 * instances over it (a second instance = a restarted process, or a second writer). `raw` writes
 * storage directly, bypassing validation, to plant what a crash, an older version or a hand edit
 * leaves behind; `dump` returns the stored bytes/rows of a session to prove nothing was written.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { SessionId } from "../../src/Llm/Message.js"
import type { SessionError } from "../../src/Session/SessionError.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import type { Service } from "../../src/Session/SessionPersistence.js"
import { header, LogBuilder } from "./sessionLog.js"

/** A backend under test. */
export interface Subject {
  readonly name: string
  /** Fresh empty storage for one test (scoped). */
  readonly storage: Effect.Effect<Storage, unknown, Scope.Scope>
}

/** One test's storage. */
export interface Storage {
  /** A new backend instance over this storage (a restart; a second writer). */
  readonly open: Effect.Effect<Service, unknown, Scope.Scope>
  /** Writes a session directly: `headerRecord` as stored (JSONL line 1 / sessions row), then records. */
  readonly raw: (
    headerRecord: Record<string, unknown>,
    records: ReadonlyArray<Record<string, unknown>>
  ) => Effect.Effect<void, unknown>
  /** The stored form of a session (file text, or rows as JSON), to compare before/after. */
  readonly dump: (id: string) => Effect.Effect<string, unknown>
}

const id = (s: string) => s as SessionId

const failure = <A>(effect: Effect.Effect<A, SessionError>) =>
  Effect.map(Effect.result(effect), (r) => {
    if (Result.isSuccess(r)) throw new Error("expected a failure")
    return r.failure
  })

const oneTurn = () => new LogBuilder().completeTurn("first prompt line\nsecond line")

const ext = (b: LogBuilder): LogBuilder => {
  // unknown extension types inside a turn, with arbitrary JSON data (V-2)
  b.turnStart(b.nextTurn)
  b.push("x-plugin/note", { nested: [1, "two", null, { deep: true, n: -1.5 }], unicode: "é😀\u2028" })
  b.push("x-plugin/empty", null)
  b.push("x-plugin/marker", { turn: b.nextTurn - 1 })
  b.turnEnd(b.nextTurn - 1)
  return b
}

/** Runs the contract suite against `subject`. */
export const contract = (subject: Subject): void => {
  describe(`SessionPersistence contract: ${subject.name}`, () => {
    it.live("AC-43 [D-1] create + append one turn → load returns the header fields and identical events", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = { ...header("s-43", "/work/project"), parentSession: id("parent"), seedLength: 0 }
        yield* p.create(h)
        const log = oneTurn()
        yield* p.append(h.id, log.events)
        const same = yield* p.load(h.id)
        expect(same.header).toEqual(h)
        expect(same.events).toEqual(log.events)
        // a restarted process sees the same thing
        const q = yield* storage.open
        const loaded = yield* q.load(h.id)
        expect(loaded.header).toEqual(h)
        expect(loaded.events).toEqual(log.events)
        expect(loaded.repaired).toEqual([])
        expect(loaded.truncated).toBe(0)
        expect(loaded.events.filter((e) => e.type === "assistant/chunk").length).toBeGreaterThan(0)
      }))

    it.live("AC-44 [D-4] stored open turn → load adds step/end, turn/end interrupted; later append continues; reload identical", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("s-44")
        yield* p.create(h)
        const b = oneTurn()
        b.turnStart(1).user("again").stepStart(1, 0)
        yield* p.append(h.id, b.events)
        const q = yield* storage.open
        const loaded = yield* q.load(h.id)
        const n = b.events.length
        expect(loaded.repaired.map((e) => [e.type, e.seq, e.data])).toEqual([
          ["step/end", n, { turn: 1, step: 0 }],
          ["turn/end", n + 1, { turn: 1, reason: { kind: "interrupted" } }]
        ])
        expect(loaded.events.map((e) => e.seq)).toEqual([...Array(n + 2).keys()])
        expect(loaded.repaired.every((e) => e.time === b.events[n - 1]!.time)).toBe(true)
        // the repair is durable: a third instance loads it without repairing again
        const r = yield* (yield* storage.open).load(h.id)
        expect(r.events).toEqual(loaded.events)
        expect(r.repaired).toEqual([])
        // later appends continue after the closers
        const next = new LogBuilder(b.time + 10, loaded.events).completeTurn("after repair")
        yield* q.append(h.id, next.from(n + 2))
        const again = yield* (yield* storage.open).load(h.id)
        expect(again.events).toEqual(next.events)
        expect(again.repaired).toEqual([])
        const twice = yield* (yield* storage.open).load(h.id)
        expect(twice.events).toEqual(again.events)
      }))

    it.live("AC-45 [D-4,S-23] stored unanswered tool call → synthetic INTERRUPTED result with the same call id before the closers", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("s-45", "/tmp/x")
        yield* p.create(h)
        const b = new LogBuilder()
        b.turnStart(0).user("run it").stepStart(0, 0)
        b.assistant(0, 0, "", [{ id: "call_a", name: "bash", args: "{}" }, { id: "call_b", name: "read", args: "{}" }])
        const callSeq = b.toolCall(0, 0, "call_a", "bash", "{}")
        yield* p.append(h.id, b.events)
        const loaded = yield* (yield* storage.open).load(h.id)
        expect(loaded.repaired.map((e) => e.type)).toEqual(["tool/result", "tool/result", "step/end", "turn/end"])
        const [ra, rb] = loaded.repaired as ReadonlyArray<SessionEvent & { data: Record<string, unknown> }>
        expect(ra!.data["callId"]).toBe("call_a")
        expect(ra!.data["isError"]).toBe(true)
        expect(ra!.data["error"]).toEqual({ name: "InterruptedError", code: "INTERRUPTED" })
        expect(ra!.sourceEventSeqs).toEqual([callSeq])
        expect(ra!.surfaceOp).toBe("append")
        expect(rb!.data["callId"]).toBe("call_b")
        expect(rb!.sourceEventSeqs).toBeUndefined()
        expect(loaded.events.at(-1)!.data).toEqual({ turn: 0, reason: { kind: "interrupted" } })
      }))

    it.live("AC-46 [D-1] created, never appended → not listed, not stored, id reusable; after append → listed; empty batch → no-op", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("s-46", "/w")
        yield* p.create(h)
        yield* p.append(h.id, [])
        expect(yield* p.list()).toEqual([])
        expect(yield* p.exists(h.id)).toBe(false)
        expect((yield* failure(p.load(h.id))).code).toBe("SESSION_NOT_FOUND")
        // another process may take the id: nothing was stored
        const q = yield* storage.open
        yield* q.create(h)
        // but this instance still tracks it (D-2)
        expect((yield* failure(p.create(h))).code).toBe("SESSION_ALREADY_EXISTS")
        yield* p.append(h.id, oneTurn().events)
        const listed = yield* p.list()
        expect(listed.map((s) => s.header)).toEqual([h])
        expect(yield* p.exists(h.id)).toBe(true)
        // the other instance lost the race: its first write is rejected, nothing overwritten
        const before = yield* storage.dump(h.id)
        expect((yield* failure(q.append(h.id, oneTurn().events))).code).toBe("SESSION_ALREADY_EXISTS")
        expect(yield* storage.dump(h.id)).toBe(before)
      }))

    it.live("AC-47 [D-3] re-appending stored seqs or an internal gap → rejected, nothing written; non-JSON data → rejected naming the type", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("s-47")
        yield* p.create(h)
        // rejected before the first write: nothing materializes
        const bad = oneTurn().events.map((e) => e.seq === 2 ? { ...e, data: { ...(e.data as object), n: Number.NaN } } : e)
        const nonJson = yield* failure(p.append(h.id, bad as ReadonlyArray<SessionEvent>))
        expect(nonJson.code).toBe("INVALID_EVENT")
        expect(nonJson.message).toContain(bad[2]!.type)
        expect(yield* p.exists(h.id)).toBe(false)
        const b = oneTurn()
        yield* p.append(h.id, b.events)
        const before = yield* storage.dump(h.id)
        // re-append stored seqs
        expect((yield* failure(p.append(h.id, b.events.slice(-3)))).code).toBe("OUT_OF_SEQUENCE")
        // internal gap
        const next = new LogBuilder(b.time, b.events).completeTurn("two")
        const gap = [next.events[b.events.length]!, next.events[b.events.length + 2]!]
        expect((yield* failure(p.append(h.id, gap))).code).toBe("OUT_OF_SEQUENCE")
        // starts after the end
        expect((yield* failure(p.append(h.id, next.from(b.events.length + 1)))).code).toBe("OUT_OF_SEQUENCE")
        // non-JSON in a later batch
        const nan = next.from(b.events.length).map((e, i) =>
          i === 1 ? { ...e, data: { ...(e.data as object), bad: undefined } } : e
        ) as ReadonlyArray<SessionEvent>
        const err = yield* failure(p.append(h.id, nan))
        expect(err.code).toBe("INVALID_EVENT")
        expect(err.message).toContain("user/message")
        // a surface rule (S-5) violation
        const noOp = next.from(b.events.length).map((e) => {
          if (e.type !== "user/message") return e
          const { surfaceOp: _drop, ...rest } = e
          return rest
        }) as ReadonlyArray<SessionEvent>
        expect((yield* failure(p.append(h.id, noOp))).code).toBe("INVALID_EVENT")
        expect(yield* storage.dump(h.id)).toBe(before)
        // the valid continuation is still accepted
        yield* p.append(h.id, next.from(b.events.length))
        expect((yield* (yield* storage.open).load(h.id)).events).toEqual(next.events)
      }))

    it.live("AC-48 [D-4,S-9] version ≠ 0 or a legacy event in storage → load rejects, nothing written", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const b = new LogBuilder().turnStart(0).user("x")
        const records = b.events as unknown as ReadonlyArray<Record<string, unknown>>
        yield* storage.raw({ version: 1, id: "v1", createdAt: 5 }, records)
        const p = yield* storage.open
        const v = yield* failure(p.load(id("v1")))
        expect(v.code).toBe("UNSUPPORTED_VERSION")
        const legacy = [...records, { type: "request/header-delta", seq: 2, time: 9, data: {} }]
        yield* storage.raw({ version: 0, id: "legacy", createdAt: 5 }, legacy)
        const before = yield* storage.dump("legacy")
        const l = yield* failure(p.load(id("legacy")))
        expect(l.code).toBe("LEGACY_EVENT")
        expect(l.line).toBeDefined()
        const fallback = [...records, {
          type: "request/header",
          seq: 2,
          time: 9,
          data: { header: { config: { provider: "p", model: "m" } }, reason: "fallback" }
        }]
        yield* storage.raw({ version: 0, id: "fallback", createdAt: 5 }, fallback)
        expect((yield* failure(p.load(id("fallback")))).code).toBe("LEGACY_EVENT")
        expect(yield* storage.dump("legacy")).toBe(before)
        // appending to such a session adopts it first, and so fails the same way
        expect((yield* failure(p.append(id("legacy"), [b.events[0]!]))).code).toBe("LEGACY_EVENT")
      }))

    it.live("AC-49 [D-5] a gap after the last turn/end → tolerated and truncated; a gap before a later turn/end → unloadable", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const b = oneTurn()
        const kept = b.events.length
        b.turnStart(1).user("lost").stepStart(1, 0)
        const records = b.events.map((e) => e.seq >= kept + 1 ? { ...e, seq: e.seq + 1 } : e) as unknown as ReadonlyArray<Record<string, unknown>>
        yield* storage.raw({ version: 0, id: "torn", createdAt: 1 }, records)
        const p = yield* storage.open
        const loaded = yield* p.load(id("torn"))
        // the gap ends the preserved prefix: turn/start of turn 1 is kept, the rest dropped, then repaired
        expect(loaded.truncated).toBe(2)
        expect(loaded.events.slice(0, kept + 1)).toEqual(b.events.slice(0, kept + 1))
        expect(loaded.repaired.map((e) => e.type)).toEqual(["turn/end"])
        const reload = yield* (yield* storage.open).load(id("torn"))
        expect(reload.truncated).toBe(0)
        expect(reload.events).toEqual(loaded.events)

        const c = oneTurn()
        const split = c.events.length
        c.completeTurn("second")
        const gapped = c.events.map((e) => e.seq >= 3 ? { ...e, seq: e.seq + 1 } : e) as unknown as ReadonlyArray<Record<string, unknown>>
        yield* storage.raw({ version: 0, id: "corrupt", createdAt: 1 }, gapped)
        const before = yield* storage.dump("corrupt")
        const err = yield* failure(p.load(id("corrupt")))
        expect(err.code).toBe("CORRUPT_LOG")
        expect(err.file).toBeDefined()
        expect(err.line).toBeDefined()
        expect(yield* storage.dump("corrupt")).toBe(before)
        expect(split).toBeGreaterThan(3)
      }))

    it.live("AC-51 [D-2,D-8,D-12] a stored id cannot be created again; resume appends continue seqs and turns without duplicates", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("s-51", "/a")
        yield* p.create(h)
        const b = oneTurn()
        yield* p.append(h.id, b.events)
        expect((yield* failure(p.create(h))).code).toBe("SESSION_ALREADY_EXISTS")
        const q = yield* storage.open
        expect((yield* failure(q.create(h))).code).toBe("SESSION_ALREADY_EXISTS")
        // another cwd bucket does not make the id new
        expect((yield* failure(q.create(header("s-51", "/b")))).code).toBe("SESSION_ALREADY_EXISTS")
        expect((yield* failure(q.create(header("s-51")))).code).toBe("SESSION_ALREADY_EXISTS")
        // resume: load, then continue
        const loaded = yield* q.load(h.id)
        const next = new LogBuilder(b.time, loaded.events).completeTurn("resumed")
        expect(next.events[loaded.events.length]!.data).toMatchObject({ turn: 1 })
        yield* q.append(h.id, next.from(loaded.events.length))
        const r = yield* (yield* storage.open).load(h.id)
        expect(r.events).toEqual(next.events)
        expect(new Set(r.events.map((e) => e.seq)).size).toBe(r.events.length)
      }))

    it.live("[D-3] appending to a session known only from storage adopts it (load + repair) first", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("adopt")
        yield* p.create(h)
        const b = new LogBuilder().turnStart(0).user("x").stepStart(0, 0)
        yield* p.append(h.id, b.events)
        const q = yield* storage.open
        // q never loaded it: the stored next seq is after the closers
        expect((yield* failure(q.append(h.id, new LogBuilder(0, b.events).stepEnd(0, 0).from(3)))).code).toBe(
          "OUT_OF_SEQUENCE"
        )
        const loaded = yield* q.load(h.id)
        expect(loaded.events.length).toBe(5)
        const next = new LogBuilder(b.time, loaded.events).completeTurn("y")
        yield* q.append(h.id, next.from(5))
        expect((yield* (yield* storage.open).load(h.id)).events).toEqual(next.events)
      }))

    it.live("[V-2,S-11] unknown extension event types round-trip verbatim", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("ext")
        yield* p.create(h)
        const b = ext(oneTurn())
        yield* p.append(h.id, b.events)
        const loaded = yield* (yield* storage.open).load(h.id)
        expect(loaded.events).toEqual(b.events)
        expect(loaded.repaired).toEqual([])
      }))

    it.live("[D-4] reload is idempotent", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const h = header("idem")
        yield* p.create(h)
        const b = oneTurn().turnStart(1)
        yield* p.append(h.id, b.events)
        const first = yield* p.load(h.id)
        const second = yield* p.load(h.id)
        const third = yield* (yield* storage.open).load(h.id)
        expect(first.repaired.length).toBe(1)
        expect(second.repaired).toEqual([])
        expect(second.events).toEqual(first.events)
        expect(third.events).toEqual(first.events)
        expect((yield* failure(p.load(id("nope")))).code).toBe("SESSION_NOT_FOUND")
      }))

    it.live("[D-6] list: picker metadata, most recent first; a missing root lists nothing", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        expect(yield* p.list()).toEqual([])
        const a = header("list-a", "/p/a", 100)
        const b = header("list-b", undefined, 200)
        yield* p.create(a)
        yield* p.create(b)
        const la = new LogBuilder(5_000).completeTurn("  fix the bug in parser.ts\nmore detail").completeTurn("second")
        const lb = new LogBuilder(1_000).completeTurn("x".repeat(500))
        yield* p.append(a.id, la.events)
        yield* p.append(b.id, lb.events)
        const listed = yield* (yield* storage.open).list()
        expect(listed.map((s) => s.header.id)).toEqual(["list-a", "list-b"])
        const [sa, sb] = listed
        expect(sa!.header).toEqual(a)
        expect(sa!.turns).toBe(2)
        expect(sa!.updatedAt).toBe(la.events.at(-1)!.time)
        expect(sa!.firstPrompt).toBe("fix the bug in parser.ts")
        expect(sb!.turns).toBe(1)
        expect(sb!.firstPrompt!.length).toBe(200)
        expect(sb!.firstPrompt!.endsWith("…")).toBe(true)
        // appending moves a session to the front
        const more = new LogBuilder(9_000, lb.events).completeTurn("later")
        yield* p.append(b.id, more.from(lb.events.length))
        const again = yield* p.list()
        expect(again.map((s) => [s.header.id, s.turns])).toEqual([["list-b", 2], ["list-a", 2]])
      }))

    it.live("[DEC-4] one writer per session in this process: a second lock fails SESSION_LOCKED until the first scope closes", () =>
      Effect.gen(function*() {
        const storage = yield* subject.storage
        const p = yield* storage.open
        const q = yield* storage.open
        const h = header("locked", "/l")
        yield* p.create(h)
        yield* p.append(h.id, oneTurn().events)
        const scope = yield* Scope.make()
        yield* Scope.provide(p.lock(h.id), scope)
        const again = yield* failure(Effect.scoped(p.lock(h.id)))
        expect(again.code).toBe("SESSION_LOCKED")
        expect((yield* failure(Effect.scoped(q.lock(h.id)))).code).toBe("SESSION_LOCKED")
        yield* Scope.close(scope, Exit.void)
        yield* Effect.scoped(q.lock(h.id))
        yield* Effect.scoped(p.lock(h.id))
        // a writer locks before it creates (SessionStore order): the lock reserves the id
        const fresh = header("fresh-lock", "/l")
        yield* Effect.scoped(Effect.gen(function*() {
          yield* p.lock(fresh.id)
          expect((yield* failure(Effect.scoped(q.lock(fresh.id)))).code).toBe("SESSION_LOCKED")
          yield* p.create(fresh)
          yield* p.append(fresh.id, oneTurn().events)
        }))
        yield* Effect.scoped(q.lock(fresh.id))
      }))
  })
}
