/**
 * Many agents in one process (issue 20), through `scratchpad/many-agents.ts`'s probe: real agents
 * over a session store and a synthetic model that streams as fast as it is read. CPU is the main
 * thread's own (Linux `/proc/self/task/<pid>/schedstat`, nanoseconds; elsewhere the whole process).
 *
 * - `agents.per-batch-cost`: main-thread µs per chunk with one chunk per stream batch, against
 *   batches of 32 (10 agents, one 1,200-chunk turn each, in-memory store: the loop's own cost;
 *   the median of three interleaved rounds). Target: ≤ 30 µs.
 * - `agents.per-batch-cost.batch-5`: the same with batches of 5. Target: ≤ 10 µs.
 * - `agents.per-batch-cost.jsonl`: one chunk per batch against batches of 32 over the JSONL store
 *   (DEC-11 write-through: one `write` per batch).
 * - `agents.n-<N>` (N = 10, 100, 500; JSONL; 2 turns of 100 chunks in batches of 8 each): chunks/s
 *   against the N = 10 figure, with main-thread µs per chunk, event-loop delay p99 (10 ms
 *   resolution) and idle heap per agent after its turns (target ≤ 100 KB).
 *
 * Wall-clock figures (chunks/s, delay) depend on what else runs on the machine; CPU per chunk and
 * heap per agent much less.
 */
import { probe, type ProbeResult } from "../scratchpad/many-agents.js"
import { report } from "./Bench.js"

/** Runs the rows. */
export const run = async (): Promise<void> => {
  const batch = (size: number, store: "memory" | "jsonl", agents = 10, chunks = 1_200) =>
    probe({ agents, turns: 1, chunks, mode: "flat", batch: size, store })
  await batch(32, "memory", 10, 300) // warm-up
  // interleaved rounds, so each size sees the same machine load; the median round of each
  const rounds: Array<{ readonly b32: ProbeResult; readonly b1: ProbeResult; readonly b5: ProbeResult }> = []
  for (let round = 0; round < 3; round++) {
    rounds.push({ b32: await batch(32, "memory"), b1: await batch(1, "memory"), b5: await batch(5, "memory") })
  }
  const median = (pick: (r: (typeof rounds)[number]) => ProbeResult): ProbeResult =>
    rounds.map(pick).sort((x, y) => x.cpuMicrosPerChunk - y.cpuMicrosPerChunk)[1]!
  const b32 = median((r) => r.b32)
  const b1 = median((r) => r.b1)
  const b5 = median((r) => r.b5)
  report({
    bench: "agents.per-batch-cost",
    unit: "main-thread µs per chunk, one chunk per batch (lower is better); baseline = batches of 32",
    value: b1.cpuMicrosPerChunk,
    baseline: b32.cpuMicrosPerChunk,
    targetMicros: 30,
    processCpuMicrosPerChunk: b1.processCpuMicrosPerChunk
  })
  report({
    bench: "agents.per-batch-cost.batch-5",
    unit: "main-thread µs per chunk, batches of 5 (lower is better); baseline = batches of 32",
    value: b5.cpuMicrosPerChunk,
    baseline: b32.cpuMicrosPerChunk,
    targetMicros: 10,
    processCpuMicrosPerChunk: b5.processCpuMicrosPerChunk
  })
  const j32 = await batch(32, "jsonl", 10, 400)
  const j1 = await batch(1, "jsonl", 10, 400)
  report({
    bench: "agents.per-batch-cost.jsonl",
    unit: "main-thread µs per chunk over JSONL, one chunk per batch (lower is better); baseline = batches of 32",
    value: j1.cpuMicrosPerChunk,
    baseline: j32.cpuMicrosPerChunk,
    processCpuMicrosPerChunk: j1.processCpuMicrosPerChunk
  })
  let base: number | undefined
  for (const agents of [10, 100, 500]) {
    const r = await probe({ agents, turns: 2, chunks: 100, mode: "flat", batch: 8, store: "jsonl" })
    base ??= r.chunksPerSecond
    report({
      bench: `agents.n-${agents}`,
      unit: "chunks/s (higher is better); baseline = the N = 10 figure",
      value: r.chunksPerSecond,
      baseline: base,
      cpuMicrosPerChunk: r.cpuMicrosPerChunk,
      eventLoopDelayP99Ms: r.eventLoopDelayP99Ms,
      idleHeapPerAgentBytes: r.idleHeapPerAgentBytes,
      idleHeapTargetBytes: 100_000,
      turnLatencyMs: r.turnLatencyMs
    })
  }
}
