/**
 * The session append lock (S-10): appends are serialized and published after commit, so with
 * several fibers appending at once (single appends and batches) the seqs are contiguous, each
 * fiber's own appends get increasing seqs, every observer sees every event exactly once in seq
 * order, all observers of one event run before any observer of the next, and an observer of
 * event n still sees `nextSeq = n + 1` however long it takes. Observers yield a seeded random
 * number of times so that, without the lock, other fibers would commit and publish in between;
 * many seeded interleavings run.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Session from "../../src/Session/Session.js"
import type { AppendInput } from "../../src/Session/SessionEvent.js"

/** mulberry32: a small seeded PRNG */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const INTERLEAVINGS = 60

const input = (fiber: number, n: number): AppendInput => ({ type: "x/n", data: { fiber, n } }) as never

describe("Session append lock [S-10]", () => {
  it.effect(`[S-10] ${INTERLEAVINGS} seeded interleavings of concurrent appends: contiguous seqs, observers in seq order`, () =>
    Effect.gen(function*() {
      const random = prng(0x10c4)
      for (let round = 0; round < INTERLEAVINGS; round++) {
        yield* Effect.scoped(Effect.gen(function*() {
          const s = yield* Session.make({ id: `s${round}` })
          const fibers = 2 + Math.floor(random() * 6)
          const observers = 1 + Math.floor(random() * 3)
          const trace: Array<string> = []
          const stale: Array<string> = []
          for (let o = 0; o < observers; o++) {
            yield* s.observe((e) =>
              Effect.gen(function*() {
                const yields = Math.floor(random() * 4)
                for (let y = 0; y < yields; y++) yield* Effect.yieldNow
                const next = yield* s.nextSeq
                if (next !== e.seq + 1) stale.push(`observer ${o} of #${e.seq} saw nextSeq ${next}`)
                trace.push(`${e.seq}:${o}`)
              })
            )
          }
          // each fiber: a few single appends and batches, with random yields in between
          const plans = Array.from({ length: fibers }, (_, f) =>
            Array.from({ length: 1 + Math.floor(random() * 5) }, () => ({
              batch: random() < 0.3 ? 2 + Math.floor(random() * 2) : 0,
              yields: Math.floor(random() * 3)
            })).map((p, i) => ({ ...p, f, i })))
          const results = yield* Effect.forEach(
            plans,
            (plan) =>
              Effect.gen(function*() {
                const seqs: Array<number> = []
                let n = 0
                for (const step of plan) {
                  for (let y = 0; y < step.yields; y++) yield* Effect.yieldNow
                  if (step.batch === 0) {
                    seqs.push((yield* s.append(input(step.f, n++))).seq)
                  } else {
                    const inputs = Array.from({ length: step.batch }, () => input(step.f, n++))
                    for (const e of yield* s.appendAll(inputs)) seqs.push(e.seq)
                  }
                }
                return seqs
              }),
            { concurrency: "unbounded" }
          )
          const total = results.reduce((sum, seqs) => sum + seqs.length, 0)
          // contiguous, unique seqs; each fiber's own appends in increasing order
          expect(results.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, k) => k))
          for (const seqs of results) expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
          const events = yield* s.events
          expect(events.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, k) => k))
          // each fiber's inputs landed in its own order
          for (let f = 0; f < fibers; f++) {
            const mine = events.flatMap((e) => {
              const d = e.data as unknown as { fiber: number; n: number }
              return d.fiber === f ? [d.n] : []
            })
            expect(mine).toEqual(mine.map((_, k) => k))
          }
          // publication: every event once per observer, all observers of #n before any of #n+1
          expect(trace).toEqual(
            Array.from({ length: total }, (_, k) => Array.from({ length: observers }, (_, o) => `${k}:${o}`)).flat()
          )
          expect(stale).toEqual([])
        }))
      }
    }))
})
