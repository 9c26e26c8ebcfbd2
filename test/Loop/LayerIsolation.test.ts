/**
 * Layer memoization (issue 27, Effect 4): Effect 4 reuses a layer an enclosing `provide` already built, so an agent
 * world provided inside another (the same layer values: `Agent.layer`, `Hooks.layer`, a stored `TestKit.layer`, …)
 * would silently share the outer world's hooks, store, script and factory. Two agents built from the same layers
 * never see each other's state, whether the provides are siblings or nested.
 */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as SessionStore from "../../src/Session/SessionStore.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"

/** What one agent world saw: its replies, the `queued` notifications of its hooks, its store's live sessions. */
const world = (prompt: string, inner?: Effect.Effect<unknown, unknown, never>) =>
  Effect.gen(function*() {
    const hooks = yield* Hooks.LoopHooks
    const queued = yield* Ref.make<ReadonlyArray<string>>([])
    yield* hooks.queued.register((i) => Ref.update(queued, (q) => [...q, i.agent.id]))
    const t = yield* TestKit.agent()
    yield* t.prompt(prompt)
    if (inner !== undefined) yield* inner
    const store = yield* SessionStore.SessionStore
    return {
      id: t.agent.id,
      texts: yield* t.texts,
      queued: yield* Ref.get(queued),
      live: (yield* store.list()).map((s) => s.id)
    }
  }).pipe(Effect.scoped)

describe("layer isolation (Effect 4 layer memoization)", () => {
  it.effect("[L-8] sibling provides of the same test layer: two agents, two worlds", () =>
    Effect.gen(function*() {
      const layer = TestKit.layer({ script: [Scripted.text("only reply")] })
      const a = yield* world("a").pipe(Effect.provide(layer))
      const b = yield* world("b").pipe(Effect.provide(layer))
      // each world has its own script cursor: both got the one reply
      expect(a.texts).toEqual(["only reply"])
      expect(b.texts).toEqual(["only reply"])
      expect(a.queued).toEqual([a.id])
      expect(b.queued).toEqual([b.id])
      expect(a.live).toEqual([a.id])
      expect(b.live).toEqual([b.id])
    }))

  it.effect("[L-8] the same test layer provided inside itself: the inner agent never sees the outer world", () =>
    Effect.gen(function*() {
      const layer = TestKit.layer({ script: [Scripted.text("only reply")] })
      const inner = yield* Ref.make<{ readonly id: string; readonly texts: ReadonlyArray<string>; readonly queued: ReadonlyArray<string>; readonly live: ReadonlyArray<string> } | undefined>(undefined)
      const outer = yield* world(
        "outer",
        Effect.flatMap(world("inner").pipe(Effect.provide(layer)), (seen) => Ref.set(inner, seen))
      ).pipe(Effect.provide(layer))
      const b = yield* Ref.get(inner)
      expect(b).toBeDefined()
      expect(outer.texts).toEqual(["only reply"])
      expect(b!.texts).toEqual(["only reply"])
      // the outer hooks never heard of the inner agent, nor the inner hooks of the outer one
      expect(outer.queued).toEqual([outer.id])
      expect(b!.queued).toEqual([b!.id])
      // each store holds its own agent's session only
      expect(outer.live).toEqual([outer.id])
      expect(b!.live).toEqual([b!.id])
    }))

  it.effect("[L-8] the module layers themselves (Agent, Hooks, SystemPrompt, ToolRuntime, Llm) nested: fresh per provide", () =>
    Effect.gen(function*() {
      const services = (reply: string) =>
        Layer.provideMerge(
          Agent.layer,
          Layer.provideMerge(
            Scripted.layerLlm([Scripted.text(reply)]),
            Layer.mergeAll(Llm.layer, Hooks.layer, SystemPrompt.layerEmpty, ToolRuntime.layerDefault, SessionStore.layerMemory)
          )
        )
      const run = (prompt: string, inner?: Effect.Effect<ReadonlyArray<string>, unknown, never>) =>
        Effect.gen(function*() {
          const hooks = yield* Hooks.LoopHooks
          const queued = yield* Ref.make<ReadonlyArray<string>>([])
          yield* hooks.queued.register((i) => Ref.update(queued, (q) => [...q, i.agent.id]))
          const agent = yield* Agent.make({ provider: "scripted", model: "test" })
          yield* agent.send([{ type: "text", text: prompt }])
          yield* agent.whenIdle
          const nested = inner === undefined ? [] : yield* inner
          return { id: agent.id, queued: yield* Ref.get(queued), nested }
        }).pipe(Effect.scoped)
      const innerRun = Effect.map(run("inner").pipe(Effect.provide(services("inner reply"))), (r) => [r.id, ...r.queued])
      const outer = yield* run("outer", innerRun).pipe(Effect.provide(services("outer reply")))
      const [innerId, ...innerQueued] = outer.nested
      expect(innerId).toBeDefined()
      expect(innerId).not.toBe(outer.id)
      expect(outer.queued).toEqual([outer.id])
      expect(innerQueued).toEqual([innerId])
    }))
})
