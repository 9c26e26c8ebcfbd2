import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Sqlite from "../src/Session/persistence/Sqlite.js"
import { header, LogBuilder } from "../test/support/sessionLog.js"

const dir = fs.mkdtempSync("/tmp/sqbench/run-")
const program = Effect.scoped(Effect.gen(function*() {
  const p = yield* Sqlite.open({ filename: path.join(dir, "s.sqlite") })
  const b = new LogBuilder()
  for (let t = 0; t < 400; t++) b.completeTurn(`turn ${t}`, { tool: true, pieces: ["a", "b", "c", "d", "e", "f"] })
  const h = header("bench")
  yield* p.lock(h.id)
  yield* p.create(h)
  yield* p.append(h.id, b.events.slice(0, 1))
  const n = b.events.length - 1
  let t0 = performance.now()
  for (let i = 1; i <= n; i++) yield* p.append(h.id, b.events.slice(i, i + 1), { sync: false })
  const unsynced = (performance.now() - t0) / n
  yield* p.sync(h.id)
  const h2 = header("bench2")
  yield* p.lock(h2.id)
  yield* p.create(h2)
  yield* p.append(h2.id, b.events.slice(0, 1))
  const m = Math.min(n, 2000)
  t0 = performance.now()
  for (let i = 1; i <= m; i++) yield* p.append(h2.id, b.events.slice(i, i + 1))
  const synced = (performance.now() - t0) / m
  t0 = performance.now()
  const loaded = yield* p.load(h.id)
  const load = performance.now() - t0
  console.log(JSON.stringify({ events: n, usPerUnsyncedAppend: +(unsynced * 1000).toFixed(1), usPerSyncedAppend: +(synced * 1000).toFixed(1), loadMs: +load.toFixed(1), loaded: loaded.events.length }))
}))
Effect.runPromise(program).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
