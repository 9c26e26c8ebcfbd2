/**
 * The in-memory backend forgets a session that was created but never written once its lock is
 * released (issue 18): such ids do not accumulate for the backend's lifetime, and the id can be
 * created again. A written session stays.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { SessionId } from "../../src/Llm/Message.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as SessionStore from "../../src/Session/SessionStore.js"

const header = (id: string) => ({ version: 0 as const, id: id as SessionId, createdAt: 0 })

describe("Memory backend intents", () => {
  it.effect("a created, never-written id is forgotten when its lock is released; while locked it is still taken", () =>
    Effect.gen(function*() {
      const backend = yield* Memory.make()
      yield* Effect.scoped(Effect.gen(function*() {
        yield* backend.lock(header("idle").id)
        yield* backend.create(header("idle"))
        const again = yield* Effect.exit(backend.create(header("idle")))
        expect(Exit.isFailure(again)).toBe(true)
      }))
      // released, never written: nothing is left, the id can be created again
      yield* Effect.scoped(Effect.gen(function*() {
        yield* backend.lock(header("idle").id)
        yield* backend.create(header("idle"))
      }))
      expect(yield* backend.exists(header("idle").id)).toBe(false)
    }))

  it.effect("through the store: a session closed before its first event can be created again under the same id", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      yield* Effect.scoped(store.create({ id: "once" }))
      const second = yield* Effect.scoped(store.create({ id: "once" }))
      expect(second.id).toBe("once")
      // a written session is stored and stays taken
      yield* Effect.scoped(Effect.flatMap(store.create({ id: "kept" }), (s) =>
        s.append({ type: "user/message", data: { content: [{ type: "text", text: "hi" }], source: { kind: "user" } }, surfaceOp: "append" })))
      const taken = yield* Effect.exit(Effect.scoped(store.create({ id: "kept" })))
      expect(Exit.isFailure(taken)).toBe(true)
    }).pipe(Effect.provide(SessionStore.layerMemory)))
})
