import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe, expect } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as TestKit from "../../src/Loop/TestKit.js"

/** One long flat-out stream: a text block of `n` deltas delivered as fast as the adapter can. */
const longReply = (n: number): Scripted.Reply => [
  ...Array.from({ length: n }, (_, i) => Scripted.say(`w${i % 10} `)),
  Scripted.usage(10, n),
  Scripted.finish("stop")
]

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
    }).pipe(Effect.scoped, Effect.provide(TestKit.layer({ script: [longReply(5_000)] }))), 120_000)
})
