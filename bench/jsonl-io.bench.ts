/**
 * The write path and descriptors of the durable backends (issues 17 and 20), against plain `fs`
 * doing the same I/O in the same run (runs interleaved, medians of 3):
 *
 * - `jsonlIo.write100k.*`: a ~100k-event log appended one turn per batch, each batch fsynced, the
 *   way the store writes while it holds the session's lock (`.held`), and without the lock
 *   (`.unlocked`: every append checks the file and the lock first). Baseline: plain `fs` appending
 *   the same JSON lines to one open file with an fsync per batch. Target (JSONL, held): <= 2.
 * - `jsonlIo.writeThrough20k.*`: the first 20k events through a live `SessionStore` session, one
 *   append per event as the loop does (each written through; fsync with every `step/end` and
 *   `turn/end`, and at the final flush). Baseline: the same appends on a bare `Session` whose
 *   committed events plain `fs` writes with one `write` per append and an fsync at the same
 *   points. Target: <= 1.3.
 * - `jsonlIo.fds.jsonl`: 200 JSONL sessions live at once, each written through; the most files the
 *   backend had open at once (its pool, default size) against the number of live sessions.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { SessionId } from "../src/Llm/Message.js"
import * as Jsonl from "../src/Session/persistence/Jsonl.js"
import * as Records from "../src/Session/persistence/Records.js"
import * as Session from "../src/Session/Session.js"
import type { AppendInput, SessionEvent } from "../src/Session/SessionEvent.js"
import type { Service } from "../src/Session/SessionPersistence.js"
import { SessionPersistence } from "../src/Session/SessionPersistence.js"
import * as SessionStore from "../src/Session/SessionStore.js"
import { bigLog, header } from "../test/support/sessionLog.js"
import { jsonlBackend, round, sqliteBackend, time, turns, withBackend } from "./Backends.js"
import { median, report } from "./Bench.js"

const N = 100_000
const WT_N = 20_000
const RUNS = 3
const FD_SESSIONS = 200

const inputOf = (e: SessionEvent): AppendInput => {
  const { seq: _seq, time: _time, ...input } = e
  return input as unknown as AppendInput
}

const isSyncPoint = (e: SessionEvent) => e.type === "step/end" || e.type === "turn/end"

/** one fsync'd append per turn through the backend, with or without the writer lock */
const backendWrite = (p: Service, id: string, batches: ReadonlyArray<ReadonlyArray<SessionEvent>>, held: boolean) =>
  Effect.gen(function*() {
    if (held) yield* p.lock(id as SessionId)
    yield* p.create(header(id, "/bench"))
    for (const batch of batches) yield* p.append(id as SessionId, batch)
  })

/** plain fs: the same lines, one write + fsync per turn on one open file */
const plainWrite = async (file: string, batches: ReadonlyArray<ReadonlyArray<SessionEvent>>) => {
  const fh = await fsp.open(file, "a")
  for (const batch of batches) {
    let text = ""
    for (const e of batch) text += `${JSON.stringify(e)}\n`
    await fh.write(text)
    await fh.sync()
  }
  await fh.close()
}

/** the store's write-through: one append per event, written through before it returns */
const storeWriteThrough = (p: Service, inputs: ReadonlyArray<AppendInput>, id: string) =>
  Effect.gen(function*() {
    const store = yield* SessionStore.make.pipe(Effect.provideService(SessionPersistence, p))
    const session = yield* store.create({ id, cwd: "/bench" })
    for (const input of inputs) yield* session.append(input)
    yield* store.flush(id)
  })

/** the same appends on a bare session, plain fs writing each append's events and fsyncing at the same points */
const plainWriteThrough = (file: string, inputs: ReadonlyArray<AppendInput>, id: string) =>
  Effect.gen(function*() {
    const fh = yield* Effect.promise(() => fsp.open(file, "a"))
    const pending: Array<SessionEvent> = []
    const h = header(id, "/bench")
    yield* Effect.promise(() => fh.write(`${JSON.stringify(Records.headerRecord(h))}\n`))
    const session = yield* Session.make({ header: h, onCommit: (e) => pending.push(e) })
    for (const input of inputs) {
      yield* session.append(input)
      let text = ""
      let sync = false
      for (const e of pending) {
        text += `${JSON.stringify(e)}\n`
        sync ||= isSyncPoint(e)
      }
      pending.length = 0
      yield* Effect.promise(() => fh.write(text))
      if (sync) yield* Effect.promise(() => fh.sync())
    }
    yield* Effect.promise(async () => {
      await fh.sync()
      await fh.close()
    })
  })

const fdRow = async (dir: string, events: ReadonlyArray<SessionEvent>) => {
  const inputs = events.slice(0, events.findIndex((e) => e.type === "turn/end") + 1).map(inputOf)
  const openFds = async () => (await fsp.readdir("/proc/self/fd").catch(() => [])).length
  const before = await openFds()
  let peak = 0
  let peakProcess = 0
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const p = yield* Jsonl.make({ root: path.join(dir, "fds") }).pipe(Effect.provide(NodeFileSystem.layer))
    const store = yield* SessionStore.make.pipe(Effect.provideService(SessionPersistence, p))
    const scopes: Array<Scope.Closeable> = []
    const sessions: Array<Session.Session> = []
    for (let i = 0; i < FD_SESSIONS; i++) {
      const scope = yield* Scope.make()
      scopes.push(scope)
      sessions.push(yield* Scope.provide(store.create({ id: `fd-${i}`, cwd: "/bench" }), scope))
    }
    // one turn per session, the sessions interleaved event by event
    for (const input of inputs) {
      for (const s of sessions) yield* s.append(input)
      peak = Math.max(peak, p.tracked().openFiles)
      peakProcess = Math.max(peakProcess, (yield* Effect.promise(openFds)) - before)
    }
    for (const scope of scopes) yield* Scope.close(scope, Exit.void)
  })))
  report({
    bench: "jsonlIo.fds.jsonl",
    unit: "files open at once (lower is better; baseline = live sessions)",
    value: peak,
    baseline: FD_SESSIONS,
    processFdsAbovePeak: peakProcess,
    pool: Jsonl.DEFAULT_MAX_OPEN_FILES
  })
}

export async function run(): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "harness-bench-jsonl-io-"))
  try {
    const events = bigLog(N)
    const batches = turns(events)
    const common = { events: events.length, batches: batches.length }

    // -- one fsync'd append per turn ------------------------------------------------------------
    const w = { plain: [] as Array<number>, held: [] as Array<number>, unlocked: [] as Array<number>, sqlite: [] as Array<number> }
    for (let r = 0; r < RUNS; r++) {
      w.plain.push(await time(() => plainWrite(path.join(dir, `plain-${r}.jsonl`), batches)))
      w.held.push(await time(() => withBackend(jsonlBackend(path.join(dir, `held-${r}`)), (p) => backendWrite(p, "w", batches, true))))
      w.unlocked.push(await time(() => withBackend(jsonlBackend(path.join(dir, `unlocked-${r}`)), (p) => backendWrite(p, "w", batches, false))))
      w.sqlite.push(await time(() => withBackend(sqliteBackend(path.join(dir, `w-${r}.sqlite`)), (p) => backendWrite(p, "w", batches, true))))
    }
    const plain = round(median(w.plain))
    const unit = "ms (lower is better; baseline = plain fs, one write + fsync per turn)"
    report({ bench: "jsonlIo.write100k.jsonl.held", unit, value: round(median(w.held)), baseline: plain, target: "<= 2", ...common })
    report({ bench: "jsonlIo.write100k.jsonl.unlocked", unit, value: round(median(w.unlocked)), baseline: plain, ...common })
    report({ bench: "jsonlIo.write100k.sqlite.held", unit, value: round(median(w.sqlite)), baseline: plain, ...common })

    // -- write-through ----------------------------------------------------------------------------
    const inputs = events.slice(0, WT_N).map(inputOf)
    const t = { plain: [] as Array<number>, jsonl: [] as Array<number>, sqlite: [] as Array<number> }
    for (let r = 0; r < RUNS; r++) {
      t.plain.push(await time(() => Effect.runPromise(plainWriteThrough(path.join(dir, `wt-plain-${r}.jsonl`), inputs, `wt-${r}`))))
      t.jsonl.push(await time(() => withBackend(jsonlBackend(path.join(dir, `wt-${r}`)), (p) => storeWriteThrough(p, inputs, `wt-${r}`))))
      t.sqlite.push(await time(() => withBackend(sqliteBackend(path.join(dir, `wt-${r}.sqlite`)), (p) => storeWriteThrough(p, inputs, `wt-${r}`))))
    }
    const wtCommon = { events: inputs.length, fsyncs: inputs.filter((i) => i.type === "step/end" || i.type === "turn/end").length }
    const wtUnit = "ms (lower is better; baseline = plain fs write-through: one write per append, fsync at step/turn end)"
    for (const name of ["jsonl", "sqlite"] as const) {
      report({
        bench: `jsonlIo.writeThrough20k.${name}`,
        unit: wtUnit,
        value: round(median(t[name])),
        baseline: round(median(t.plain)),
        target: "<= 1.3",
        ...wtCommon
      })
    }

    // -- descriptors ------------------------------------------------------------------------------
    await fdRow(dir, events)
  } finally {
    await fsp.rm(dir, { recursive: true, force: true })
  }
}
