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
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import type { SessionId } from "../../Llm/Message.js"
import * as Repair from "../Repair.js"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import { FORMAT_VERSION } from "../SessionEvent.js"
import type { Loaded, Service, SessionSummary } from "../SessionPersistence.js"
import { SessionPersistence } from "../SessionPersistence.js"
import * as DataDir from "./DataDir.js"
import * as Lock from "./Lock.js"
import * as PerId from "./PerId.js"
import * as Records from "./Records.js"
import * as SaveFailure from "./SaveFailure.js"
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

/** rows per multi-row INSERT (7 parameters each, far below SQLite's variable limit) */
const INSERT_CHUNK = 100

type Row = SqliteDatabase.Row
type Param = SqliteDatabase.Param

/** internal: a read-only load found something to repair */
class NeedsWrite extends Data.TaggedError("NeedsWrite")<{}> {}
type Run = (sql: string, params?: ReadonlyArray<Param>) => Effect.Effect<ReadonlyArray<Row>, SessionError.SessionError>

interface Entry {
  readonly header: SessionHeader
  stored: boolean
  /** committed under `synchronous = NORMAL` since the last WAL sync */
  dirty: boolean
  /** the stored next seq as this instance left it (trusted only while it holds the lock) */
  nextSeq?: number
  /** created while this instance held the id's lock: forgotten with the lock even if never stored */
  readonly underLock?: boolean
}

const notFound = (id: string): SessionError.SessionError =>
  SessionError.make("SESSION_NOT_FOUND", `session ${JSON.stringify(id)} is not stored`, { sessionId: id })

const pushEventParams = (params: Array<Param>, id: string, e: SessionEvent): void => {
  params.push(
    id,
    e.seq,
    e.type,
    e.time,
    JSON.stringify(e.data),
    e.sourceEventSeqs === undefined ? null : JSON.stringify(e.sourceEventSeqs),
    e.surfaceOp === undefined ? null : JSON.stringify(e.surfaceOp)
  )
}

const eventsParams = (id: string, events: ReadonlyArray<SessionEvent>): Array<Param> => {
  const params: Array<Param> = []
  for (const e of events) pushEventParams(params, id, e)
  return params
}

/** the multi-row INSERT of 1..INSERT_CHUNK events (built once per row count: the statement cache's key) */
const insertSqls: Array<string> = []
const insertSql = (rows: number): string =>
  (insertSqls[rows] ??= `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES ${
    Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?)").join(", ")
  }`)

/** Rebuilds the stored event of a row (envelope key order as in JSONL), or UNPARSABLE. */
const rowEvent = (row: Row): unknown => {
  try {
    const event: Record<string, unknown> = {
      type: row["type"],
      seq: row["seq"],
      time: row["time"],
      data: JSON.parse(row["data"] as string)
    }
    if (row["surface_op"] !== null) event["surfaceOp"] = JSON.parse(row["surface_op"] as string)
    if (row["source_event_seqs"] !== null) event["sourceEventSeqs"] = JSON.parse(row["source_event_seqs"] as string)
    return event
  } catch {
    return Records.UNPARSABLE
  }
}

const headerOf = (row: Row): { readonly header: SessionHeader } | { readonly problem: string; readonly version?: unknown } =>
  Records.decodeHeader({
    type: "session",
    version: row["version"],
    id: row["id"],
    createdAt: row["created_at"],
    ...(row["cwd"] === null ? {} : { cwd: row["cwd"] }),
    ...(row["parent_session"] === null ? {} : { parentSession: row["parent_session"] }),
    ...(row["seed_length"] === null ? {} : { seedLength: row["seed_length"] })
  })

/** a JSON column, or `undefined` when it is absent or does not parse */
const parseColumn = (text: unknown): unknown => {
  if (typeof text !== "string") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const summaryOf = (row: Row): SessionSummary | undefined => {
  const decoded = headerOf(row)
  if ("problem" in decoded) return undefined
  return Summary.make({
    header: decoded.header,
    lastTime: typeof row["last_time"] === "number" ? row["last_time"] : undefined,
    lastTurn: Summary.turnOf({ type: "turn/start", data: parseColumn(row["last_turn_start"]) }),
    firstTurn: Summary.turnOf({ type: "turn/start", data: parseColumn(row["first_turn_start"]) }),
    firstPrompt: Summary.promptOf({ type: "user/message", data: parseColumn(row["first_user"]) })
  })
}

const LIST_SQL = `SELECT s.*,
  (SELECT time FROM events e WHERE e.session_id = s.id ORDER BY seq DESC LIMIT 1) AS last_time,
  (SELECT data FROM events e WHERE e.session_id = s.id AND e.type = 'turn/start' ORDER BY seq DESC LIMIT 1) AS last_turn_start,
  (SELECT data FROM events e WHERE e.session_id = s.id AND e.type = 'turn/start' ORDER BY seq LIMIT 1) AS first_turn_start,
  (SELECT data FROM events e WHERE e.session_id = s.id AND e.type = 'user/message' ORDER BY seq LIMIT 1) AS first_user
FROM sessions s`

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
  const file = db.filename
  const ioError = (op: string) => (e: SqliteDatabase.SqliteError): SessionError.SessionError =>
    SessionError.make("IO", `${op} ${file}: ${e.message} (${e.code})`, { file, cause: e })
  /** BEGIN/COMMIT failures of a transaction → IO; the body's own failures pass through */
  const transactionError = <E>(e: E | SqliteDatabase.SqliteError): E | SessionError.SessionError =>
    e instanceof SqliteDatabase.SqliteError ? ioError("transaction on")(e) : e

  const runOn = (conn: SqliteDatabase.Connection): Run => (text, params) =>
    Effect.mapError(conn.query(text, params), ioError("query"))

  /**
   * Runs `body` under `synchronous = FULL` when `durable` (restored to NORMAL after), on a
   * connection the caller holds: no other write runs while the setting is switched.
   */
  const withSync = <A, E>(
    conn: SqliteDatabase.Connection,
    durable: boolean,
    body: Effect.Effect<A, E>
  ): Effect.Effect<A, E | SessionError.SessionError> =>
    durable
      ? Effect.acquireUseRelease(
        runOn(conn)("PRAGMA synchronous = FULL"),
        () => body,
        () => Effect.orDie(runOn(conn)("PRAGMA synchronous = NORMAL"))
      )
      : body

  /** single statements on the connection (autocommit), under `synchronous = FULL` when `durable` */
  const autocommit = <A, E>(
    f: (run: Run) => Effect.Effect<A, E>,
    durable = false
  ): Effect.Effect<A, E | SessionError.SessionError> =>
    db.withConnection((conn) => withSync(conn, durable, f(runOn(conn))))

  /**
   * One transaction, committed on success, rolled back on any failure: `IMMEDIATE` (takes the
   * write lock up front) for writes, `DEFERRED` for reads (a WAL snapshot; never blocks writers).
   */
  const transaction = <A, E>(
    f: (run: Run) => Effect.Effect<A, E>,
    mode: "IMMEDIATE" | "DEFERRED" = "IMMEDIATE",
    durable = false
  ): Effect.Effect<A, E | SessionError.SessionError> =>
    db.withConnection((conn) =>
      withSync(conn, durable, Effect.mapError(conn.transaction(mode, f(runOn(conn))), transactionError))
    )

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
  const entries = new Map<string, Entry>()
  const serialized = PerId.makeSerializer()
  /** ids whose writer lock this instance holds */
  const held = new Set<string>()

  const lockStore = (
    run: <A>(f: (run: Run) => Effect.Effect<A, SessionError.SessionError>) => Effect.Effect<A, SessionError.SessionError>,
    id: string
  ): Lock.Store => ({
    describe: `${file} (locks row of session ${JSON.stringify(id)})`,
    tryInsert: (owner) =>
      Effect.map(
        run((r) =>
          r(
            "INSERT INTO locks (session_id, pid, hostname, token, acquired_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING RETURNING token",
            [id, owner.pid, owner.hostname, owner.token, owner.acquiredAt]
          )
        ),
        (rows) => rows.length === 1
      ),
    read: Effect.map(
      run((r) => r("SELECT pid, hostname, token, acquired_at AS acquiredAt FROM locks WHERE session_id = ?", [id])),
      (rows) => (rows[0] === undefined ? undefined : Lock.parseOwner(rows[0]) ?? "unreadable")
    ),
    removeIf: (token) => Effect.asVoid(run((r) => r("DELETE FROM locks WHERE session_id = ? AND token = ?", [id, token])))
  })
  const lockStoreOutside = (id: string) => lockStore((f) => autocommit(f), id)
  const lockStoreIn = (run: Run, id: string) => lockStore((f) => f(run), id)

  // -- load -----------------------------------------------------------------------------------

  const headerError = (id: string, decoded: { readonly problem: string; readonly version?: unknown }) =>
    decoded.problem === "version"
      ? SessionError.make(
        "UNSUPPORTED_VERSION",
        `${file}: session ${JSON.stringify(id)} has format version ${JSON.stringify(decoded.version)} (expected ${FORMAT_VERSION})`,
        { sessionId: id, file }
      )
      : SessionError.make("CORRUPT_LOG", `${file}: session ${JSON.stringify(id)}: invalid header: ${decoded.problem}`, {
        sessionId: id,
        file
      })

  const loadIn = (
    run: Run,
    id: string,
    mode: "read" | "write" | "snapshot"
  ): Effect.Effect<Loaded, SessionError.SessionError | NeedsWrite> =>
    Effect.gen(function*() {
      const headerRows = yield* run("SELECT * FROM sessions WHERE id = ?", [id])
      const headerRow = headerRows[0]
      if (headerRow === undefined) {
        if (mode !== "snapshot" && entries.get(id)?.stored === true) entries.delete(id)
        return yield* Effect.fail(notFound(id))
      }
      if (mode !== "snapshot") yield* Lock.check(lockStoreIn(run, id), id)
      const decoded = headerOf(headerRow)
      if ("problem" in decoded) return yield* Effect.fail(headerError(id, decoded))
      const rows = yield* run(
        "SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq",
        [id]
      )
      const result = Records.scan({
        count: rows.length,
        parse: (i) => rowEvent(rows[i]!),
        isTurnEnd: (i) => rows[i]!["type"] === "turn/end" && rowEvent(rows[i]!) !== Records.UNPARSABLE
      })
      if (result._tag !== "ok") {
        const seq = rows[result.index]!["seq"]
        return yield* Effect.fail(
          SessionError.make(
            result._tag === "legacy" ? "LEGACY_EVENT" : "CORRUPT_LOG",
            `${file}: session ${JSON.stringify(id)}, events row ${result.index + 1} (seq ${String(seq)}): ${result.reason}`,
            { sessionId: id, file, line: result.index + 1 }
          )
        )
      }
      const closers = Repair.repair(result.events)
      const events = closers.length === 0 ? result.events : result.events.concat(closers)
      const loaded: Loaded = { header: decoded.header, events, repaired: closers, truncated: result.dropped }
      if (mode === "snapshot") return loaded
      if (mode === "read" && (result.dropped > 0 || closers.length > 0)) return yield* Effect.fail(new NeedsWrite())
      if (result.dropped > 0) {
        yield* run("DELETE FROM events WHERE session_id = ? AND seq >= ?", [id, result.events.length])
      }
      yield* insertEvents(run, id, closers)
      entries.set(id, { header: decoded.header, stored: true, dirty: entries.get(id)?.dirty ?? false, underLock: held.has(id) })
      return loaded
    })

  /** load inside a write transaction, repairing when needed */
  const loadRepairing = (run: Run, id: string): Effect.Effect<Loaded, SessionError.SessionError> =>
    loadIn(run, id, "write").pipe(
      Effect.catchTag("NeedsWrite", () => Effect.die(new Error("unreachable: a writable load never asks for write access")))
    )

  const insertEvents = (run: Run, id: string, events: ReadonlyArray<SessionEvent>) =>
    Effect.gen(function*() {
      for (let i = 0; i < events.length; i += INSERT_CHUNK) {
        const chunk = events.slice(i, i + INSERT_CHUNK)
        yield* run(insertSql(chunk.length), eventsParams(id, chunk))
      }
    })

  // -- append ---------------------------------------------------------------------------------

  /** a failed write because storage refused it → `PERSISTENCE_FAILED` (DEC-11) */
  const saveFailure = (id: string, op: string) => (e: SessionError.SessionError): SessionError.SessionError =>
    e.code === "IO" && SaveFailure.isSaveFailure(e.cause) ? SaveFailure.make({ file, op, error: e.cause, sessionId: id }) : e

  /**
   * The write-through fast path: while this instance holds the lock of a stored session, a batch
   * that fits one multi-row `INSERT` is that one statement in autocommit (atomic on its own: one
   * implicit transaction, one commit), instead of `BEGIN`, `INSERT`, `COMMIT`.
   */
  const appendHeld = Effect.fnUntraced(function*(
    id: string,
    entry: Entry,
    nextSeq: number,
    input: ReadonlyArray<SessionEvent>,
    sync: boolean
  ) {
    const events = yield* Effect.fromResult(Records.validateBatch(id, input, nextSeq))
    const params = eventsParams(id, events)
    yield* autocommit((run) => run(insertSql(events.length), params), sync)
    entry.nextSeq = nextSeq + events.length
    // a durable commit also syncs the WAL frames of earlier commits
    entry.dirty = !sync
  }, (effect, id) => Effect.mapError(effect, saveFailure(id, "write to")))

  const appendUnserialized = (id: string, input: ReadonlyArray<SessionEvent>, sync: boolean) => {
    const entry = entries.get(id)
    if (entry !== undefined && entry.stored && held.has(id) && entry.nextSeq !== undefined && input.length <= INSERT_CHUNK) {
      return appendHeld(id, entry, entry.nextSeq, input, sync)
    }
    return appendTransaction(id, input, sync)
  }

  /** the stored next seq of a session this instance does not hold (read back, DEC-4 checked) */
  const appendChecked = (run: Run, id: string, entry: Entry, input: ReadonlyArray<SessionEvent>) =>
    Effect.gen(function*() {
      const existing = yield* run("SELECT version FROM sessions WHERE id = ?", [id])
      if (entry.stored && existing.length === 0) {
        entries.delete(id)
        return yield* Effect.fail(notFound(id))
      }
      if (!entry.stored && existing.length > 0) {
        return yield* Effect.fail(
          SessionError.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(id)} is already stored in ${file}`, {
            sessionId: id,
            file
          })
        )
      }
      const last = yield* run("SELECT MAX(seq) AS last FROM events WHERE session_id = ?", [id])
      const lastSeq = last[0]?.["last"]
      const nextSeq = typeof lastSeq === "number" ? lastSeq + 1 : 0
      const events = yield* Effect.fromResult(Records.validateBatch(id, input, nextSeq))
      yield* Lock.check(lockStoreIn(run, id), id)
      if (!entry.stored) {
        const h = entry.header
        yield* run(
          "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length) VALUES (?, ?, ?, ?, ?, ?)",
          [h.id, h.version, h.createdAt, h.cwd ?? null, h.parentSession ?? null, h.seedLength ?? null]
        )
      }
      yield* insertEvents(run, id, events)
      return nextSeq + events.length
    })

  const appendTransaction = (id: string, input: ReadonlyArray<SessionEvent>, sync: boolean) =>
    transaction(
      (run) =>
        Effect.gen(function*() {
          let entry = entries.get(id)
          if (entry === undefined) {
            // known only from storage: adopt it first (load + repair, D-3)
            yield* loadRepairing(run, id)
            entry = entries.get(id)
            if (entry === undefined) return yield* Effect.die(new Error("unreachable: a load tracks the session"))
          }
          // while this instance holds the writer lock, nobody else writes the session (DEC-4): the
          // stored next seq is the one this instance left, no need to read it back
          const known = held.has(id) && entry.stored ? entry.nextSeq : undefined
          if (known !== undefined) {
            const events = yield* Effect.fromResult(Records.validateBatch(id, input, known))
            yield* insertEvents(run, id, events)
            return { entry, next: known + events.length }
          }
          return { entry, next: yield* appendChecked(run, id, entry, input) }
        }),
      "IMMEDIATE",
      sync || entries.get(id)?.stored !== true
    ).pipe(
      Effect.tap(({ entry, next }) =>
        Effect.sync(() => {
          entry.nextSeq = next
          // a durable commit also syncs the WAL frames of earlier commits
          entry.dirty = !(sync || !entry.stored)
          entry.stored = true
        })
      ),
      Effect.asVoid,
      Effect.mapError(saveFailure(id, "write to"))
    )

  /** fsyncs the write-ahead log itself (fsync is per file, any descriptor will do) */
  const fsyncWal = (id: string): Effect.Effect<void, SessionError.SessionError> => {
    const wal = `${file}-wal`
    return Effect.flatMap(FileSystem.FileSystem, (fs) =>
      Effect.scoped(Effect.flatMap(fs.open(wal, { flag: "r" }), (handle) => handle.sync))).pipe(
        Effect.catch((e) =>
          e.reason._tag === "NotFound"
            // no WAL file (another journal mode): a checkpoint syncs what there is
            ? Effect.mapError(autocommit((run) => run("PRAGMA wal_checkpoint(PASSIVE)")), saveFailure(id, "fsync"))
            : Effect.fail(SaveFailure.make({ file: wal, op: "fsync", error: e, sessionId: id }))
        ),
        Effect.asVoid,
        Effect.provide(NodeFileSystem.layer)
      )
  }

  const syncUnserialized = (id: string) =>
    Effect.suspend(() => {
      const entry = entries.get(id)
      if (entry === undefined || !entry.dirty) return Effect.void
      // durable without a checkpoint, which would need free space to copy pages into the database
      return Effect.tap(fsyncWal(id), () => Effect.sync(() => (entry.dirty = false)))
    })

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
