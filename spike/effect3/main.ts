/**
 * One case of the v3 side, in a fresh process: `--case mini` (this spike's mini-agent probe over `src/`) or
 * `--case full` (the repository's own many-agents probe, `scratchpad/many-agents.ts`: real agents). Prints
 * one JSON line.
 */
import { flag } from "../common/measure.js"
import type { ProbeResult } from "../common/probe-types.js"

const options = {
  agents: Number(flag("agents", "100")),
  turns: Number(flag("turns", "2")),
  chunks: Number(flag("chunks", "100")),
  batch: Number(flag("batch", "1"))
}
const which = flag("case", "mini")
let result: ProbeResult
if (which === "full") {
  const { probe } = await import("../../scratchpad/many-agents.js")
  const r = await probe({ ...options, mode: "flat", store: "jsonl" })
  result = {
    ...options,
    side: "v3-full",
    totalChunks: r.totalChunks,
    seconds: r.seconds,
    cpuMicrosPerChunk: r.cpuMicrosPerChunk,
    timerP99Ms: r.eventLoopDelayP99Ms,
    idleHeapPerAgentBytes: r.idleHeapPerAgentBytes
  }
} else {
  const { probe } = await import("./probe.js")
  result = await probe(options)
}
process.stdout.write(`${JSON.stringify(result)}\n`)
