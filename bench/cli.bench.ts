/**
 * CLI cold start (issue 7): wall time of a fresh `node dist-bundle/harness.mjs` process, against
 * a bare `node -e ""` measured in the same run.
 *
 * 1. `cli.coldstart.version`: `harness --version`. Target: ratio ≤ 3.
 * 2. `cli.coldstart.run`: `harness run "hi"` on the offline default (no API key, a fresh
 *    `EFFECT_HARNESS_HOME` temp dir per run, a small temp workspace): a whole demo turn with its
 *    `ls` tool call, session log written and closed.
 *
 * Method: one warm-up of each command, then `RUNS` rounds; each round runs the three commands
 * back to back (baseline first), so load on this shared machine hits all three alike; the value is
 * the median over the rounds. The bundle is rebuilt with `npm run bundle` first when it is missing
 * or older than a file under `src/` or `package.json`.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { median, report } from "./Bench.js"

const RUNS = 11

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const bundle = join(root, "dist-bundle", "harness.mjs")

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(abs) : statSync(abs).mtimeMs)
  }
  return newest
}

const ensureBundle = (): void => {
  const sources = Math.max(newestMtime(join(root, "src")), statSync(join(root, "package.json")).mtimeMs)
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= sources) return
  execFileSync("npm", ["run", "--silent", "bundle"], { cwd: root, stdio: "inherit" })
}

/** The environment of a user with no API key and a fresh harness home. */
const offlineEnv = (home: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(DEEPSEEK_|ANTHROPIC_|OPENAI_|EFFECT_HARNESS_|NODE_OPTIONS$)/.test(k)) env[k] = v
  }
  return { ...env, EFFECT_HARNESS_HOME: home, NO_COLOR: "1" }
}

/** Spawns `node ...args` and returns its wall time in ms; fails on a non-zero exit. */
const wall = (args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv }): number => {
  const t0 = performance.now()
  const result = spawnSync(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
  const ms = performance.now() - t0
  if (result.status !== 0) {
    throw new Error(`node ${args.join(" ")} exited ${String(result.status)}: ${String(result.stderr).slice(0, 500)}`)
  }
  return ms
}

export async function run(): Promise<void> {
  ensureBundle()
  const scratch = mkdtempSync(join(tmpdir(), "harness-bench-cli-"))
  try {
    const workspace = join(scratch, "ws")
    mkdirSync(workspace)
    writeFileSync(join(workspace, "README.md"), "# bench\n")
    writeFileSync(join(workspace, "main.ts"), "export const x = 1\n")
    let homes = 0
    const freshHome = () => mkdtempSync(join(scratch, `home-${homes++}-`))
    const baseEnv = offlineEnv(freshHome())

    const bare = () => wall(["-e", ""], { cwd: workspace, env: baseEnv })
    const version = () => wall([bundle, "--version"], { cwd: workspace, env: baseEnv })
    const runHi = () => wall([bundle, "run", "hi"], { cwd: workspace, env: offlineEnv(freshHome()) })

    bare()
    version()
    runHi()
    const times = { bare: [] as Array<number>, version: [] as Array<number>, run: [] as Array<number> }
    for (let i = 0; i < RUNS; i++) {
      times.bare.push(bare())
      times.version.push(version())
      times.run.push(runHi())
    }
    const baseline = median(times.bare)
    const round = (x: number) => Math.round(x * 10) / 10
    report({
      bench: "cli.coldstart.version",
      unit: "ms",
      value: round(median(times.version)),
      baseline: round(baseline),
      runs: RUNS,
      target: "ratio <= 3 (node dist-bundle/harness.mjs --version vs node -e \"\")"
    })
    report({
      bench: "cli.coldstart.run",
      unit: "ms",
      value: round(median(times.run)),
      baseline: round(baseline),
      runs: RUNS,
      note: "harness run \"hi\" on the offline demo (2 steps, ls tool, JSONL log) vs node -e \"\""
    })
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
