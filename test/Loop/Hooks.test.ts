import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Exit from "effect/Exit"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as Inbox from "../../src/Loop/Inbox.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import { boom } from "../support/LoopKit.js"

const agent = { id: "a1" } as unknown as Hooks.HookAgent

describe("Hooks", () => {
  it.effect("[L-26,L-37,U-3] turn-stop is monotonic: any Stop is final, every listener runs, Pass and nothing abstain", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.make
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const note = (name: string) => Ref.update(ran, (r) => [...r, name])
      yield* hooks.turnStop.register(() => Effect.as(note("pass"), Hooks.TurnStopDecision.Pass()))
      expect(yield* hooks.turnStop.run("a1", { agent, turn: 1 })).toBe(false)
      yield* hooks.turnStop.register(() => Effect.as(note("stop"), Hooks.TurnStopDecision.Stop()))
      yield* hooks.turnStop.register(() => note("nothing"))
      expect(yield* hooks.turnStop.run("a1", { agent, turn: 1 })).toBe(true)
      expect(yield* Ref.get(ran)).toEqual(["pass", "pass", "stop", "nothing"])
      yield* hooks.turnStop.register(() => boom("turn-stop failed"))
      const failure = yield* Effect.flip(hooks.turnStop.run("a1", { agent, turn: 1 }))
      expect(failure.message).toBe("turn-stop failed")
    }))

  it.effect("[L-36,DEC-2] agent-scoped listeners see only their agent; closing the scope unregisters", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.make
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const scope = yield* Scope.make()
      yield* hooks.preStep.register((i) => Ref.update(seen, (s) => [...s, `scoped:${i.turn}`]), { agentId: "a1" }).pipe(
        Scope.provide(scope)
      )
      yield* hooks.preStep.register((i) => Ref.update(seen, (s) => [...s, `global:${i.turn}`]))
      const input = (turn: number) => ({ agent, turn, step: 1, signal: undefined as never })
      yield* hooks.preStep.run("a1", input(1))
      yield* hooks.preStep.run("other", input(2))
      yield* Scope.close(scope, Exit.void)
      yield* hooks.preStep.run("a1", input(3))
      expect(yield* Ref.get(seen)).toEqual(["global:1", "scoped:1", "global:2", "global:3"])
    }))
})

describe("Inbox", () => {
  const entry = (s: string): Inbox.Entry => ({ content: [ContentBlock.text(s)], source: { kind: "user" } })

  it("[L-1,L-2,L-4,L-9] FIFOs, marker and settling leftover steering", () => {
    let inbox = Inbox.enqueue(Inbox.enqueue(Inbox.empty, entry("a")), entry("b"))
    inbox = Inbox.steer(inbox, entry("s"))
    expect(Inbox.hasInput(inbox)).toBe(true)
    const [batch, drained] = Inbox.drainQueued(inbox)
    expect(batch.map((e) => ContentBlock.flattenText(e.content))).toEqual(["a", "b"])
    expect(Inbox.settleSteering(drained, false).queued.map((e) => ContentBlock.flattenText(e.content))).toEqual(["s"])
    expect(Inbox.settleSteering(drained, true).queued).toEqual([])
    const cancelled = Inbox.cancel(inbox, "why")
    expect(cancelled.queued).toEqual([])
    expect(cancelled.steering).toEqual([])
    const [marker, cleared] = Inbox.clearMarker(cancelled)
    expect(marker._tag === "Some" ? marker.value : undefined).toBe("why")
    expect(cleared.marker._tag).toBe("None")
  })
})
