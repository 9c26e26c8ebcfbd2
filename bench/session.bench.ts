/**
 * Session benchmarks (issue 4).
 *
 * 1. `session.append`: append throughput (events/s) of a live session over 100k
 *    `assistant/chunk` events plus the turn/step boundaries and messages around them, against a
 *    plain loop that stamps `seq`/`time`, `JSON.stringify`s and pushes the same events. The session
 *    does full validation (lossless JSON copy + deep freeze, core payload schemas, surface rules)
 *    and publication. Target: ratio ≥ 0.4. `session.append.observed` is the same with one no-op
 *    observer registered (every append then takes the lock and runs the publication).
 * 2. `session.deriveMessages`: the cost of one `deriveMessages()` call right after appending one
 *    event, at log sizes 1k, 10k and 100k events. The log is realistic: a step streams 40 chunks
 *    per assistant message, plus tool calls and results, so about 1 event in 22 is a surface node
 *    (≈ 4.5k nodes at 100k events). Report value = 100k figure, baseline = 1k figure (target:
 *    ratio ≤ 2). The projection work per call is O(new nodes), but each call returns a new array
 *    (S-15), an O(surface nodes) pointer copy; the same figure for a log of only surface nodes is
 *    printed as `session.deriveMessages.surface-only` for transparency (at 100k nodes the copy
 *    lands in V8's large-object space and costs milliseconds).
 */
import * as Effect from "effect/Effect"
import type { AppendInput } from "../src/Session/SessionEvent.js"
import * as Session from "../src/Session/Session.js"
import { median, report } from "./Bench.js"

const user = { kind: "user" } as const
const provenance = { provider: "bench", model: "bench-model" }

/** A realistic stream of append inputs: turns with 2 steps (a tool round trip, then text). */
const realistic = (n: number, chunksPerMessage = 40): Array<AppendInput> => {
  const out: Array<AppendInput> = []
  let turn = 0
  while (out.length < n) {
    out.push({ type: "turn/start", data: { turn, trigger: { kind: "message", source: user } } })
    out.push({ type: "user/message", data: { content: [{ type: "text", text: `prompt ${turn}` }], source: user }, surfaceOp: "append" })
    for (let step = 1; step <= 2; step++) {
      out.push({ type: "step/start", data: { turn, step } })
      const first = out.length
      out.push({ type: "assistant/chunk", data: { turn, step, chunk: { type: "block-start", index: 0, blockType: "text" } } })
      for (let i = 0; i < chunksPerMessage - 2; i++) {
        out.push({ type: "assistant/chunk", data: { turn, step, chunk: { type: "text-delta", index: 0, text: "tok " } } })
      }
      out.push({
        type: "assistant/chunk",
        data: { turn, step, chunk: { type: "block-end", index: 0, block: { type: "text", text: "tok ".repeat(chunksPerMessage - 2) } } }
      })
      const sources = Array.from({ length: chunksPerMessage }, (_, i) => first + i)
      const callId = `call-${turn}` as never
      const content = step === 1
        ? [{ type: "text" as const, text: "tok ".repeat(chunksPerMessage - 2) }, { type: "tool-call" as const, id: callId, name: "echo", arguments: "{\"text\":\"ping\"}" }]
        : [{ type: "text" as const, text: "tok ".repeat(chunksPerMessage - 2) }]
      out.push({ type: "assistant/message", data: { turn, step, content, provenance, usage: { inputTokens: 10, outputTokens: 40 } }, surfaceOp: "append", sourceEventSeqs: sources })
      if (step === 1) {
        out.push({ type: "tool/call", data: { turn, step, callId, name: "echo", arguments: "{\"text\":\"ping\"}" } })
        out.push({ type: "tool/result", data: { turn, step, callId, content: [{ type: "text", text: "echo: ping" }], isError: false }, surfaceOp: "append", sourceEventSeqs: [out.length - 1] })
      }
      out.push({ type: "step/end", data: { turn, step } })
    }
    out.push({ type: "turn/end", data: { turn, reason: { kind: "completed" } } })
    turn++
  }
  return out.slice(0, n)
}

/** A log made only of surface nodes (user messages), the worst case for the S-15 array copy. */
const surfaceOnly = (n: number): Array<AppendInput> =>
  Array.from({ length: n }, (_, i) => ({
    type: "user/message" as const,
    data: { content: [{ type: "text" as const, text: `m${i}` }], source: user },
    surfaceOp: "append" as const
  }))

const plainLoop = (inputs: ReadonlyArray<AppendInput>): number => {
  const t0 = performance.now()
  const out: Array<string> = []
  let seq = 0
  for (const input of inputs) out.push(JSON.stringify({ ...input, seq: seq++, time: Date.now() }))
  const ms = performance.now() - t0
  if (out.length !== inputs.length) throw new Error("lost events")
  return ms
}

const sessionLoop = (inputs: ReadonlyArray<AppendInput>, observed = false): Promise<number> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const session = yield* Session.make({ id: "bench" })
    if (observed) yield* session.observe(() => Effect.void)
    const t0 = performance.now()
    for (const input of inputs) yield* session.append(input)
    const ms = performance.now() - t0
    if ((yield* session.nextSeq) !== inputs.length) throw new Error("lost events")
    return ms
  })))

const deriveCost = (inputs: ReadonlyArray<AppendInput>, probe: AppendInput, rounds: number): Promise<number> =>
  Effect.runPromise(Effect.gen(function*() {
    const session = yield* Session.make({ id: "bench", seed: [] })
    for (const input of inputs) yield* session.append(input)
    yield* session.deriveMessages
    const times: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      yield* session.append(probe)
      const t0 = performance.now()
      const messages = yield* session.deriveMessages
      times.push(performance.now() - t0)
      if (messages.length === 0) throw new Error("no messages")
    }
    return median(times) * 1000
  }))

export async function run(): Promise<void> {
  const inputs = realistic(100_000 + 9_000) // ≈ 100k chunks plus boundaries and messages
  // warm-up both paths once
  plainLoop(inputs.slice(0, 20_000))
  await sessionLoop(inputs.slice(0, 20_000))
  const plain: Array<number> = []
  const live: Array<number> = []
  for (let i = 0; i < 3; i++) {
    plain.push(plainLoop(inputs))
    live.push(await sessionLoop(inputs))
  }
  const chunks = inputs.filter((x) => x.type === "assistant/chunk").length
  report({
    bench: "session.append",
    unit: "events/s (higher is better)",
    value: Math.round(inputs.length / (median(live) / 1000)),
    baseline: Math.round(inputs.length / (median(plain) / 1000)),
    events: inputs.length,
    chunks
  })
  // the same with one (no-op) observer registered: every append takes the lock and publishes
  const observed: Array<number> = []
  for (let i = 0; i < 3; i++) observed.push(await sessionLoop(inputs, true))
  report({
    bench: "session.append.observed",
    unit: "events/s with one observer (higher is better)",
    value: Math.round(inputs.length / (median(observed) / 1000)),
    baseline: Math.round(inputs.length / (median(plain) / 1000))
  })

  const probe: AppendInput = { type: "steering/message", data: { turn: 0, content: [{ type: "text", text: "probe" }], source: user }, surfaceOp: "append" }
  const sizes = [1_000, 10_000, 100_000] as const
  const realisticCost: Record<number, number> = {}
  const surfaceCost: Record<number, number> = {}
  for (const size of sizes) {
    realisticCost[size] = await deriveCost(realistic(size), probe, 200)
    surfaceCost[size] = await deriveCost(surfaceOnly(size), probe, 200)
  }
  report({
    bench: "session.deriveMessages",
    unit: "µs per call after one append (lower is better); value = 100k events, baseline = 1k events",
    value: Math.round((realisticCost[100_000] as number) * 100) / 100,
    baseline: Math.round((realisticCost[1_000] as number) * 100) / 100,
    at10k: Math.round((realisticCost[10_000] as number) * 100) / 100
  })
  report({
    bench: "session.deriveMessages.surface-only",
    unit: "µs per call after one append, log of surface nodes only (lower is better); value = 100k, baseline = 1k",
    value: Math.round((surfaceCost[100_000] as number) * 100) / 100,
    baseline: Math.round((surfaceCost[1_000] as number) * 100) / 100,
    at10k: Math.round((surfaceCost[10_000] as number) * 100) / 100
  })
}
