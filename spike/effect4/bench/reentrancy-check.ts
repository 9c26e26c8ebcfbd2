/**
 * A check of the `Session.ts` redesign (the re-entrancy `FiberRef` → a `Context.Reference` provided around
 * the observers' run): an append from an observer of the same session — directly, or from a fiber the
 * observer forks — fails `REENTRANT_APPEND`; an append to another session from an observer succeeds; the
 * same session appends again once the publication is over.
 *   node --import tsx spike/effect4/bench/reentrancy-check.ts
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Session from "../src/Session/Session.js"
import type { AppendInput } from "../src/Session/SessionEvent.js"

const input: AppendInput = { type: "step/start", data: { turn: 1, step: 1 } }

const program = Effect.gen(function*() {
  const a = yield* Session.make({ id: "a" })
  const b = yield* Session.make({ id: "b" })
  const seen: Array<string> = []
  let depth = 0
  yield* a.observe((event) =>
    Effect.gen(function*() {
      if (event.type !== "step/start" || depth > 0) return
      depth++
      const direct = yield* Effect.result(a.append(input))
      seen.push(`direct: ${direct._tag === "Failure" ? (direct.failure as { code: string }).code : "ok"}`)
      const forked = yield* Effect.forkChild(Effect.result(a.append(input)))
      const viaFork = yield* Fiber.join(forked)
      seen.push(`forked: ${viaFork._tag === "Failure" ? (viaFork.failure as { code: string }).code : "ok"}`)
      const other = yield* Effect.result(b.append(input))
      seen.push(`other session: ${other._tag === "Failure" ? (other.failure as { code: string }).code : "ok"}`)
    })
  )
  yield* a.append(input)
  const after = yield* Effect.result(a.append({ type: "step/end", data: { turn: 1, step: 1 } }))
  seen.push(`after the publication: ${after._tag === "Failure" ? "failed" : "ok"}`)
  return seen
})

const seen = await Effect.runPromise(Effect.scoped(program))
process.stdout.write(`${seen.join("\n")}\n`)
const expected = ["direct: REENTRANT_APPEND", "forked: REENTRANT_APPEND", "other session: ok", "after the publication: ok"]
if (seen.join("|") !== expected.join("|")) {
  process.stderr.write("unexpected\n")
  process.exit(1)
}
