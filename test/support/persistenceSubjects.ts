/**
 * The backends under the contract suite: fresh storage per test in a real temp directory.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "effect/FileSystem"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as IdEncoding from "../../src/Session/persistence/IdEncoding.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as Sqlite from "../../src/Session/persistence/Sqlite.js"
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

/** A SQLite client over `filename` for the scope. */
export const sqliteClient = (filename: string) =>
  Effect.map(Layer.build(SqliteClient.layer({ filename })), (ctx) => Context.get(ctx, SqlClient.SqlClient))

/** SQLite over a database file. */
export const sqliteStorage = (filename: string): Storage => {
  const open = Effect.flatMap(Layer.build(SqliteClient.layer({ filename })), (ctx) =>
    Sqlite.make({ filename }).pipe(Effect.provide(ctx)))
  return {
    open,
    raw: (h, records) =>
      Effect.scoped(Effect.gen(function*() {
        yield* open // creates the layout
        const sql = yield* sqliteClient(filename)
        yield* sql.unsafe(
          "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length) VALUES (?, ?, ?, ?, ?, ?)",
          [h["id"], h["version"], h["createdAt"], h["cwd"] ?? null, h["parentSession"] ?? null, h["seedLength"] ?? null]
        )
        for (const r of records) {
          yield* sql.unsafe(
            "INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
              h["id"],
              r["seq"],
              r["type"],
              r["time"],
              JSON.stringify(r["data"]),
              r["sourceEventSeqs"] === undefined ? null : JSON.stringify(r["sourceEventSeqs"]),
              r["surfaceOp"] === undefined ? null : JSON.stringify(r["surfaceOp"])
            ]
          )
        }
      })),
    dump: (id) =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* sqliteClient(filename)
        const s = yield* sql.unsafe("SELECT * FROM sessions WHERE id = ?", [id])
        const e = yield* sql.unsafe("SELECT * FROM events WHERE session_id = ? ORDER BY seq", [id])
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
