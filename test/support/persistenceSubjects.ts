/**
 * The backends under the contract suite: fresh storage per test in a real temp directory.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as IdEncoding from "../../src/Session/persistence/IdEncoding.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as Sqlite from "../../src/Session/persistence/Sqlite.js"
import * as SqliteDatabase from "../../src/Session/persistence/SqliteDatabase.js"
import type { Storage, Subject } from "./persistenceContract.js"

/** A temp directory removed at scope close. */
export const tempDir = (prefix: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix })).pipe(
    Effect.provide(NodeFileSystem.layer)
  )

const encoded = (id: string): string => Result.getOrThrow(IdEncoding.encode(id))

/** The JSONL log of `id` under `root` (any bucket), or undefined. */
export const jsonlFile = (root: string, id: string) =>
  Effect.promise(async () => {
    const buckets = await fsp.readdir(root).catch(() => [] as Array<string>)
    for (const b of buckets) {
      const file = path.join(root, b, `${encoded(id)}.jsonl`)
      if (await fsp.stat(file).then(() => true, () => false)) return file
    }
    return undefined
  })

/** Writes a JSONL log verbatim (header record tagged `type: "session"`). */
export const writeJsonl = (root: string, headerRecord: Record<string, unknown>, records: ReadonlyArray<unknown>, tail = "") =>
  Effect.promise(async () => {
    const cwd = headerRecord["cwd"]
    const dir = path.join(root, Jsonl.bucketOf(typeof cwd === "string" ? cwd : undefined))
    await fsp.mkdir(dir, { recursive: true })
    const file = path.join(dir, `${encoded(String(headerRecord["id"]))}.jsonl`)
    const lines = [JSON.stringify({ type: "session", ...headerRecord }), ...records.map((r) => JSON.stringify(r))]
    await fsp.writeFile(file, lines.map((l) => `${l}\n`).join("") + tail)
    return file
  })

/** JSONL over a temp root. */
export const jsonlStorage = (root: string): Storage => ({
  open: Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer)),
  raw: (h, records) => Effect.asVoid(writeJsonl(root, h, records)),
  dump: (id) =>
    Effect.flatMap(jsonlFile(root, id), (file) =>
      file === undefined ? Effect.succeed("<absent>") : Effect.promise(() => fsp.readFile(file, "utf8")))
})

/** The JSONL subject. */
export const jsonl: Subject = {
  name: "Jsonl",
  storage: Effect.map(tempDir("harness-jsonl-"), jsonlStorage)
}

/** A SQLite connection to `filename` for the scope (raw SQL: `query(text, params)`). */
export const sqliteClient = (filename: string) => SqliteDatabase.open({ filename })

/** a planted value as a SQLite parameter (absent → NULL; anything else not storable → its JSON text) */
const param = (value: unknown): SqliteDatabase.Param => {
  if (value === undefined || value === null) return null
  if (typeof value === "number" || typeof value === "string" || typeof value === "bigint") return value
  if (typeof value === "boolean") return value ? 1 : 0
  return JSON.stringify(value)
}
const params = (...values: ReadonlyArray<unknown>): ReadonlyArray<SqliteDatabase.Param> => values.map(param)

/** SQLite over a database file. */
export const sqliteStorage = (filename: string): Storage => {
  const open = Sqlite.open({ filename })
  return {
    open,
    raw: (h, records) =>
      Effect.scoped(Effect.gen(function*() {
        yield* open // creates the layout
        const sql = yield* sqliteClient(filename)
        yield* sql.query(
          "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length) VALUES (?, ?, ?, ?, ?, ?)",
          params(h["id"], h["version"], h["createdAt"], h["cwd"], h["parentSession"], h["seedLength"])
        )
        for (const r of records) {
          yield* sql.query(
            "INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)",
            params(
              h["id"],
              r["seq"],
              r["type"],
              r["time"],
              JSON.stringify(r["data"]),
              r["sourceEventSeqs"] === undefined ? null : JSON.stringify(r["sourceEventSeqs"]),
              r["surfaceOp"] === undefined ? null : JSON.stringify(r["surfaceOp"])
            )
          )
        }
      })),
    dump: (id) =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* sqliteClient(filename)
        const s = yield* sql.query("SELECT * FROM sessions WHERE id = ?", [id])
        const e = yield* sql.query("SELECT * FROM events WHERE session_id = ? ORDER BY seq", [id])
        return JSON.stringify({ s, e })
      }))
  }
}

/** The SQLite subject. */
export const sqlite: Subject = {
  name: "Sqlite",
  storage: Effect.map(tempDir("harness-sqlite-"), (dir) => sqliteStorage(path.join(dir, "sessions.sqlite")))
}

/** The in-memory subject (one shared `Storage` per test plays the disk). */
export const memory: Subject = {
  name: "Memory",
  storage: Effect.sync((): Storage => {
    const storage = Memory.makeStorage()
    return {
      open: Memory.make(storage),
      raw: (h, records) => Effect.sync(() => Memory.plant(storage, h, records)),
      dump: (id) => Effect.sync(() => Memory.dump(storage, id))
    }
  })
}
