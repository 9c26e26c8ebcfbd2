// vitest project: integration
/**
 * The project's `node:sqlite` client under the SQLite backend: canonical error codes (what
 * `SaveFailure` maps to OS errors), transactions, exclusive use of the connection, read-only
 * handles, the statement cache, and a quiet first load of `node:sqlite`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SaveFailure from "../../../src/Session/persistence/SaveFailure.js"
import * as SqliteDatabase from "../../../src/Session/persistence/SqliteDatabase.js"
import { tempDir } from "../../support/persistenceSubjects.js"

const fresh = Effect.map(tempDir("harness-sqlitedb-"), (dir) => ({ dir, filename: path.join(dir, "db.sqlite") }))

const withTable = (filename: string) =>
  Effect.tap(SqliteDatabase.open({ filename }), (db) => db.query("CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT)"))

describe("SqliteDatabase (node:sqlite)", () => {
  it.live("a writer opens the file in WAL mode; rows come back as column → value", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const db = yield* withTable(filename)
      expect(yield* db.query("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }])
      yield* db.query("INSERT INTO t VALUES (?, ?), (?, ?)", [1, "a", 2, null])
      expect(yield* db.query("SELECT x, y FROM t ORDER BY x")).toEqual([{ x: 1, y: "a" }, { x: 2, y: null }])
      expect(yield* db.query("INSERT INTO t VALUES (3, 'c') ON CONFLICT (x) DO NOTHING RETURNING x")).toEqual([{ x: 3 }])
      expect(yield* db.query("INSERT INTO t VALUES (3, 'c') ON CONFLICT (x) DO NOTHING RETURNING x")).toEqual([])
    }))

  it.live("[DEC-11] failures carry the canonical SQLite code: a trigger's ABORT, a duplicate key", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const db = yield* withTable(filename)
      yield* db.query("CREATE TRIGGER boom BEFORE INSERT ON t WHEN NEW.y = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END")
      const trigger = yield* Effect.flip(db.query("INSERT INTO t VALUES (1, 'boom')"))
      expect(trigger).toMatchObject({ _tag: "SqliteError", code: "SQLITE_CONSTRAINT", errcode: 1811, message: "boom" })
      yield* db.query("INSERT INTO t VALUES (1, 'a')")
      expect(yield* Effect.flip(db.query("INSERT INTO t VALUES (1, 'a')"))).toMatchObject({ code: "SQLITE_CONSTRAINT" })
      // not storage failures: they keep their own error
      expect(SaveFailure.isSaveFailure(trigger)).toBe(false)
      expect(SqliteDatabase.codeName(13)).toBe("SQLITE_FULL")
      expect(SqliteDatabase.codeName(10 | (4 << 8))).toBe("SQLITE_IOERR") // SQLITE_IOERR_WRITE
      expect(SaveFailure.osCodeOf(new SqliteDatabase.SqliteError({ code: "SQLITE_FULL", errcode: 13, message: "full", cause: null })))
        .toBe("ENOSPC")
    }))

  it.live("[issue 26] a read-only handle reads, never writes (SQLITE_READONLY → a save failure), creates nothing", () =>
    Effect.gen(function*() {
      const { dir, filename } = yield* fresh
      const writer = yield* withTable(filename)
      yield* writer.query("INSERT INTO t VALUES (1, 'a')")
      const reader = yield* SqliteDatabase.open({ filename, readOnly: true })
      expect(reader.readOnly).toBe(true)
      expect(yield* reader.query("SELECT y FROM t")).toEqual([{ y: "a" }])
      const write = yield* Effect.flip(reader.query("INSERT INTO t VALUES (2, 'b')"))
      expect(write.code).toBe("SQLITE_READONLY")
      expect(SaveFailure.osCodeOf(write)).toBe("EROFS")
      const missing = path.join(dir, "missing.sqlite")
      expect(yield* Effect.flip(SqliteDatabase.open({ filename: missing, readOnly: true }))).toMatchObject({
        code: "SQLITE_CANTOPEN"
      })
      expect(fs.existsSync(missing)).toBe(false)
    }))

  it.live("SQLITE_BUSY: a write lock held by another connection fails after the busy timeout", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const first = yield* withTable(filename)
      const second = yield* SqliteDatabase.open({ filename, busyTimeout: 50 })
      yield* first.query("BEGIN IMMEDIATE")
      const started = Date.now()
      expect(yield* Effect.flip(second.query("BEGIN IMMEDIATE"))).toMatchObject({ code: "SQLITE_BUSY" })
      expect(Date.now() - started).toBeGreaterThanOrEqual(40)
      yield* first.query("ROLLBACK")
      yield* second.query("BEGIN IMMEDIATE")
      yield* second.query("COMMIT")
    }))

  it.live("[D-10] a transaction commits on success and rolls back on failure, keeping the body's error", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const db = yield* withTable(filename)
      yield* db.withConnection((c) => c.transaction("IMMEDIATE", c.query("INSERT INTO t VALUES (1, 'kept')")))
      const failed = yield* Effect.flip(db.withConnection((c) =>
        c.transaction("IMMEDIATE", Effect.andThen(c.query("INSERT INTO t VALUES (2, 'gone')"), Effect.fail("body failed" as const)))
      ))
      expect(failed).toBe("body failed")
      expect(yield* db.query("SELECT x FROM t")).toEqual([{ x: 1 }])
      // a statement of the body that fails rolls the transaction back too
      const dup = yield* Effect.flip(db.withConnection((c) =>
        c.transaction("IMMEDIATE", Effect.andThen(c.query("INSERT INTO t VALUES (3, 'gone')"), c.query("INSERT INTO t VALUES (1, 'dup')")))
      ))
      expect(dup).toMatchObject({ code: "SQLITE_CONSTRAINT" })
      expect(yield* db.query("SELECT x FROM t")).toEqual([{ x: 1 }])
    }))

  it.live("an interrupted transaction is rolled back; the connection is usable after", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const db = yield* withTable(filename)
      const fiber = yield* Effect.forkChild(db.withConnection((c) =>
        c.transaction("IMMEDIATE", Effect.andThen(c.query("INSERT INTO t VALUES (1, 'gone')"), Effect.never))
      ))
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(fiber)
      expect(yield* db.query("SELECT x FROM t")).toEqual([])
      yield* db.query("INSERT INTO t VALUES (2, 'kept')")
      expect(yield* db.query("SELECT x FROM t")).toEqual([{ x: 2 }])
    }))

  it.live("the connection is held exclusively: another fiber's statement never lands inside an open transaction", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const db = yield* withTable(filename)
      const order: Array<string> = []
      const tx = db.withConnection((c) =>
        c.transaction(
          "IMMEDIATE",
          Effect.gen(function*() {
            yield* c.query("INSERT INTO t VALUES (1, 'tx')")
            order.push("tx inserted")
            yield* Effect.sleep("30 millis")
            return yield* Effect.fail("rolled back" as const)
          })
        )
      )
      const txFiber = yield* Effect.forkChild(Effect.flip(tx))
      yield* Effect.sleep("5 millis")
      // waits for the transaction's end, then commits on its own
      yield* Effect.andThen(db.query("INSERT INTO t VALUES (2, 'other')"), Effect.sync(() => order.push("other inserted")))
      expect(yield* Fiber.join(txFiber)).toBe("rolled back")
      expect(order).toEqual(["tx inserted", "other inserted"])
      expect(yield* db.query("SELECT x FROM t")).toEqual([{ x: 2 }])
    }))

  it.live("the statement cache stays bounded and statements still run after eviction", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const db = yield* withTable(filename)
      for (let i = 0; i < SqliteDatabase.STATEMENT_CACHE + 50; i++) {
        expect(yield* db.query(`SELECT ${i} AS n`)).toEqual([{ n: i }])
      }
      expect(yield* db.query("SELECT 0 AS n")).toEqual([{ n: 0 }])
    }))

  it("node:sqlite loads only when a database opens, and without its ExperimentalWarning", () => {
    const entry = path.resolve("src/sqlite.ts")
    const script = [
      `const m = await import(${JSON.stringify(entry)})`,
      `const before = process.moduleLoadList.some((x) => x.includes("sqlite"))`,
      `const Effect = await import("effect/Effect")`,
      `await Effect.runPromise(Effect.scoped(Effect.flatMap(m.SqliteDatabase.open({ filename: ":memory:" }), (db) => db.query("SELECT 1 AS one"))))`,
      `const after = process.moduleLoadList.some((x) => x.includes("sqlite"))`,
      `process.emitWarning("still warns", "ExperimentalWarning")`,
      `console.log(JSON.stringify({ before, after }))`
    ].join("\n")
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" })
    expect(child.status, child.stderr).toBe(0)
    expect(JSON.parse(child.stdout.trim())).toEqual({ before: false, after: true })
    // other warnings still print; the SQLite one does not
    expect(child.stderr).toContain("still warns")
    expect(child.stderr).not.toContain("SQLite is an experimental feature")
  }, 60_000)
})
