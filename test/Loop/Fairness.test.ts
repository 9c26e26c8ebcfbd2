import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scheduler from "effect/Scheduler"
import * as Schema from "effect/Schema"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Fairness from "../../src/Loop/internal/Fairness.js"
import * as Scheduling from "../../src/Loop/Scheduling.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Tool from "../../src/Loop/Tool.js"

/** One long flat-out stream: a text block of `n` deltas delivered as fast as the adapter can. */
const longReply = (n: number): Scripted.Reply => [
  ...Array.from({ length: n }, (_, i) => Scripted.say(`w${i % 10} `)),
  Scripted.usage(10, n),
  Scripted.finish("stop")
]

const AGENTS = 100
const REPLY_CHUNKS = 200
/** `w0 w1 … `: every delta is three characters */
const REPLY_TEXT_LENGTH = REPLY_CHUNKS * 3

/** A tool that reports whether the agent fiber running it is on the loop's fair scheduler. */
const probe = (seen: Array<boolean>) =>
  Tool.make({
    name: "probe",
    description: "Reports the scheduler",
    parameters: Schema.Struct({}),
    execute: () =>
      Effect.map(Scheduler.Scheduler, (s) => {
        seen.push(s === Fairness.scheduler)
        return [ContentBlock.text("ok")]
      })
  })

const probed = (layer: Layer.Layer<never>) =>
  Effect.gen(function*() {
    const seen: Array<boolean> = []
    const t = yield* TestKit.agent({ tools: [probe(seen)] })
    yield* t.prompt("go")
    return seen
  }).pipe(
    Effect.scoped,
    Effect.provide(Layer.merge(TestKit.layer({ script: [Scripted.call("c1", "probe", "{}"), Scripted.text("done")] }), layer))
  )

describe("the fair scheduler is opt-in (issue 28)", () => {
  it.live("off by default: an embedder's agent runs on Effect's scheduler; Scheduling.layer puts it on the fair one", () =>
    Effect.gen(function*() {
      expect(yield* probed(Layer.empty)).toEqual([false])
      expect(yield* probed(Scheduling.layer)).toEqual([true])
    }))
})

describe("event-loop fairness while streaming (issue 20)", () => {
  it.live("a 10 ms timer of the host keeps firing during a flat-out stream", () =>
    Effect.gen(function*() {
      let ticks = 0
      const timer = setInterval(() => ticks++, 10)
      const started = performance.now()
      try {
        const t = yield* TestKit.agent()
        yield* t.prompt("go")
      } finally {
        clearInterval(timer)
      }
      const elapsed = performance.now() - started
      // bounded, not a speed assertion: a stream that takes more than 50 ms must let a 10 ms timer run at least once
      if (elapsed > 50) expect(ticks).toBeGreaterThan(0)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(TestKit.layer({ script: [longReply(5_000)] }), Scheduling.layer))), 120_000)

  // Many agents at once: every waiter of the event loop shares one turn and one budget. With a clock per waiter
  // (each resumed stream got a fresh budget), N parked streams ran N budgets back to back before a timer could
  // fire: ~N × 8 ms per event-loop turn. The bound is generous (a loaded machine, GC pauses), not a speed check.
  it.live("a 10 ms timer of the host keeps firing while 100 agents stream flat out", () =>
    Effect.gen(function*() {
      const agents = yield* Effect.forEach(Array.from({ length: AGENTS }), () => TestKit.agent())
      let last = performance.now()
      let worst = 0
      let ticks = 0
      const timer = setInterval(() => {
        const now = performance.now()
        worst = Math.max(worst, now - last)
        last = now
        ticks++
      }, 10)
      const started = performance.now()
      try {
        yield* Effect.forEach(agents, (t) => t.prompt("go"), { concurrency: "unbounded", discard: true })
      } finally {
        clearInterval(timer)
      }
      const ended = performance.now()
      worst = Math.max(worst, ended - last)
      if (ended - started > 100) expect(ticks).toBeGreaterThan(0)
      expect(worst).toBeLessThan(600)
      // every agent got its whole reply
      for (const t of agents) expect((yield* t.texts)[0]?.length).toBe(REPLY_TEXT_LENGTH)
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.merge(TestKit.layer({ script: Array.from({ length: AGENTS }, () => longReply(REPLY_CHUNKS)) }), Scheduling.layer))
    ), 120_000)
})
