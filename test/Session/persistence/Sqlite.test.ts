import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { SessionId } from "../../../src/Llm/Message.js"
import * as Sqlite from "../../../src/Session/persistence/Sqlite.js"
import { SessionPersistence } from "../../../src/Session/SessionPersistence.js"
import { sqliteClient, sqliteStorage, tempDir } from "../../support/persistenceSubjects.js"
import { header, LogBuilder } from "../../support/sessionLog.js"

const id = (s: string) => s as SessionId
const deadPid = (): number => spawnSync(process.execPath, ["-e", ""]).pid!

const fresh = Effect.gen(function*() {
  const dir = yield* tempDir("harness-sqlite-")
  return { dir, filename: path.join(dir, "sessions.sqlite") }
})

describe("Sqlite backend", () => {
  it.live("[D-10] Sqlite.layer creates the directory, the tables, WAL, user_version; a sessions row exists iff materialized", () =>
    Effect.gen(function*() {
      const { dir } = yield* fresh
      const filename = path.join(dir, "nested", "db", "sessions.sqlite")
      const ctx = yield* Layer.build(Sqlite.layer({ filename }))
      const p = (yield* Effect.provide(SessionPersistence, ctx))
      const sql = yield* sqliteClient(filename)
      expect(p.locate(header("a"))).toBeUndefined()
      expect(yield* sql.query("PRAGMA user_version")).toEqual([{ user_version: Sqlite.LAYOUT_VERSION }])
      expect(yield* sql.query("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }])
      const columns = (table: string) => Effect.map(sql.query(`PRAGMA table_info(${table})`), (rows) => rows.map((r) => r["name"]))
      expect(yield* columns("sessions")).toEqual(["id", "version", "created_at", "cwd", "parent_session", "seed_length"])
      expect(yield* columns("events")).toEqual(["session_id", "seq", "type", "time", "data", "source_event_seqs", "surface_op"])
      const h = { ...header("a", "/w"), parentSession: id("p"), seedLength: 3 }
      yield* p.create(h)
      expect(yield* sql.query("SELECT * FROM sessions")).toEqual([])
      const b = new LogBuilder().completeTurn("hi")
      yield* p.append(h.id, b.events)
      expect(yield* sql.query("SELECT * FROM sessions")).toEqual([
        { id: "a", version: 0, created_at: h.createdAt, cwd: "/w", parent_session: "p", seed_length: 3 }
      ])
      const rows = yield* sql.query("SELECT * FROM events ORDER BY seq")
      expect(rows.length).toBe(b.events.length)
      const user = rows.find((r) => r["type"] === "user/message")!
      expect(JSON.parse(user["data"] as string)).toEqual(b.events[1]!.data)
      expect(JSON.parse(user["surface_op"] as string)).toBe("append")
      expect(user["source_event_seqs"]).toBeNull()
    }))

  it.live("[D-10] another layout version in user_version → rejected", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const storage = sqliteStorage(filename)
      yield* storage.open
      const sql = yield* sqliteClient(filename)
      yield* sql.query("PRAGMA user_version = 7")
      const err = yield* Effect.flip(storage.open)
      expect(err).toMatchObject({ code: "UNSUPPORTED_VERSION", file: filename })
    }))

  it.live("[D-5] an unparsable data row before a later turn/end → CORRUPT_LOG naming the database and row; nothing changed", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const storage = sqliteStorage(filename)
      const p = yield* storage.open
      const h = header("bad")
      yield* p.create(h)
      yield* p.append(h.id, new LogBuilder().completeTurn("one").completeTurn("two").events)
      const sql = yield* sqliteClient(filename)
      yield* sql.query("UPDATE events SET data = '{not json' WHERE session_id = 'bad' AND seq = 4")
      const before = yield* storage.dump("bad")
      const err = yield* Effect.flip((yield* storage.open).load(h.id))
      expect(err).toMatchObject({ code: "CORRUPT_LOG", file: filename, line: 5 })
      expect(err.message).toContain("seq 4")
      expect(yield* storage.dump("bad")).toBe(before)
    }))

  it.live("[D-10] append is one transaction: a batch that fails while inserting leaves nothing, not even the sessions row", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const storage = sqliteStorage(filename)
      const p = yield* storage.open
      const sql = yield* sqliteClient(filename)
      yield* sql.query(
        "CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.type = 'x/boom' BEGIN SELECT RAISE(ABORT, 'boom'); END"
      )
      const h = header("tx")
      yield* p.create(h)
      const b = new LogBuilder().completeTurn("one")
      b.turnStart(1)
      b.push("x/boom", {})
      const err = yield* Effect.flip(p.append(h.id, b.events))
      expect(err.code).toBe("IO") // a refused statement, not a storage failure
      expect(yield* sql.query("SELECT COUNT(*) AS n FROM sessions")).toEqual([{ n: 0 }])
      expect(yield* sql.query("SELECT COUNT(*) AS n FROM events")).toEqual([{ n: 0 }])
      yield* p.append(h.id, b.events.slice(0, -2))
      const n = b.events.length - 2
      expect(yield* Effect.flip(p.append(h.id, b.from(n)))).toMatchObject({ code: "IO" })
      expect(yield* sql.query("SELECT COUNT(*) AS n FROM events")).toEqual([{ n }])
      expect((yield* p.load(h.id)).events).toEqual(b.events.slice(0, n))
    }))

  it.live("[DEC-4] locks table: stale rows (dead pid, this process without holder) are reclaimed; another host holds", () =>
    Effect.gen(function*() {
      const { filename } = yield* fresh
      const storage = sqliteStorage(filename)
      const p = yield* storage.open
      const sql = yield* sqliteClient(filename)
      const h = header("lk")
      yield* p.create(h)
      const first = new LogBuilder().completeTurn("one")
      yield* p.append(h.id, first.events)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* p.lock(h.id)
        const rows = yield* sql.query("SELECT * FROM locks")
        expect(rows).toMatchObject([{ session_id: "lk", pid: process.pid, hostname: os.hostname() }])
      }))
      expect(yield* sql.query("SELECT * FROM locks")).toEqual([])
      const plant = (pid: number, hostname: string, token: string) =>
        sql.query("INSERT OR REPLACE INTO locks VALUES ('lk', ?, ?, ?, 1)", [pid, hostname, token])
      yield* plant(deadPid(), os.hostname(), "dead")
      yield* Effect.scoped(p.lock(h.id))
      yield* plant(process.pid, os.hostname(), "forgotten")
      yield* Effect.scoped(p.lock(h.id))
      yield* plant(1, "elsewhere.example", "remote")
      const before = yield* storage.dump("lk")
      expect(yield* Effect.flip(Effect.scoped(p.lock(h.id)))).toMatchObject({ code: "SESSION_LOCKED" })
      expect(yield* Effect.flip(p.load(h.id))).toMatchObject({ code: "SESSION_LOCKED" })
      const next = new LogBuilder(0, first.events).completeTurn("two")
      expect(yield* Effect.flip(p.append(h.id, next.from(first.events.length)))).toMatchObject({ code: "SESSION_LOCKED" })
      expect(yield* storage.dump("lk")).toBe(before)
      expect((yield* p.list()).map((s) => s.header.id)).toEqual(["lk"])
    }))

  it.live("[issue 26] readOnly: a reader lists, checks and snapshots a torn session without writing; a write fails naming the file", () =>
    Effect.gen(function*() {
      const { dir, filename } = yield* fresh
      const storage = sqliteStorage(filename)
      const p = yield* storage.open
      const h = header("ro")
      yield* p.create(h)
      const b = new LogBuilder().completeTurn("one")
      b.turnStart(1)
      yield* p.append(h.id, b.events)
      const before = yield* storage.dump("ro")
      const reader = yield* Sqlite.open({ filename, readOnly: true })
      expect((yield* reader.list()).map((s) => s.header.id)).toEqual(["ro"])
      expect(yield* reader.exists(h.id)).toBe(true)
      const snap = yield* reader.snapshot(h.id)
      expect(snap.events.slice(0, b.events.length)).toEqual(b.events)
      expect(snap.repaired.length).toBeGreaterThan(0)
      const err = yield* Effect.flip(reader.append(h.id, new LogBuilder(0, b.events).completeTurn("two").from(b.events.length)))
      expect(err).toMatchObject({ code: "PERSISTENCE_FAILED", osCode: "EROFS", file: filename })
      expect(err.message).toContain(filename)
      expect(yield* Effect.flip(Effect.scoped(reader.lock(h.id)))).toMatchObject({ code: "IO", file: filename })
      expect(yield* storage.dump("ro")).toBe(before)
      // a reader creates nothing: no directory, no database
      const missing = path.join(dir, "absent", "sessions.sqlite")
      expect(yield* Effect.flip(Sqlite.open({ filename: missing, readOnly: true }))).toMatchObject({ code: "IO", file: missing })
      expect(fs.existsSync(path.dirname(missing))).toBe(false)
    }))
})
