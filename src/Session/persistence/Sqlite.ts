/**
 * The SQLite persistence backend (D-10), over the project's own small client of Node's built-in
 * `node:sqlite` ({@link SqliteDatabase}: no native addon).
 *
 * Layout (layout version {@link LAYOUT_VERSION} in `PRAGMA user_version`; a fresh database (0) is
 * stamped, any other version is rejected with `UNSUPPORTED_VERSION`):
 * - `sessions(id PRIMARY KEY, version, created_at, cwd, parent_session, seed_length)`: a row exists
 *   iff the session is materialized (its first non-empty append committed, D-1);
 * - `events(session_id REFERENCES sessions ON DELETE CASCADE, seq, type, time, data, source_event_seqs,
 *   surface_op, PRIMARY KEY(session_id, seq))`: `data`, `source_event_seqs` and `surface_op` hold JSON
 *   text (the latter two `NULL` when absent);
 * - [DECISION] `locks(session_id PRIMARY KEY, pid, hostname, token, acquired_at)`: the single-writer
 *   locks (DEC-4), in the database itself so they work wherever the database is shared. A row is
 *   inserted only when none exists and removed only by its token; the stale rule is `Lock`'s
 *   (dead pid on this host, or this process without a live holder).
 *
 * WAL journal, foreign keys on, `synchronous = NORMAL` (DEC-11 write-through: a committed
 * transaction survives the death of this process; power loss may lose the commits since the last
 * WAL sync). An append with `sync` (the default) and the first append of a session commit under
 * `synchronous = FULL` (durable when they resolve); `sync(id)` after unsynced appends fsyncs the
 * `-wal` file (no checkpoint, so it needs no free space). A failed write (`SQLITE_FULL`, `SQLITE_READONLY`,
 * `SQLITE_IOERR`, `SQLITE_CANTOPEN`) is rolled back and fails `PERSISTENCE_FAILED` (`SaveFailure`).
 * While this instance holds a session's writer lock, an append inserts the batch after the seq it
 * left last without reading anything back (nobody else writes the session, DEC-4).
 * Every write is one `BEGIN IMMEDIATE` transaction on the connection (held exclusively), or, for a
 * batch of up to 100 events appended while this instance holds the lock of a stored session (write-through), one
 * multi-row `INSERT` in autocommit (atomic on its own, one commit): the first append inserts the
 * sessions row and the batch together; later appends check the stored next seq and insert the
 * batch; a load reads the log in a deferred (snapshot) transaction and, only when it is torn or
 * interrupted, reads it again under `IMMEDIATE` and deletes the torn rows and inserts the closers
 * in that one transaction (D-4). `IMMEDIATE` takes the write lock up front, so a concurrent process
 * waits for it (`SqliteDatabase`'s 5 s busy timeout) instead of failing with a stale snapshot. A
 * durable write switches the connection to `synchronous = FULL` and back while it holds the
 * connection, so no other write runs under the switched setting.
 *
 * Torn vs corrupt (D-5) uses the rules of `Records.scan` over the rows in seq order: a row whose
 * seq is not its position (a gap) or whose JSON does not parse ends the preserved prefix. Errors
 * name the database file and, as `line`, the 1-based position of the offending row in seq order.
 *
 * `snapshot` (readers, DEC-11) reads the log in one deferred transaction without checking the lock
 * and computes the repair in memory; it never writes.
 *
 * [DECISION] The database is created `0600` before SQLite opens it (SQLite gives its `-wal` and
 * `-shm` files the database's mode), its directory `0700`.
 *
 * Releasing a session's lock forgets it in this instance (the database is the truth; a later writer
 * adopts it again), so released sessions leave nothing behind (`tracked()`).
 *
 * `locate` → `undefined` (no per-session path). Locking an id that is not stored yet is allowed (a
 * writer locks before it creates; the row reserves the id). `list` reads, per session,
 * the header row, the last event's time, the last `turn/start` and the first `user/message`
 * (index range scans on the primary key, not whole logs).
 *
 * A database that cannot be opened fails naming the file: `PERSISTENCE_FAILED` for a writer when
 * storage refused it (`SQLITE_CANTOPEN` → `EACCES`, …), else `IO` (a reader of a missing file).
 *
 * The default database is `DataDir.sqliteFile` (`$EFFECT_HARNESS_HOME/sessions.sqlite`, else the
 * per-user data directory); the `filename` option wins (`":memory:"` works for tests).
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import type { SessionId } from "../../Llm/Message.js"
import * as SessionError from "../SessionError.js"
import type { SessionHeader } from "../SessionEvent.js"
import type { Service, SessionSummary } from "../SessionPersistence.js"
import { SessionPersistence } from "../SessionPersistence.js"
import * as DataDir from "./DataDir.js"
import * as Lock from "./Lock.js"
import * as Records from "./Records.js"
import * as SaveFailure from "./SaveFailure.js"
import * as Load from "./sqlite/Load.js"
import { LIST_SQL, notFound, summaryOf } from "./sqlite/Rows.js"
import * as Store from "./sqlite/Store.js"
import * as Write from "./sqlite/Write.js"
import * as SqliteDatabase from "./SqliteDatabase.js"
import * as Summary from "./Summary.js"
import type * as Tracked from "./Tracked.js"

/**
 * Options of the SQLite backend.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the database file; default `DataDir.sqliteFile` */
  readonly filename?: string
  /**
   * open the database read-only (issue 26): for readers (`list`, `snapshot`, `exists`) of a store
   * they cannot write (a `0444` file, a directory without write permission). Nothing is created;
   * writes fail naming the file (an append `PERSISTENCE_FAILED` `EROFS`, taking a lock `IO`).
   */
  readonly readOnly?: boolean
}

/**
 * The layout version stamped in `PRAGMA user_version`.
 *
 * @since 0.1.0
 * @category constants
 */
export const LAYOUT_VERSION = 1

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY NOT NULL,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    cwd TEXT,
    parent_session TEXT,
    seed_length INTEGER
  )`,
  `CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    time INTEGER NOT NULL,
    data TEXT NOT NULL,
    source_event_seqs TEXT,
    surface_op TEXT,
    PRIMARY KEY (session_id, seq)
  )`,
  `CREATE TABLE IF NOT EXISTS locks (
    session_id TEXT PRIMARY KEY NOT NULL,
    pid INTEGER NOT NULL,
    hostname TEXT NOT NULL,
    token TEXT NOT NULL,
    acquired_at INTEGER NOT NULL
  )`
]

/**
 * Builds the SQLite backend over the open database (its `filename` is named in messages).
 * Creates the tables and stamps the layout version on a fresh database.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  Service & Tracked.WithTracked,
  SessionError.SessionError,
  SqliteDatabase.SqliteDatabase
> = Effect.gen(function*() {
  const db = yield* SqliteDatabase.SqliteDatabase
  const store = Store.make(db)
  const { file, autocommit, transaction, entries, serialized, held, lockStoreOutside, saveFailure } = store

  // -- layout -----------------------------------------------------------------------------------
  // connection settings for writing (a read-only connection only reads)
  if (!db.readOnly) {
    yield* autocommit((run) =>
      Effect.andThen(run("PRAGMA foreign_keys = ON"), run("PRAGMA synchronous = NORMAL"))
    )
  }
  const stampLayout = transaction((run) =>
    Effect.gen(function*() {
      const rows = yield* run("PRAGMA user_version")
      const version = Number(rows[0]?.["user_version"] ?? 0)
      if (version === 0) {
        for (const statement of SCHEMA) yield* run(statement)
        yield* run(`PRAGMA user_version = ${LAYOUT_VERSION}`)
      } else if (version !== LAYOUT_VERSION) {
        return yield* Effect.fail(
          SessionError.make(
            "UNSUPPORTED_VERSION",
            `${file}: database layout version ${version} is not supported (expected ${LAYOUT_VERSION})`,
            { file }
          )
        )
      }
    })
  )

  // a stamped database is only read here (a reader must not wait for a writer's lock); a fresh
  // one is stamped under the write lock (the check is repeated there)
  const stamped = yield* autocommit((run) => run("PRAGMA user_version"))
  if (Number(stamped[0]?.["user_version"] ?? 0) !== LAYOUT_VERSION) {
    if (db.readOnly) {
      return yield* Effect.fail(
        SessionError.make(
          "UNSUPPORTED_VERSION",
          `${file}: not a session database of layout ${LAYOUT_VERSION} (opened read-only, so it is not set up)`,
          { file }
        )
      )
    }
    yield* stampLayout
  }
  const { loadIn, loadRepairing } = Load.make(store)
  const { appendUnserialized, syncUnserialized } = Write.make(store, loadRepairing)

  // -- list, create, exists, lock -----------------------------------------------------------------

  const list = (): Effect.Effect<ReadonlyArray<SessionSummary>, SessionError.SessionError> =>
    autocommit((run) =>
      Effect.map(run(LIST_SQL), (rows) => {
        const out: Array<SessionSummary> = []
        for (const row of rows) {
          const summary = summaryOf(row)
          if (summary !== undefined) out.push(summary)
        }
        return out.sort(Summary.order)
      })
    )

  const isStored = (id: string) =>
    autocommit((run) => Effect.map(run("SELECT 1 FROM sessions WHERE id = ?", [id]), (rows) => rows.length > 0))

  const create = (input: SessionHeader): Effect.Effect<void, SessionError.SessionError> =>
    Effect.gen(function*() {
      const header = yield* Effect.fromResult(Records.validateHeader(input))
      yield* serialized(header.id)(Effect.gen(function*() {
        if (entries.has(header.id) || (yield* isStored(header.id))) {
          return yield* Effect.fail(
            SessionError.make(
              "SESSION_ALREADY_EXISTS",
              `session ${JSON.stringify(header.id)} already exists; load or resume it instead`,
              { sessionId: header.id }
            )
          )
        }
        entries.set(header.id, { header, stored: false, dirty: false, underLock: held.has(header.id) })
      }))
    })

  const lock = (id: SessionId) =>
    Effect.andThen(
      Lock.acquire(lockStoreOutside(id), id),
      // the instance forgets the session with its lock (the database is the truth; a later
      // writer adopts it again), so released sessions leave nothing behind
      Effect.acquireRelease(Effect.sync(() => held.add(id)), () =>
        serialized(id)(Effect.sync(() => {
          held.delete(id)
          const entry = entries.get(id)
          if (entry !== undefined && (entry.stored || entry.underLock === true)) entries.delete(id)
        })))
    )

  const remove = (id: SessionId): Effect.Effect<void, SessionError.SessionError> =>
    Effect.scoped(Effect.gen(function*() {
      if (!(yield* isStored(id))) return yield* notFound(id)
      yield* lock(id)
      yield* serialized(id)(autocommit((run) => run("DELETE FROM sessions WHERE id = ?", [id])))
      entries.delete(id)
    }))

  const service: Service & Tracked.WithTracked = {
    tracked: () => ({ sessions: entries.size, serializing: serialized.size(), held: held.size, openFiles: 0 }),
    locate: () => undefined,
    remove,
    create,
    append: (id, events, options) =>
      events.length === 0 ? Effect.void : serialized(id)(appendUnserialized(id, events, options?.sync !== false)),
    sync: (id) => serialized(id)(syncUnserialized(id)),
    snapshot: (id) =>
      transaction((run) => loadIn(run, id, "snapshot"), "DEFERRED").pipe(
        Effect.catchTag("NeedsWrite", () => Effect.die(new Error("unreachable: a snapshot never asks for write access")))
      ),
    load: (id) =>
      serialized(id)(
        transaction((run) => loadIn(run, id, "read"), "DEFERRED").pipe(
          // torn or interrupted: read again and repair under the write lock, in one transaction
          Effect.catchTag("NeedsWrite", () =>
            transaction((run) => loadRepairing(run, id)).pipe(Effect.mapError(saveFailure(id, "repair"))))
        )
      ),
    list,
    exists: isStored,
    lock
  }
  return service
})

/** creates the database's directory `0700` and the file `0600` before SQLite opens it */
const createPrivate = (filename: string): Effect.Effect<void, SessionError.SessionError> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.andThen(
      fs.makeDirectory(path.dirname(path.resolve(filename)), { recursive: true, mode: 0o700 }),
      // created private before SQLite opens it; the -wal and -shm files inherit its mode
      fs.writeFile(filename, new Uint8Array(0), { flag: "a", mode: 0o600 })
    )).pipe(
      Effect.provide(NodeFileSystem.layer),
      Effect.mapError((e) => SaveFailure.make({ file: filename, op: "create", error: e }))
    )

/**
 * Opens the database (`node:sqlite`); a failure names the file: `PERSISTENCE_FAILED` when a writer
 * cannot open it for a storage reason (`SQLITE_CANTOPEN`, …), else `IO`.
 */
const openDatabase = (
  filename: string,
  readOnly: boolean
): Effect.Effect<SqliteDatabase.Service, SessionError.SessionError, Scope.Scope> =>
  Effect.mapError(SqliteDatabase.open({ filename, readOnly }), (e) =>
    !readOnly && SaveFailure.isSaveFailure(e)
      ? SaveFailure.make({ file: filename, op: "open", error: e })
      : SessionError.make("IO", `open ${filename}: ${e.message} (${e.code})`, { file: filename, cause: e }))

/**
 * Opens the SQLite backend over the database file `filename` for the scope: a writer creates the
 * directory (`0700`) and the file (`0600`) first and switches the database to WAL; a reader
 * (`readOnly`) creates nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (
  options: Options & { readonly filename: string }
): Effect.Effect<Service & Tracked.WithTracked, SessionError.SessionError, Scope.Scope> =>
  Effect.gen(function*() {
    const readOnly = options.readOnly === true
    // a reader creates nothing; the file keeps its WAL mode, which a read-only connection cannot set
    if (!readOnly && options.filename !== ":memory:") yield* createPrivate(options.filename)
    const db = yield* openDatabase(options.filename, readOnly)
    return yield* Effect.provideService(make, SqliteDatabase.SqliteDatabase, db)
  })

/**
 * The SQLite backend as a Layer (opens the database, creating its directory).
 *
 * @example
 * ```ts
 * import { Sqlite } from "effect-harness/sqlite"
 * const Persistence = Sqlite.layer({ filename: "/var/lib/my-agent/sessions.sqlite" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<SessionPersistence, SessionError.SessionError | Config.ConfigError> =>
  Layer.effect(
    SessionPersistence,
    Effect.flatMap(
      options.filename === undefined ? DataDir.sqliteFile : Effect.succeed(options.filename),
      (filename) => open({ ...options, filename })
    )
  )
