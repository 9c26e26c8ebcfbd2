/**
 * Assembler throughput (issue 2): `BlockAssembler.sink` fed by a `Stream` that delivers chunks in
 * batches of 32 (as an SSE decoder produces them) against the same pure fold (`foldAll`) driven by
 * a plain `for` loop over the same array, in the same run. Three shapes:
 * (a) 200k text deltas of ~4 chars, (b) one tool call of 50k argument fragments,
 * (c) 150k deltas interleaved round-robin over a reasoning, a text and a tool-call block.
 * Both sides finish with `assemble` (blocks, usage, finish), so the work compared is identical.
 *
 * Memory: retained heap after folding a flood of 1M late deltas after `block-end` through the Sink
 * (value) against the retained heap after 1M iterations of a no-op loop (baseline). Both are
 * measured after a full GC (`--expose-gc`, or V8's flag set at run time when absent).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../src/Llm/ContentBlock.js"
import * as StreamChunk from "../src/Llm/StreamChunk.js"
import { report, timeMs } from "./Bench.js"

const S = StreamChunk
const BATCH = 32
const RUNS = 5

const textDeltas = (n: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const out: Array<StreamChunk.StreamChunk> = [S.blockStart(0, "text")]
  for (let i = 0; i < n; i++) out.push(S.textDelta(0, `tok${i % 10}`))
  out.push(S.usage({ inputTokens: 10, outputTokens: n }), S.finish({ kind: "stop" }))
  return out
}

const toolFragments = (n: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const out: Array<StreamChunk.StreamChunk> = [S.blockStart(0, "tool-call"), S.toolCallDelta(0, "call_1", "{\"k\":\"", "write")]
  for (let i = 0; i < n; i++) out.push(S.toolCallDelta(0, "call_1", `x${i % 10}`))
  out.push(S.toolCallDelta(0, "call_1", "\"}"), S.usage({ inputTokens: 10, outputTokens: n }), S.finish({ kind: "tool-calls" }))
  return out
}

const interleaved = (n: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const out: Array<StreamChunk.StreamChunk> = [
    S.blockStart(0, "reasoning"),
    S.blockStart(1, "text"),
    S.blockStart(2, "tool-call")
  ]
  for (let i = 0; i < n; i++) {
    switch (i % 3) {
      case 0:
        out.push(S.reasoningDelta(0, `r${i % 10}`))
        break
      case 1:
        out.push(S.textDelta(1, `tx${i % 10}`))
        break
      default:
        out.push(S.toolCallDelta(2, "call_2", `a${i % 10}`, i === 2 ? "tool" : undefined))
    }
  }
  out.push(S.usage({ inputTokens: 10, outputTokens: n }), S.finish({ kind: "tool-calls" }))
  return out
}

const batches = (chunks: ReadonlyArray<StreamChunk.StreamChunk>): Array<ReadonlyArray<StreamChunk.StreamChunk>> => {
  const out: Array<ReadonlyArray<StreamChunk.StreamChunk>> = []
  for (let i = 0; i < chunks.length; i += BATCH) out.push(chunks.slice(i, i + BATCH))
  return out
}

const viaSink = (batched: Array<ReadonlyArray<StreamChunk.StreamChunk>>) =>
  Effect.runPromise(Stream.run(Stream.fromArrays(...batched), BlockAssembler.sink))

const viaLoop = (chunks: ReadonlyArray<StreamChunk.StreamChunk>) => {
  const state = BlockAssembler.foldAll(chunks)
  return Result.getOrThrow(BlockAssembler.assemble(state))
}

const throughput = async (name: string, chunks: ReadonlyArray<StreamChunk.StreamChunk>) => {
  const batched = batches(chunks)
  // sanity: both sides assemble the same response
  const a = await viaSink(batched)
  const b = viaLoop(chunks)
  if (JSON.stringify(a.blocks) !== JSON.stringify(b.blocks)) throw new Error(`${name}: sink and loop disagree`)
  // alternate the two sides so machine noise hits both alike
  const sinkMs: Array<number> = []
  const loopMs: Array<number> = []
  for (let i = 0; i < 2; i++) {
    sinkMs.push(await timeMs(RUNS, () => viaSink(batched)))
    loopMs.push(await timeMs(RUNS, () => viaLoop(chunks)))
  }
  const best = (xs: ReadonlyArray<number>) => Math.min(...xs)
  const value = chunks.length / (best(sinkMs) / 1000)
  const baseline = chunks.length / (best(loopMs) / 1000)
  report({ bench: `assembler/${name}`, unit: "chunks/s", value: Math.round(value), baseline: Math.round(baseline), chunks: chunks.length, batch: BATCH })
}

const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

const retained = async (f: () => Promise<unknown>): Promise<number> => {
  gc()
  gc()
  const before = process.memoryUsage().heapUsed
  const kept = await f()
  gc()
  gc()
  const after = process.memoryUsage().heapUsed
  if (kept === undefined) throw new Error("nothing kept")
  return after - before
}

const memory = async () => {
  const N = 1_000_000
  const closed = [S.blockStart(0, "text"), S.textDelta(0, "done"), S.blockEnd(0, ContentBlock.text("done"))]
  const late = S.textDelta(0, "late")
  const flood = Stream.concat(
    Stream.fromIterable(closed),
    Stream.succeed(late).pipe(Stream.forever, Stream.take(N), Stream.rechunk(BATCH))
  )
  // warm up both paths once
  await Effect.runPromise(Stream.run(flood, BlockAssembler.stateSink))
  const values: Array<number> = []
  const baselines: Array<number> = []
  for (let i = 0; i < 2; i++) {
    values.push(await retained(() => Effect.runPromise(Stream.run(flood, BlockAssembler.stateSink))))
    baselines.push(
      await retained(async () => {
        let x = 0
        for (let j = 0; j < N; j++) x = (x + 1) | 0
        return { x }
      })
    )
  }
  const value = Math.max(0, Math.min(...values))
  const baseline = Math.max(0, Math.min(...baselines))
  const state = await Effect.runPromise(Stream.run(flood, BlockAssembler.stateSink))
  if (state.slots.length !== 1 || state.chunks !== closed.length) throw new Error("late deltas were not ignored")
  // both are a few hundred bytes of noise; compare on a 1 KiB floor so the ratio stays meaningful
  report({
    bench: "assembler/late-delta-flood-retained",
    unit: "bytes",
    value,
    baseline,
    ratio: Math.max(value, 1024) / Math.max(baseline, 1024),
    lateDeltas: N
  })
}

/** `deltas` text deltas spread round-robin over `blocks` text blocks (every block opened first). */
const spread = (blocks: number, deltas: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const out: Array<StreamChunk.StreamChunk> = []
  for (let b = 0; b < blocks; b++) out.push(S.blockStart(b, "text"))
  for (let i = 0; i < deltas; i++) out.push(S.textDelta(i % blocks, `t${i % 10}`))
  out.push(S.usage({ inputTokens: 10, outputTokens: deltas }), S.finish({ kind: "stop" }))
  return out
}

/**
 * Blocks scaling (issue 17): the Sink's cost per chunk with 100, 1,000 and 10,000 open blocks against the same
 * number of chunks on one block, in the same run. A fold that is O(1) per chunk stays near ratio 1.
 */
const blocksScaling = async () => {
  const DELTAS = 200_000
  const perChunkNs = async (blocks: number) => {
    const chunks = spread(blocks, DELTAS)
    const batched = batches(chunks)
    const ms: Array<number> = []
    for (let i = 0; i < 2; i++) ms.push(await timeMs(RUNS, () => viaSink(batched)))
    return (Math.min(...ms) * 1e6) / chunks.length
  }
  const one = await perChunkNs(1)
  for (const blocks of [100, 1_000, 10_000]) {
    const value = await perChunkNs(blocks)
    const baseline = Math.min(one, await perChunkNs(1))
    report({ bench: `assembler/blocks-scaling-${blocks}`, unit: "ns/chunk", value: Math.round(value), baseline: Math.round(baseline), blocks, deltas: DELTAS })
  }
}

/** Runs the assembler benchmarks. */
export async function run(): Promise<void> {
  await throughput("text-200k", textDeltas(200_000))
  await throughput("tool-call-50k", toolFragments(50_000))
  await throughput("interleaved-150k", interleaved(150_000))
  await blocksScaling()
  await memory()
}
