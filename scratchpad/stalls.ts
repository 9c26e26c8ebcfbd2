/**
 * Where do long event-loop stalls come from (issue 20)? Runs the many-agents probe with a 10 ms interval timer
 * and a GC observer; prints, per gap above `--gap` ms, how much of it GC pauses cover.
 *
 *   npx tsx scratchpad/stalls.ts --agents 100 --turns 3 --chunks 1200 --batch 1 --store memory --gap 30
 */
import { type PerformanceEntry, PerformanceObserver } from "node:perf_hooks"
import { probe } from "./many-agents.js"

const flag = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback
}
const gapMs = Number(flag("gap", "30"))
const gcKind = (e: PerformanceEntry): number => {
  const detail: unknown = "detail" in e ? e.detail : undefined
  return typeof detail === "object" && detail !== null && "kind" in detail && typeof detail.kind === "number" ? detail.kind : -1
}
const gcs: Array<{ start: number; end: number; kind: number }> = []
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcs.push({ start: e.startTime, end: e.startTime + e.duration, kind: gcKind(e) })
  }
})
obs.observe({ entryTypes: ["gc"] })
const hr0 = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000
const gaps: Array<{ at: number; gap: number; cpuMs: number }> = []
let last = performance.now()
let lastCpu = process.cpuUsage()
const timer = setInterval(function probeTick() {
  const now = performance.now()
  const cpu = process.cpuUsage()
  if (now - last > gapMs) gaps.push({ at: now, gap: now - last, cpuMs: (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000 })
  last = now
  lastCpu = cpu
}, 10)
const result = await probe({
  agents: Number(flag("agents", "100")),
  turns: Number(flag("turns", "3")),
  chunks: Number(flag("chunks", "1200")),
  mode: "flat",
  batch: Number(flag("batch", "1")),
  store: flag("store", "memory") === "jsonl" ? "jsonl" : "memory"
})
clearInterval(timer)
await new Promise((r) => setTimeout(r, 50))
obs.disconnect()
let gcTotal = 0
for (const g of gaps) {
  const from = g.at - g.gap
  const inGap = gcs.filter((c) => c.end > from && c.start < g.at)
  const gcMs = inGap.reduce((s, c) => s + Math.min(c.end, g.at) - Math.max(c.start, from), 0)
  gcTotal += gcMs
  process.stderr.write(`at ${(from / 1000).toFixed(2)} s (hr ${Math.round(hr0 + from * 1000)} us): gap ${g.gap.toFixed(1)} ms, process cpu ${g.cpuMs.toFixed(1)} ms, gc ${gcMs.toFixed(1)} ms (${inGap.map((c) => `${c.kind}:${(c.end - c.start).toFixed(1)}`).join(" ")})\n`)
}
process.stdout.write(`${JSON.stringify({ p99: result.eventLoopDelayP99Ms, gaps: gaps.length, gcMsInGaps: Math.round(gcTotal), gcCount: gcs.length, gcMsTotal: Math.round(gcs.reduce((s, c) => s + c.end - c.start, 0)) })}\n`)
