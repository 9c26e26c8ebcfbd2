/**
 * Compaction benchmarks (issue 12), as ratios against deriving the messages once (a fresh
 * `deriveMessages()` over the whole log: fold the surface, project every node).
 *
 * Log: 100k events of a coding session — turns of tool round trips whose steps stream 20 chunks,
 * with 2 KB tool results and a 12 KB one every fifth call (≈ 7k surface nodes).
 *
 * 1. `compaction.plan.first`: the first planning on that log — the cut (K-6, walks back only over
 *    the kept tail) plus the prune decisions (K-5: a length check of each tool result before the
 *    cut; the long ones are trimmed, head and tail only). `compaction.plan`: planning again (each
 *    result's decision is memoised, so later plans cost a pointer walk plus the new results).
 * 2. `compaction.pressure.step`: the pressure measure (K-2) per step after the first, median over
 *    200 steps that each append one round trip; it visits only the new nodes and walks back to the
 *    latest usage anchor, so it is O(new events): the ratio must be ≪ 1 and independent of the log
 *    size (`compaction.pressure.step.10k` is printed for comparison). `compaction.pressure.first`
 *    is the first (full) measure.
 */
import * as Effect from "effect/Effect"
import * as Pressure from "../src/Loop/Compaction/Pressure.js"
import * as Region from "../src/Loop/Compaction/Region.js"
import * as Projection from "../src/Session/Projection.js"
import type { AppendInput } from "../src/Session/SessionEvent.js"
import * as Session from "../src/Session/Session.js"
import * as Surface from "../src/Session/Surface.js"
import { median, report } from "./Bench.js"

const user = { kind: "user" } as const
const provenance = { provider: "bench", model: "bench-model" }
const small = "x".repeat(2_000)
const large = "y".repeat(12_000)

/** One tool round trip of `turn`/`step`; `seq` = the seq the first event will get. */
const roundTrip = (turn: number, step: number, seq: number, k: number): Array<AppendInput> => {
  const out: Array<AppendInput> = [{ type: "step/start", data: { turn, step } }]
  const first = seq + 1
  for (let i = 0; i < 20; i++) {
    out.push({ type: "assistant/chunk", data: { turn, step, chunk: { type: "text-delta", index: 0, text: "tok " } } })
  }
  const callId = `call-${k}` as never
  out.push({
    type: "assistant/message",
    data: {
      turn,
      step,
      content: [{ type: "text", text: "tok ".repeat(20) }, { type: "tool-call", id: callId, name: "read", arguments: `{"n":${k}}` }],
      provenance,
      usage: { inputTokens: 1_000 + k, outputTokens: 20 }
    },
    surfaceOp: "append",
    sourceEventSeqs: Array.from({ length: 20 }, (_, i) => first + i)
  })
  out.push({ type: "tool/call", data: { turn, step, callId, name: "read", arguments: `{"n":${k}}` } })
  out.push({
    type: "tool/result",
    data: { turn, step, callId, content: [{ type: "text", text: k % 5 === 0 ? large : small }], isError: false },
    surfaceOp: "append",
    sourceEventSeqs: [seq + 22]
  })
  out.push({ type: "step/end", data: { turn, step } })
  return out
}

const buildLog = (n: number): Array<AppendInput> => {
  const out: Array<AppendInput> = []
  let turn = 1
  let k = 0
  while (out.length < n) {
    out.push({ type: "turn/start", data: { turn, trigger: { kind: "message", source: user } } })
    out.push({ type: "user/message", data: { content: [{ type: "text", text: `prompt ${turn}` }], source: user }, surfaceOp: "append" })
    for (let step = 1; step <= 10; step++) out.push(...roundTrip(turn, step, out.length, k++))
    out.push({ type: "turn/end", data: { turn, reason: { kind: "completed" } } })
    turn++
  }
  // end on a turn boundary
  let last = out.length - 1
  while (out[last]?.type !== "turn/end") last--
  return out.slice(0, last + 1)
}

const timeSync = (runs: number, f: () => unknown): number => {
  f()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    f()
    times.push(performance.now() - t0)
  }
  return median(times)
}

const measureAt = (n: number) =>
  Effect.gen(function*() {
    const session = yield* Session.make()
    yield* session.appendAll(buildLog(n))
    const events = yield* session.events
    const deriveOnce = timeSync(5, () => Projection.deriveMessages(Surface.foldSurface(events).nodes))
    const view = yield* session.surface
    const window = 128_000
    const planning = () => {
      const cut = Region.planCut(view.nodes, 0.16 * window)
      return Region.planPrunes(view.nodes, cut.cut)
    }
    const p0 = performance.now()
    planning()
    const planFirst = performance.now() - p0
    const plan = timeSync(20, planning)
    const tracker = Pressure.tracker()
    const t0 = performance.now()
    tracker.measure(view, 2_000)
    const first = performance.now() - t0
    // steps after the first: append one round trip (on a fresh turn), measure
    const perStep: Array<number> = []
    let turn = (yield* session.nextTurn)
    yield* session.append({ type: "turn/start", data: { turn, trigger: { kind: "message", source: user } } })
    for (let s = 1; s <= 200; s++) {
      yield* session.appendAll(roundTrip(turn, s, yield* session.nextSeq, 1_000_000 + s))
      const v = yield* session.surface
      const t = performance.now()
      tracker.measure(v, 2_000)
      perStep.push(performance.now() - t)
    }
    yield* session.append({ type: "turn/end", data: { turn: turn++, reason: { kind: "completed" } } })
    return { events: events.length, nodes: view.nodes.length, deriveOnce, planFirst, plan, first, step: median(perStep) }
  })

/** Runs the compaction benchmarks. */
export const run = async (): Promise<void> => {
  const big = await Effect.runPromise(measureAt(100_000))
  const smallLog = await Effect.runPromise(measureAt(10_000))
  report({ bench: "compaction.plan.first", unit: "ms", value: big.planFirst, baseline: big.deriveOnce, events: big.events, nodes: big.nodes })
  report({ bench: "compaction.plan", unit: "ms", value: big.plan, baseline: big.deriveOnce, events: big.events, nodes: big.nodes })
  report({ bench: "compaction.pressure.first", unit: "ms", value: big.first, baseline: big.deriveOnce, events: big.events })
  report({ bench: "compaction.pressure.step", unit: "ms", value: big.step, baseline: big.deriveOnce, events: big.events })
  report({ bench: "compaction.pressure.step.10k", unit: "ms", value: smallLog.step, baseline: smallLog.deriveOnce, events: smallLog.events })
}
