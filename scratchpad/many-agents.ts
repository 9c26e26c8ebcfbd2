/**
 * Many agents in one process (issue 20): N agents each run T turns against a synthetic model that streams C chunks
 * per turn, flat out or paced, over the in-memory or JSONL store. Prints one JSON line:
 * chunks/s, main-thread CPU µs per chunk, event-loop delay p99 (a 10 ms probe timer's lateness), turn latency
 * against the ideal (paced mode), and idle heap per agent after its turns.
 *
 *   npx tsx scratchpad/many-agents.ts --agents 100 --turns 3 --chunks 1200 --mode flat --batch 1 --store memory
 *
 * `--mode paced` sends one batch every 10 ms (a token-like stream); `--store jsonl` writes real session files to a
 * temporary directory. The probe is also what `bench/agents.bench.ts` runs.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as ContentBlock from "../src/Llm/ContentBlock.js"
import * as Llm from "../src/Llm/Llm.js"
import type { LlmAdapter } from "../src/Llm/LlmAdapter.js"
import * as StreamChunk from "../src/Llm/StreamChunk.js"
import * as Agent from "../src/Loop/Agent.js"
import * as Hooks from "../src/Loop/Hooks.js"
import * as SystemPrompt from "../src/Loop/SystemPrompt.js"
import * as Scheduling from "../src/Loop/Scheduling.js"
import * as ToolRuntime from "../src/Loop/ToolRuntime.js"
import * as Jsonl from "../src/Session/persistence/Jsonl.js"
import * as SessionStore from "../src/Session/SessionStore.js"

/** What to run. */
export interface ProbeOptions {
  readonly agents: number
  readonly turns: number
  readonly chunks: number
  readonly mode: "flat" | "paced"
  readonly batch: number
  readonly store: "memory" | "jsonl"
}

/** What was measured. */
export interface ProbeResult extends ProbeOptions {
  readonly totalChunks: number
  readonly seconds: number
  readonly chunksPerSecond: number
  /** main-thread CPU (Linux: the main thread's own time on the CPU; elsewhere the whole process) */
  readonly cpuMicrosPerChunk: number
  /** whole-process CPU (main thread, libuv pool, GC helpers) */
  readonly processCpuMicrosPerChunk: number
  readonly eventLoopDelayP99Ms: number
  readonly turnLatencyMs: number
  readonly idealTurnMs: number
  readonly idleHeapPerAgentBytes: number
}

const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

/**
 * CPU time of the main thread in microseconds: on Linux `/proc/self/task/<pid>/schedstat` (time on the CPU in
 * nanoseconds; the main thread's id is the process id), else its `stat` (utime + stime, in clock ticks of 10 ms);
 * elsewhere the whole process.
 */
const mainThreadCpu = (): number => {
  try {
    const schedstat = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8")
    const ns = Number(schedstat.split(" ")[0])
    if (Number.isFinite(ns) && ns > 0) return ns / 1000
  } catch {
    // no schedstat: the tick counters below
  }
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    const u = process.cpuUsage()
    return u.user + u.system
  }
}

const heap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** One response: a text block of `chunks - 4` one-word deltas, usage and finish. */
const response = (chunks: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const deltas = Math.max(1, chunks - 4)
  const out: Array<StreamChunk.StreamChunk> = [StreamChunk.blockStart(0, "text")]
  let text = ""
  for (let i = 0; i < deltas; i++) {
    const word = `w${i % 10} `
    text += word
    out.push(StreamChunk.textDelta(0, word))
  }
  out.push(StreamChunk.blockEnd(0, ContentBlock.text(text)), StreamChunk.usage({ inputTokens: 10, outputTokens: deltas }))
  out.push(StreamChunk.finish({ kind: "stop" }))
  return out
}

const syntheticAdapter = (options: ProbeOptions): LlmAdapter => {
  const chunks = response(options.chunks)
  return {
    providers: [{ id: "synthetic", name: "Synthetic" }],
    models: [],
    stream: () => {
      const batched = Stream.fromIterable(chunks).pipe(Stream.rechunk(options.batch))
      return options.mode === "paced" ? Stream.schedule(batched, Schedule.spaced("10 millis")) : batched
    }
  }
}

/** Runs the probe once. */
export const probe = (options: ProbeOptions): Promise<ProbeResult> => {
  const root = options.store === "jsonl" ? mkdtempSync(join(tmpdir(), "many-agents-")) : undefined
  const store = root === undefined ? SessionStore.layerMemory : SessionStore.layer.pipe(Layer.provide(Layer.orDie(Jsonl.layer({ root }))))
  const services = Layer.provideMerge(
    Agent.layer,
    Layer.mergeAll(Llm.layer, Hooks.layer, SystemPrompt.layerEmpty, ToolRuntime.layerDefault, store)
  )
  const program = Effect.gen(function*() {
    yield* Llm.register([{ id: "synthetic" }], syntheticAdapter(options))
    const baseline = heap()
    const agents = yield* Effect.forEach(
      Array.from({ length: options.agents }, (_, i) => i),
      () => Agent.make({ provider: "synthetic", model: "probe" }),
      { concurrency: "unbounded" }
    )
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const cpu0 = process.cpuUsage()
    const main0 = mainThreadCpu()
    const t0 = performance.now()
    const latencies: Array<number> = []
    yield* Effect.forEach(
      agents,
      (agent) =>
        Effect.gen(function*() {
          for (let turn = 0; turn < options.turns; turn++) {
            const started = performance.now()
            yield* agent.send([ContentBlock.text(`turn ${turn}`)])
            yield* agent.whenIdle
            latencies.push(performance.now() - started)
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    const seconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const main = mainThreadCpu() - main0
    delay.disable()
    const idle = heap()
    const totalChunks = options.agents * options.turns * options.chunks
    latencies.sort((a, b) => a - b)
    return {
      ...options,
      totalChunks,
      seconds: Math.round(seconds * 1000) / 1000,
      chunksPerSecond: Math.round(totalChunks / seconds),
      cpuMicrosPerChunk: Math.round((main / totalChunks) * 100) / 100,
      processCpuMicrosPerChunk: Math.round(((cpu.user + cpu.system) / totalChunks) * 100) / 100,
      eventLoopDelayP99Ms: Math.round(delay.percentile(99) / 1e4) / 100,
      turnLatencyMs: Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0),
      idealTurnMs: options.mode === "paced" ? Math.ceil(options.chunks / options.batch) * 10 : 0,
      idleHeapPerAgentBytes: Math.round((idle - baseline) / options.agents)
    }
  })
  return Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(services), Effect.provide(Scheduling.layer))).finally(() => {
    if (root !== undefined) rmSync(root, { recursive: true, force: true })
  })
}

const flag = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await probe({
    agents: Number(flag("agents", "100")),
    turns: Number(flag("turns", "3")),
    chunks: Number(flag("chunks", "1200")),
    mode: flag("mode", "flat") === "paced" ? "paced" : "flat",
    batch: Number(flag("batch", "1")),
    store: flag("store", "memory") === "jsonl" ? "jsonl" : "memory"
  })
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
