/**
 * `whenIdle` (issue 18): a caller interrupted while waiting leaves the agent's waiters at once, so
 * callers that give up (timeouts, races) do not pile up for the agent's lifetime.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Runtime from "../../src/Loop/internal/Runtime.js"

const waiters = (state: Ref.Ref<Runtime.AgentState>) => Effect.map(Ref.get(state), (s) => s.idleWaiters.length)

describe("whenIdle waiters", () => {
  it.effect("an interrupted caller is removed; a waiting one stays and is released by the idle transition", () =>
    Effect.gen(function*() {
      const state = yield* Ref.make<Runtime.AgentState>({ ...Runtime.initialState(0), status: "running" })
      const exited = yield* Deferred.make<void>()
      const gaveUp = yield* Effect.forkChild(Runtime.awaitIdle(state, exited))
      const patient = yield* Effect.forkChild(Runtime.awaitIdle(state, exited))
      while ((yield* waiters(state)) < 2) yield* Effect.yieldNow
      yield* Fiber.interrupt(gaveUp)
      expect(yield* waiters(state)).toBe(1)
      // the idle transition (what the driver does) releases the remaining caller
      const rest = yield* Ref.modify(state, (s) => [s.idleWaiters, { ...s, status: "idle" as const, idleWaiters: [] }] as const)
      yield* Effect.forEach(rest, (d) => Deferred.succeed(d, undefined), { discard: true })
      yield* Fiber.join(patient)
    }))

  it.effect("an idle agent returns at once and registers nothing; a disposed one waits for the end of disposal", () =>
    Effect.gen(function*() {
      const state = yield* Ref.make(Runtime.initialState(0))
      const exited = yield* Deferred.make<void>()
      yield* Runtime.awaitIdle(state, exited)
      expect(yield* waiters(state)).toBe(0)
      yield* Ref.update(state, (s) => ({ ...s, disposed: true }))
      const waiting = yield* Effect.forkChild(Runtime.awaitIdle(state, exited))
      yield* Deferred.succeed(exited, undefined)
      yield* Fiber.join(waiting)
      expect(yield* waiters(state)).toBe(0)
    }))
})
