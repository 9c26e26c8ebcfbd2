import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Fork from "../../src/Session/Fork.js"
import * as Session from "../../src/Session/Session.js"
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

const turn = (n: number, kind: "completed" | "aborted" = "completed") => [
  turnStart(n),
  userMessage(`p${n}`),
  assistant(n, 1, [text(`a${n}`)]),
  turnEnd(n, kind === "aborted" ? { kind: "aborted", reason: "user interrupt" } : { kind })
]

describe("Fork", () => {
  it.effect("AC-39 [S-21] empty source → empty child with seedLength 0, cwd and parent inherited", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const source = yield* store.create({ id: "src", cwd: "/work/project" })
      const child = yield* store.fork(source)
      expect(yield* child.events).toEqual([])
      expect(child.header).toMatchObject({ version: 0, parentSession: "src", seedLength: 0, cwd: "/work/project" })
      expect(child.id).not.toBe("src")
      expect(yield* store.get(child.id)).toBe(child)
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("AC-39 [S-21] default boundary = last event (a turn/end); earlier boundary → prefix only; any reason; immutable, independent", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const source = yield* store.create({ id: "src" })
      yield* appendAll(source, [...turn(1, "aborted"), ...turn(2)])
      const all = yield* store.fork("src", undefined, "all")
      expect(yield* all.events).toEqual(yield* source.events)
      expect(all.header.seedLength).toBe(8)
      expect(yield* all.deriveMessages).toEqual(yield* source.deriveMessages)
      expect(yield* all.nextTurn).toBe(3)

      // source continues with an open turn: an earlier boundary takes the prefix only
      yield* appendAll(source, [turnStart(3), userMessage("p3"), stepStart(3, 1)])
      const prefix = yield* store.fork(source, 3, "prefix") // turn 1 ended aborted
      expect((yield* prefix.events).map((e) => e.seq)).toEqual([0, 1, 2, 3])
      expect(prefix.header).toMatchObject({ parentSession: "src", seedLength: 4 })
      const events = yield* prefix.events
      expect(Object.isFrozen(events[1])).toBe(true)
      expect(events[1]).not.toBe((yield* source.events)[1])
      // independent: appending to the child does not touch the source and vice versa
      yield* prefix.append(turnStart(yield* prefix.nextTurn))
      expect((yield* prefix.events)[4]).toMatchObject({ type: "turn/start", seq: 4, data: { turn: 2 } })
      expect((yield* source.events)[4]).toMatchObject({ type: "turn/start", data: { turn: 2 } })
      expect((yield* source.events).length).toBe(11)
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("AC-40 [S-21] INVALID_BOUNDARY, OPEN_TURN, SESSION_NOT_FOUND, SESSION_NOT_LIVE, SESSION_ALREADY_EXISTS (checked first)", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const source = yield* store.create({ id: "src" })
      yield* appendAll(source, turn(1))
      for (const b of [-1, 0.5, Number.MAX_SAFE_INTEGER + 1, 4, 100]) {
        yield* failsWith(store.fork(source, b), "INVALID_BOUNDARY")
      }
      yield* failsWith(store.fork(source, 2), "OPEN_TURN")
      yield* failsWith(store.fork("nope"), "SESSION_NOT_FOUND")
      const stale = yield* Session.make({ id: "src" })
      yield* failsWith(store.fork(stale), "SESSION_NOT_LIVE")
      // a released handle is stale too
      const scope = yield* Scope.make()
      const gone = yield* store.create({ id: "gone" }).pipe(Scope.provide(scope))
      yield* Scope.close(scope, Exit.void)
      yield* failsWith(store.fork(gone), "SESSION_NOT_LIVE")
      // child id taken is reported before anything else
      yield* store.create({ id: "taken" })
      yield* failsWith(store.fork(source, -1, "taken"), "SESSION_ALREADY_EXISTS")
      yield* failsWith(store.fork("nope", 2, "taken"), "SESSION_ALREADY_EXISTS")
      // nothing was created
      expect((yield* store.list()).map((s) => s.id)).toEqual(["src", "taken"])
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("[S-21] Fork.fork over a plain registry", () =>
    Effect.gen(function*() {
      const source = yield* Session.make({ id: "src", cwd: "/tmp/x" })
      yield* appendAll(source, turn(1))
      const registry: Fork.Registry = { lookup: (id) => (id === "src" ? source : undefined) }
      const child = yield* Fork.fork(registry, "src", 3, "child")
      expect(child.header).toEqual({ version: 0, id: "child", createdAt: 0, cwd: "/tmp/x", parentSession: "src", seedLength: 4 })
      expect(yield* child.events).toEqual(yield* source.events)
    }))
})
