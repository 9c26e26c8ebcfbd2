/**
 * The turn-end flush (D-7, L-11) caught fast (issue 18): with write-through every append already
 * reaches the backend, so what only the turn-end checkpoint does is retry a write that failed
 * during the turn. Without it the failed batch would wait for the next append or for disposal.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as SessionError from "../../src/Session/SessionError.js"
import * as SessionPersistence from "../../src/Session/SessionPersistence.js"

describe("Turn-end flush", () => {
  it.effect("[D-7,L-11] a write that failed at turn/end is retried by the turn-end flush: by whenIdle the backend holds it", () =>
    Effect.gen(function*() {
      const backend = yield* Memory.make()
      const failed = yield* Ref.make(false)
      // fails the first write that carries a turn/end; every later write goes through
      const flaky: SessionPersistence.Service = {
        ...backend,
        append: (id, events, options) =>
          Effect.flatMap(
            Ref.modify(failed, (done) => {
              const fail = !done && events.some((e) => e.type === "turn/end")
              return [fail, done || fail] as const
            }),
            (fail) =>
              fail
                ? Effect.fail(SessionError.make("PERSISTENCE_FAILED", "disk hiccup", { sessionId: id }))
                : backend.append(id, events, options)
          )
      }
      yield* Effect.gen(function*() {
        const hooks = yield* Hooks.LoopHooks
        const errors = yield* Ref.make(0)
        yield* hooks.error.register(() => Ref.update(errors, (n) => n + 1))
        const t = yield* TestKit.agent()
        yield* t.prompt("one")
        // read what the backend stored right after idle (a snapshot repairs nothing in storage; no later
        // drain at scope close may fill it): the whole turn, with nothing left for repair to close
        const stored = yield* backend.snapshot(t.agent.session.id)
        expect(stored.repaired).toEqual([])
        expect(stored.events).toEqual(yield* t.events)
        expect(yield* Ref.get(errors)).toBe(1)
      }).pipe(Effect.provide(TestKit.layer({
        script: [Scripted.text("1")],
        persistence: Layer.succeed(SessionPersistence.SessionPersistence, flaky)
      })))
    }))
})
