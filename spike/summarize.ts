/**
 * Summarizes one or more `spike/run-bench.sh` result files: the median over rounds of every row, per side,
 * and the v4/v3 ratios (v4-mini against v3-mini, the like-for-like pair; v3-full shown for scale), plus the
 * per-chunk and per-turn split of main-thread CPU from the 100- and 1,000-chunk turns
 * (cpu/chunk = a + T / chunks). Prints a Markdown table.
 *
 *   node --import tsx spike/summarize.ts spike/results/<file>.jsonl [more files]
 */
import { readFileSync } from "node:fs"

interface Row {
  readonly [key: string]: unknown
}

const rows: Array<Row> = []
const loads: Array<string> = []
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue
    const r = JSON.parse(line) as Row
    if ("load" in r) loads.push(`${r["at"] as string} ${r["load"] as string}`)
    else rows.push(r)
  }
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? (Math.round(x * 10 ** digits) / 10 ** digits).toString() : "–")
const pick = (filter: (r: Row) => boolean, key: string) => median(rows.filter(filter).map((r) => r[key] as number))

const out: Array<string> = []
out.push(`rounds: ${Math.max(0, ...rows.map((r) => (r["round"] as number) ?? 0))}; load (1/5/15 min) at each round start and at the end: ${loads.join(" | ")}`)
out.push("")
out.push("| row (median of rounds) | v3-full | v3-mini | v4-mini | v4/v3 (mini) | v4-mini / v3-full |")
out.push("|---|---|---|---|---|---|")
const agentRow = (label: string, chunks: number, key: string, digits = 2, scale = 1) => {
  const of = (side: string) => pick((r) => r["side"] === side && r["chunks"] === chunks && r["agents"] === 100, key) * scale
  const [full, v3, v4] = [of("v3-full"), of("v3-mini"), of("v4-mini")]
  out.push(`| ${label} | ${fmt(full, digits)} | ${fmt(v3, digits)} | ${fmt(v4, digits)} | ${fmt(v4 / v3, 3)} | ${fmt(v4 / full, 3)} |`)
  return { full, v3, v4 }
}
const c100 = agentRow("main-thread µs per chunk, 100 agents, 100-chunk turns", 100, "cpuMicrosPerChunk")
const c1000 = agentRow("main-thread µs per chunk, 100 agents, 1,000-chunk turns", 1000, "cpuMicrosPerChunk")
const split = (c1: number, c2: number) => {
  const perTurn = (c1 - c2) / (1 / 100 - 1 / 1000)
  return { perChunk: c2 - perTurn / 1000, perTurnMs: perTurn / 1000 }
}
const s = { full: split(c100.full, c1000.full), v3: split(c100.v3, c1000.v3), v4: split(c100.v4, c1000.v4) }
out.push(`| → per chunk (µs, from the two turn lengths) | ${fmt(s.full.perChunk)} | ${fmt(s.v3.perChunk)} | ${fmt(s.v4.perChunk)} | ${fmt(s.v4.perChunk / s.v3.perChunk, 3)} | ${fmt(s.v4.perChunk / s.full.perChunk, 3)} |`)
out.push(`| → per turn (ms of main thread) | ${fmt(s.full.perTurnMs, 3)} | ${fmt(s.v3.perTurnMs, 3)} | ${fmt(s.v4.perTurnMs, 3)} | ${fmt(s.v4.perTurnMs / s.v3.perTurnMs, 3)} | ${fmt(s.v4.perTurnMs / s.full.perTurnMs, 3)} |`)
agentRow("idle heap per agent (KB), after 2 turns of 100 chunks", 100, "idleHeapPerAgentBytes", 1, 1 / 1000)
agentRow("idle heap per agent (KB), after 2 turns of 1,000 chunks", 1000, "idleHeapPerAgentBytes", 1, 1 / 1000)
agentRow("10 ms timer p99 lateness (ms), 100-chunk turns", 100, "timerP99Ms")
agentRow("10 ms timer p99 lateness (ms), 1,000-chunk turns", 1000, "timerP99Ms")
agentRow("wall seconds, 1,000-chunk turns", 1000, "seconds")

out.push("")
out.push("| stream / session row (CPU ms, best of 3 per run; median of rounds) | v3 value / baseline = ratio | v4 value / baseline = ratio | v4/v3 (value) |")
out.push("|---|---|---|---|")
const benches = [...new Set(rows.filter((r) => typeof r["bench"] === "string").map((r) => r["bench"] as string))]
for (const bench of benches) {
  const side = (s: string) => ({
    value: pick((r) => r["bench"] === bench && r["side"] === s, "value"),
    baseline: pick((r) => r["bench"] === bench && r["side"] === s, "baseline"),
    ratio: pick((r) => r["bench"] === bench && r["side"] === s, "ratio")
  })
  const a = side("v3")
  const b = side("v4")
  out.push(`| ${bench} | ${fmt(a.value, 1)} / ${fmt(a.baseline, 1)} = ${fmt(a.ratio)} | ${fmt(b.value, 1)} / ${fmt(b.baseline, 1)} = ${fmt(b.ratio)} | ${fmt(b.value / a.value, 3)} |`)
}
process.stdout.write(`${out.join("\n")}\n`)
