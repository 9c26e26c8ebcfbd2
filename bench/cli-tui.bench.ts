/**
 * The chat terminal UI's cost for everything else (issue 15, decision 0013): the bundle with the
 * TUI (pi-tui, loaded lazily by `harness chat` on a terminal) against the same sources bundled
 * with the TUI module replaced by an empty stub, built in the same run.
 *
 * 1. `cli-tui.bundle.bytes`: bundle size, with vs without the TUI.
 * 2. `cli-tui.coldstart.version`: wall time of `harness --version`, with vs without.
 * 3. `cli-tui.coldstart.run`: wall time of `harness run` with a one-answer `--script`, with vs
 *    without. Target: ratio ≈ 1 (the TUI must not slow `run`).
 *
 * 4. `cli-tui.cputime.version` / `cli-tui.cputime.run`: the same runs' CPU time (user + system,
 *    from the reaped children's counters in `/proc/self/stat`, Linux only): steadier than wall time
 *    on a loaded machine.
 *
 * Method: one warm-up of each, then `RUNS` rounds running both bundles, in alternating order (so
 * load on this shared machine hits both alike); the value is the median over the rounds.
 */
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundleOptions } from "../test/support/Cli.js"
import { median, report } from "./Bench.js"

const RUNS = 11

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const build = async (outfile: string, withTui: boolean): Promise<void> => {
  const stub: esbuild.Plugin = {
    name: "stub-tui",
    setup: (b) => {
      b.onResolve({ filter: /tui\/ChatTui\.js$/ }, () => ({ path: "ChatTui", namespace: "stub" }))
      b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export const run = () => { throw new Error('stub') }" }))
    }
  }
  // the `bundle` script's options (the ones spawned-CLI tests use), with the TUI stubbed out or not
  await esbuild.build({ ...bundleOptions(outfile), plugins: withTui ? [] : [stub] })
}

// CPU time (ms) of this process's reaped children: cutime + cstime (fields 16, 17; 100 ticks/s)
const childrenCpuMs = (): number => {
  if (!existsSync("/proc/self/stat")) return Number.NaN
  const stat = readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[13]) + Number(fields[14])) * 10
}

/** Spawns `node ...args`: its wall time and CPU time in ms; fails on a non-zero exit. */
const measure = (args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv): { wall: number; cpu: number } => {
  const cpu0 = childrenCpuMs()
  const t0 = performance.now()
  const result = spawnSync(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
  const wall = performance.now() - t0
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${String(result.status)}: ${String(result.stderr)}`)
  return { wall, cpu: childrenCpuMs() - cpu0 }
}

export async function run(): Promise<void> {
  const dir = join(root, ".tmp", "bench-cli-tui")
  mkdirSync(dir, { recursive: true })
  const withTui = join(dir, "with.mjs")
  const without = join(dir, "without.mjs")
  await build(withTui, true)
  await build(without, false)
  report({
    bench: "cli-tui.bundle.bytes",
    unit: "bytes (lower is better)",
    value: statSync(withTui).size,
    baseline: statSync(without).size
  })
  const scratch = mkdtempSync(join(tmpdir(), "harness-bench-cli-tui-"))
  try {
    const ws = join(scratch, "ws")
    mkdirSync(ws)
    const script = join(scratch, "script.json")
    writeFileSync(script, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "hi" }] }))
    const env: NodeJS.ProcessEnv = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (!/^(DEEPSEEK_|ANTHROPIC_|OPENAI_|EFFECT_HARNESS_|NODE_OPTIONS$)/.test(k)) env[k] = v
    }
    let homes = 0
    const home = () => ({ ...env, EFFECT_HARNESS_HOME: mkdtempSync(join(scratch, `home-${homes++}-`)), NO_COLOR: "1" })
    const version = (bundle: string) => measure([bundle, "--version"], ws, home())
    const runOnce = (bundle: string) => measure([bundle, "run", "--provider", "scripted", "--script", script, "hi"], ws, home())
    for (const b of [without, withTui]) {
      version(b)
      runOnce(b)
    }
    const samples = { version: [[], []] as Array<Array<{ wall: number; cpu: number }>>, run: [[], []] as Array<Array<{ wall: number; cpu: number }>> }
    for (let i = 0; i < RUNS; i++) {
      // the order alternates between rounds: whichever runs second was measurably favoured
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
        const b = k === 0 ? without : withTui
        samples.version[k]!.push(version(b))
        samples.run[k]!.push(runOnce(b))
      }
    }
    for (const name of ["version", "run"] as const) {
      for (const metric of ["wall", "cpu"] as const) {
        const of = (k: number) => Math.round(median(samples[name][k]!.map((x) => x[metric])))
        if (Number.isNaN(of(0))) continue
        report({
          bench: `cli-tui.${metric === "wall" ? "coldstart" : "cputime"}.${name}`,
          unit: "ms (lower is better)",
          value: of(1),
          baseline: of(0)
        })
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
