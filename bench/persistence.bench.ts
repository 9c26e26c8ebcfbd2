/**
 * Durable sessions (issue 5): write and load of a ~100k-event session through the JSONL and
 * SQLite backends, against plain `fs` in the same run.
 *
 * - write: the log appended one turn per batch (~95 events, as the flush at every turn end does),
 *   each batch durable (fsync / committed transaction). Baseline: plain `fs` appending the same
 *   JSON lines to one open file with an fsync per batch.
 * - write-through (DEC-11): the first `WT_N` events of the same log appended through a live
 *   `SessionStore` session the way the loop does (one append per event, each written through before
 *   the append returns; fsync at every step end and turn end). Baseline: the same events through a
 *   bare `Session` buffering every commit and appending one durable batch per turn end (the
 *   replaced D-7 path). Target: ≤ 1.3x.
 * - load: a fresh backend instance loads the session (`load` = read, validation of every event,
 *   torn-tail scan and the repair scan). Baseline: `readFile` + split + `JSON.parse` of every line.
 *   Target for JSONL: ≤ 2x.
 * - peak memory of the 100k load: each variant runs in a fresh child process (`--expose-gc`, an
 *   esbuild bundle of this file); `maxRSS` from `process.resourceUsage()`, and the `heapUsed` growth
 *   over the load with the result alive.
 *
 * Load timings interleave baseline, JSONL and SQLite runs (median of each), so that load from other
 * processes on the machine hits all three alike.
 */
import * as Effect from "effect/Effect"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { SessionId } from "../src/Llm/Message.js"
import * as Jsonl from "../src/Session/persistence/Jsonl.js"
import * as Records from "../src/Session/persistence/Records.js"
import type { SessionEvent } from "../src/Session/SessionEvent.js"
import * as Session from "../src/Session/Session.js"
import type { AppendInput } from "../src/Session/SessionEvent.js"
import type { Service } from "../src/Session/SessionPersistence.js"
import { SessionPersistence } from "../src/Session/SessionPersistence.js"
import * as SessionStore from "../src/Session/SessionStore.js"
import { bigLog, header } from "../test/support/sessionLog.js"
import { jsonlBackend, round, sqliteBackend, time, turns, withBackend } from "./Backends.js"
import { median, report } from "./Bench.js"

const N = 100_000
const ID = "bench-100k" as SessionId
const CHILD_ENV = "PERSISTENCE_BENCH_CHILD"

const baselineLoad = async (file: string): Promise<number> => {
  const text = await fsp.readFile(file, "utf8")
  const lines = text.split("\n")
  let n = 0
  for (const line of lines) {
    if (line.length === 0) continue
    JSON.parse(line)
    n++
  }
  return n
}

/** Child mode: one load, then memory figures as JSON on stdout. */
const child = async (mode: string, location: string): Promise<void> => {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  let kept: unknown
  if (mode === "baseline") {
    const text = await fsp.readFile(location, "utf8")
    kept = text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as unknown)
  } else {
    kept = await withBackend(mode === "jsonl" ? jsonlBackend(location) : sqliteBackend(location), (p) => p.load(ID))
  }
  gc?.()
  const heapAfter = process.memoryUsage().heapUsed
  process.stdout.write(JSON.stringify({
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    heapUsedMB: (heapAfter - heapBefore) / 1024 / 1024,
    kept: Array.isArray(kept) ? kept.length : (kept as { events: ReadonlyArray<unknown> }).events.length
  }))
}

const memoryOf = (bundle: string, mode: string, location: string): { maxRssMB: number; heapUsedMB: number; kept: number } => {
  const r = spawnSync(process.execPath, ["--expose-gc", bundle], {
    env: { ...process.env, [CHILD_ENV]: JSON.stringify([mode, location]) },
    encoding: "utf8"
  })
  if (r.status !== 0) throw new Error(`memory child ${mode} failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as { maxRssMB: number; heapUsedMB: number; kept: number }
}

/** events of the write-through comparison */
const WT_N = 20_000

/** What the loop appends for a stored event (seq and time are assigned by the session). */
const inputOf = (e: SessionEvent): AppendInput => {
  const { seq: _seq, time: _time, ...input } = e
  return input as unknown as AppendInput
}

/** The write-through path: a live store session, one append per event. */
const writeThrough = (p: Service, inputs: ReadonlyArray<AppendInput>, id: string) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* SessionStore.make.pipe(Effect.provideService(SessionPersistence, p))
    const session = yield* store.create({ id, cwd: "/bench" })
    for (const input of inputs) yield* session.append(input)
    yield* store.flush(id)
  }))

/** The replaced D-7 path: commits buffered, one durable append per turn end. */
const turnEndOnly = (p: Service, inputs: ReadonlyArray<AppendInput>, id: string) =>
  Effect.gen(function*() {
    const buffer: Array<SessionEvent> = []
    const h = header(id, "/bench")
    yield* p.create(h)
    const session = yield* Session.make({ header: h, onCommit: (e) => buffer.push(e) })
    for (const input of inputs) {
      const event = yield* session.append(input)
      if (event.type === "turn/end") yield* p.append(h.id, buffer.splice(0, buffer.length))
    }
    yield* p.append(h.id, buffer.splice(0, buffer.length))
  })

const writeThroughRows = async (dir: string, events: ReadonlyArray<SessionEvent>) => {
  const inputs = events.slice(0, WT_N).map(inputOf)
  const runs = { jsonl: { wt: [] as Array<number>, base: [] as Array<number> }, sqlite: { wt: [] as Array<number>, base: [] as Array<number> } }
  for (let r = 0; r < 3; r++) {
    const root = path.join(dir, `wt-${r}`)
    runs.jsonl.base.push(await time(() => withBackend(jsonlBackend(root), (p) => turnEndOnly(p, inputs, `base-${r}`))))
    runs.jsonl.wt.push(await time(() => withBackend(jsonlBackend(root), (p) => writeThrough(p, inputs, `wt-${r}`))))
    const file = path.join(dir, `wt-${r}.sqlite`)
    runs.sqlite.base.push(await time(() => withBackend(sqliteBackend(file), (p) => turnEndOnly(p, inputs, `base-${r}`))))
    runs.sqlite.wt.push(await time(() => withBackend(sqliteBackend(file), (p) => writeThrough(p, inputs, `wt-${r}`))))
  }
  const turnsN = inputs.filter((i) => i.type === "turn/end").length
  for (const name of ["jsonl", "sqlite"] as const) {
    report({
      bench: `persistence.writeThrough${WT_N / 1000}k.${name}`,
      unit: "ms (lower is better; baseline = same log buffered and written at turn end only)",
      value: round(median(runs[name].wt)),
      baseline: round(median(runs[name].base)),
      target: "<= 1.3",
      events: inputs.length,
      turns: turnsN
    })
  }
}

export async function run(): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "harness-bench-persistence-"))
  try {
    const events = bigLog(N)
    const batches = turns(events)
    const bytes = events.reduce((n, e) => n + Buffer.byteLength(Records.encodeEvent(e)) + 1, 0)

    // -- write ----------------------------------------------------------------------------------
    const plainFile = path.join(dir, "plain.jsonl")
    const plainWrite = await time(async () => {
      const fh = await fsp.open(plainFile, "a")
      for (const batch of batches) {
        await fh.write(batch.map((e) => `${JSON.stringify(e)}\n`).join(""))
        await fh.sync()
      }
      await fh.close()
    })
    const jsonlRoot = path.join(dir, "jsonl")
    const jsonlWrite = await time(() =>
      withBackend(jsonlBackend(jsonlRoot), (p) =>
        Effect.gen(function*() {
          yield* p.create(header(ID, "/bench"))
          for (const batch of batches) yield* p.append(ID, batch)
        })))
    const sqliteFile = path.join(dir, "sessions.sqlite")
    const sqliteWrite = await time(() =>
      withBackend(sqliteBackend(sqliteFile), (p) =>
        Effect.gen(function*() {
          yield* p.create(header(ID, "/bench"))
          for (const batch of batches) yield* p.append(ID, batch)
        })))
    const common = { events: events.length, batches: batches.length, MB: round(bytes / 1024 / 1024) }
    report({ bench: "persistence.write100k.jsonl", unit: "ms (lower is better)", value: round(jsonlWrite), baseline: round(plainWrite), ...common })
    report({ bench: "persistence.write100k.sqlite", unit: "ms (lower is better)", value: round(sqliteWrite), baseline: round(plainWrite), ...common })
    await writeThroughRows(dir, events)

    // -- load (interleaved) -----------------------------------------------------------------------
    const bucket = path.join(jsonlRoot, Jsonl.bucketOf("/bench"))
    const jsonlPath = path.join(bucket, fs.readdirSync(bucket).find((f) => f.endsWith(".jsonl"))!)
    const check = await withBackend(jsonlBackend(jsonlRoot), (p) => p.load(ID))
    const checkSqlite = await withBackend(sqliteBackend(sqliteFile), (p) => p.load(ID))
    if (
      check.events.length !== events.length || check.repaired.length !== 0 ||
      checkSqlite.events.length !== events.length || checkSqlite.repaired.length !== 0
    ) throw new Error("bench log did not round-trip")
    const runs = { base: [] as Array<number>, jsonl: [] as Array<number>, sqlite: [] as Array<number> }
    for (let r = 0; r < 5; r++) {
      runs.base.push(await time(() => baselineLoad(jsonlPath)))
      runs.jsonl.push(await time(() => withBackend(jsonlBackend(jsonlRoot), (p) => p.load(ID))))
      runs.sqlite.push(await time(() => withBackend(sqliteBackend(sqliteFile), (p) => p.load(ID))))
    }
    const base = median(runs.base)
    report({ bench: "persistence.load100k.jsonl", unit: "ms (lower is better)", value: round(median(runs.jsonl)), baseline: round(base), target: "<= 2", ...common })
    report({ bench: "persistence.load100k.sqlite", unit: "ms (lower is better)", value: round(median(runs.sqlite)), baseline: round(base), ...common })

    // -- peak memory of one load, each in a fresh process ------------------------------------------
    // inside the project, so that the external better-sqlite3 resolves from its node_modules
    const bundle = fileURLToPath(new URL(`../node_modules/.cache/effect-harness-bench/persistence-child-${process.pid}.mjs`, import.meta.url))
    await esbuild.build({
      entryPoints: [fileURLToPath(import.meta.url)],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: bundle,
      external: ["better-sqlite3", "esbuild"],
      banner: { js: `import { createRequire as __cr } from "node:module"; const require = __cr(${JSON.stringify(fileURLToPath(import.meta.url))});` },
      logLevel: "silent"
    })
    const mBase = memoryOf(bundle, "baseline", jsonlPath)
    const mJsonl = memoryOf(bundle, "jsonl", jsonlRoot)
    const mSqlite = memoryOf(bundle, "sqlite", sqliteFile)
    for (const [name, m] of [["jsonl", mJsonl], ["sqlite", mSqlite]] as const) {
      if (m.kept !== events.length) throw new Error(`${name} memory child loaded ${m.kept} events`)
      report({
        bench: `persistence.load100k.${name}.peakRss`,
        unit: "MB maxRSS (lower is better)",
        value: round(m.maxRssMB),
        baseline: round(mBase.maxRssMB),
        heapUsedMB: round(m.heapUsedMB),
        baselineHeapUsedMB: round(mBase.heapUsedMB)
      })
    }
  } finally {
    await fsp.rm(dir, { recursive: true, force: true })
    await fsp.rm(fileURLToPath(new URL(`../node_modules/.cache/effect-harness-bench/persistence-child-${process.pid}.mjs`, import.meta.url)), { force: true })
  }
}

const childArgs = process.env[CHILD_ENV]
if (childArgs !== undefined) {
  const [mode, location] = JSON.parse(childArgs) as [string, string]
  await child(mode, location)
}
