import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as SessionErrors from "../../src/Session/SessionError.js"
import type { Service } from "../../src/Session/SessionPersistence.js"
import { SessionPersistence } from "../../src/Session/SessionPersistence.js"
import * as SessionStore from "../../src/Session/SessionStore.js"
import {
  appendAll,
  assistant,
  failsWith,
  stepStart,
  text,
  turnEnd,
  turnStart,
  userMessage
} from "../support/sessionInputs.js"

const turn = (n: number) => [turnStart(n), userMessage(`p${n}`), assistant(n, 1, [text(`a${n}`)]), turnEnd(n)]

/** Stored events of a session as parsed JSON (what a restarted process would read). */
const stored = (storage: Memory.Storage, id: string): Array<unknown> =>
  Memory.dump(storage, id).split("\n").filter((l) => l !== "").slice(1).map((l) => JSON.parse(l) as unknown)

/** A store over `storage`, built in the current scope (one "process"). */
const storeOver = (storage: Memory.Storage, wrap: (p: Service) => Service = (p) => p) =>
  Layer.build(
    SessionStore.layer.pipe(
      Layer.provide(Layer.effect(SessionPersistence, Effect.map(Memory.make(storage), wrap)))
    )
  ).pipe(Effect.map((ctx) => Context.get(ctx, SessionStore.SessionStore)))

describe("SessionStore", () => {
  it.effect("[DEC-11] create, append: every append is written through at once, persisted once; lazy materialization (D-1)", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const store = yield* storeOver(storage)
      const s = yield* store.create({ id: "s1", cwd: "/work/project" })
      expect(s.header).toMatchObject({ version: 0, id: "s1", cwd: "/work/project" })
      expect(yield* store.stored()).toEqual([]) // never appended → not listed
      yield* store.flush("s1") // empty buffer: nothing to write
      expect(Memory.dump(storage, "s1")).toBe("<absent>")
      const first = yield* s.append(turn(1)[0]!)
      // written through: stored as soon as the append returns, no flush needed
      expect(yield* store.pending("s1")).toBe(0)
      expect(stored(storage, "s1")).toEqual([first])
      const events = [first, ...yield* appendAll(s, turn(1).slice(1))]
      expect(stored(storage, "s1")).toEqual(events)
      yield* store.flush("s1")
      expect(yield* store.pending("s1")).toBe(0)
      yield* store.flush("s1")
      expect(stored(storage, "s1")).toEqual(events)
      const listed = yield* store.stored()
      expect(listed.map((x) => [x.header.id, x.turns, x.firstPrompt])).toEqual([["s1", 1, "p1"]]) // one turn (numbered 1)
      expect(yield* store.get("s1")).toBe(s)
      expect((yield* store.list()).map((x) => x.id)).toEqual(["s1"])
      yield* failsWith(store.get("nope"), "SESSION_NOT_FOUND")
      yield* failsWith(store.flush("nope"), "SESSION_NOT_FOUND")
      yield* failsWith(store.create({ id: "s1" }), "SESSION_ALREADY_EXISTS")
    }))

  it.effect("AC-50 [DEC-11] a failing write fails the append, keeps the event in memory unpublished; the next flush point writes it, then it is published", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const failures = yield* Ref.make(2)
      const store = yield* storeOver(storage, (p) => ({
        ...p,
        append: (id, events, options) =>
          Effect.flatMap(Ref.getAndUpdate(failures, (n) => n - 1), (n) =>
            n > 0
              ? Effect.fail(SessionErrors.make("PERSISTENCE_FAILED", "disk full", { sessionId: id, file: "f", osCode: "ENOSPC" }))
              : p.append(id, events, options))
      }))
      const s = yield* store.create({ id: "s1" })
      const seen: Array<number> = []
      yield* s.observe((e) => Effect.sync(() => seen.push(e.seq)))
      const error = yield* failsWith(s.append(turn(1)[0]!), "PERSISTENCE_FAILED")
      expect(error.osCode).toBe("ENOSPC")
      // committed in memory, not written, not published (printed ⇒ written)
      expect((yield* s.events).length).toBe(1)
      expect(yield* store.pending("s1")).toBe(1)
      expect(Memory.dump(storage, "s1")).toBe("<absent>")
      expect(seen).toEqual([])
      yield* failsWith(store.flush("s1"), "PERSISTENCE_FAILED")
      expect(yield* store.pending("s1")).toBe(1)
      // space returns: the next append retries the unsaved event first, then both are published in order
      const rest = yield* appendAll(s, turn(1).slice(1))
      expect(yield* store.pending("s1")).toBe(0)
      expect(stored(storage, "s1")).toEqual(yield* s.events)
      expect(seen).toEqual([0, ...rest.map((e) => e.seq)])
    }))

  it.effect("[DEC-11] printed ⇒ written: an observer sees an event only once it is stored", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const store = yield* storeOver(storage)
      const s = yield* store.create({ id: "s1" })
      const missing: Array<number> = []
      yield* s.observe((e) =>
        Effect.sync(() => {
          if (!stored(storage, "s1").some((x) => (x as { seq: number }).seq === e.seq)) missing.push(e.seq)
        })
      )
      const events = yield* appendAll(s, [...turn(1), ...turn(2)])
      expect(events).toHaveLength(8)
      expect(missing).toEqual([])
    }))

  it.effect("AC-51 [D-8,D-12] resume does not duplicate stored events and continues seqs and turns; a new session with a stored id is rejected", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const first = yield* Scope.make()
      const before = yield* Effect.gen(function*() {
        const store = yield* storeOver(storage)
        const s = yield* store.create({ id: "s1", cwd: "/work/project" })
        const events = yield* appendAll(s, turn(1))
        yield* store.flush("s1")
        return events
      }).pipe(Scope.provide(first))
      yield* Scope.close(first, Exit.void)

      const store = yield* storeOver(storage) // a restarted process
      yield* failsWith(store.create({ id: "s1" }), "SESSION_ALREADY_EXISTS")
      const resumed = yield* store.open("s1")
      expect(resumed.header).toMatchObject({ id: "s1", cwd: "/work/project" })
      expect(yield* resumed.events).toEqual(before)
      expect(yield* store.pending("s1")).toBe(0)
      yield* store.flush("s1")
      expect(stored(storage, "s1")).toEqual(before) // nothing re-appended
      expect(yield* resumed.nextSeq).toBe(4)
      expect(yield* resumed.nextTurn).toBe(2)
      const more = yield* appendAll(resumed, turn(yield* resumed.nextTurn))
      expect(more.map((e) => e.seq)).toEqual([4, 5, 6, 7])
      yield* store.flush("s1")
      expect(stored(storage, "s1")).toEqual([...before, ...more])
      yield* failsWith(store.open("missing"), "SESSION_NOT_FOUND")
    }))

  it.effect("[D-4,D-12] open repairs an interrupted tail durably; the closers are not re-appended", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      Memory.plant(storage, { version: 0, id: "crashed", createdAt: 5 }, [
        { type: "turn/start", seq: 0, time: 10, data: { turn: 1, trigger: { kind: "message", source: { kind: "user" } } } },
        { type: "step/start", seq: 1, time: 11, data: { turn: 1, step: 1 } }
      ])
      const store = yield* storeOver(storage)
      const s = yield* store.open("crashed")
      const events = yield* s.events
      expect(events.map((e) => e.type)).toEqual(["turn/start", "step/start", "step/end", "turn/end"])
      expect(events[3]).toMatchObject({ seq: 3, time: 11, data: { turn: 1, reason: { kind: "interrupted" } } })
      expect(stored(storage, "crashed")).toEqual(events)
      yield* s.append(turnStart(yield* s.nextTurn))
      yield* store.flush("crashed")
      expect(stored(storage, "crashed")).toHaveLength(5)
    }))

  it.effect("[DEC-4] one writer: opening a live session fails SESSION_LOCKED, in this store and in another process", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const store = yield* storeOver(storage)
      const other = yield* storeOver(storage)
      const s = yield* store.create({ id: "s1" })
      yield* appendAll(s, turn(1))
      yield* store.flush("s1")
      yield* failsWith(store.open("s1"), "SESSION_LOCKED")
      yield* failsWith(other.open("s1"), "SESSION_LOCKED")
    }))

  it.effect("release drains the buffer, unregisters and unlocks", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const store = yield* storeOver(storage)
      const scope = yield* Scope.make()
      const s = yield* store.create({ id: "s1" }).pipe(Scope.provide(scope))
      const events = yield* appendAll(s, turn(1))
      yield* Scope.close(scope, Exit.void)
      expect(stored(storage, "s1")).toEqual(events)
      yield* failsWith(store.get("s1"), "SESSION_NOT_FOUND")
      const reopened = yield* store.open("s1")
      expect(yield* reopened.events).toEqual(events)
    }))

  it.effect("[S-21,D-8] a fork seed is written once, with the child's first append", () =>
    Effect.gen(function*() {
      const storage = Memory.makeStorage()
      const store = yield* storeOver(storage)
      const s = yield* store.create({ id: "src" })
      const events = yield* appendAll(s, [...turn(1), ...turn(2)])
      yield* store.flush("src")
      const child = yield* store.fork("src", 3, "child")
      expect(yield* store.pending("child")).toBe(4)
      expect(Memory.dump(storage, "child")).toBe("<absent>")
      yield* child.append(stepStart(9, 9))
      yield* store.flush("child")
      yield* store.flush("child")
      const childStored = stored(storage, "child")
      expect(childStored).toHaveLength(5)
      expect(childStored.slice(0, 4)).toEqual(events.slice(0, 4))
      const summaries = yield* store.stored()
      expect(summaries.find((x) => x.header.id === "child")?.header).toMatchObject({ parentSession: "src", seedLength: 4 })
    }))

  it.effect("layerMemory provides a working store", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const s = yield* store.create()
      yield* appendAll(s, turn(1))
      yield* store.flush(s.id)
      expect((yield* store.stored()).map((x) => x.header.id)).toEqual([s.id])
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("a store provided inside a provide of the same layer is a store of its own (Effect 4 reuses enclosing layers)", () =>
    Effect.gen(function*() {
      const outer = yield* SessionStore.SessionStore
      yield* outer.create({ id: "shared-id" })
      const inner = yield* Effect.provide(
        Effect.gen(function*() {
          const store = yield* SessionStore.SessionStore
          // its own live registry and backend: the outer live session is unknown here
          expect(yield* store.list()).toEqual([])
          const s = yield* store.create({ id: "shared-id" })
          expect(s.id).toBe("shared-id")
          return store
        }),
        SessionStore.layerMemory
      )
      expect(inner).not.toBe(outer)
      expect((yield* outer.list()).map((s) => s.id)).toEqual(["shared-id"])
    }).pipe(Effect.provide(SessionStore.layerMemory)))
})
