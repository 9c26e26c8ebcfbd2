import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SqliteDatabase from "../src/Session/persistence/SqliteDatabase.js"

const dir = fs.mkdtempSync("/tmp/sqbench/run-")
const program = Effect.scoped(Effect.gen(function*() {
  const db = yield* SqliteDatabase.open({ filename: path.join(dir, "s.sqlite") })
  yield* db.query("PRAGMA synchronous = NORMAL")
  yield* db.query("CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT)")
  const n = 5000
  let t0 = performance.now()
  for (let i = 0; i < n; i++) yield* db.query("INSERT INTO t VALUES (?, ?)", [i, "hello world"])
  const perInsert = (performance.now() - t0) / n
  t0 = performance.now()
  for (let i = 0; i < n; i++) yield* db.query("SELECT 1 AS one")
  const perSelect = (performance.now() - t0) / n
  t0 = performance.now()
  const rows = yield* db.query("SELECT * FROM t")
  const selectAll = performance.now() - t0
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite")
  const raw = new DatabaseSync(path.join(dir, "r.sqlite"))
  raw.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT)")
  const st = raw.prepare("INSERT INTO t VALUES (?, ?)")
  t0 = performance.now()
  for (let i = 0; i < n; i++) st.run(i, "hello world")
  const rawInsert = (performance.now() - t0) / n
  console.log(JSON.stringify({ usInsert: +(perInsert * 1000).toFixed(1), usSelect: +(perSelect * 1000).toFixed(1), selectAllMs: +selectAll.toFixed(1), rows: rows.length, rawUsInsert: +(rawInsert * 1000).toFixed(1) }))
}))
Effect.runPromise(program).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
