/**
 * The state one SQLite backend instance shares between its parts (`Sqlite.make`): statements,
 * autocommit and transactions on a held connection (`synchronous = FULL` when durable), the
 * sessions it tracks, the per-id serializer, the ids whose writer lock it holds, and the lock rows.
 *
 * @since 0.1.0
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as SessionError from "../../SessionError.js"
import type { SessionHeader } from "../../SessionEvent.js"
import * as Lock from "../Lock.js"
import * as PerId from "../PerId.js"
import * as SaveFailure from "../SaveFailure.js"
import * as SqliteDatabase from "../SqliteDatabase.js"
import type { Run } from "./Rows.js"


/** internal: a read-only load found something to repair */
export class NeedsWrite extends Data.TaggedError("NeedsWrite")<{}> {}

/** What the instance knows of one session. */
export interface Entry {
  readonly header: SessionHeader
  stored: boolean
  /** committed under `synchronous = NORMAL` since the last WAL sync */
  dirty: boolean
  /** the stored next seq as this instance left it (trusted only while it holds the lock) */
  nextSeq?: number
  /** created while this instance held the id's lock: forgotten with the lock even if never stored */
  readonly underLock?: boolean
}

/** The shared state and statement helpers of one instance. */
export interface Store {
  readonly db: SqliteDatabase.SqliteDatabase["Service"]
  /** the database file, named in messages */
  readonly file: string
  /** single statements on the connection (autocommit), under `synchronous = FULL` when `durable` */
  readonly autocommit: <A, E>(f: (run: Run) => Effect.Effect<A, E>, durable?: boolean) => Effect.Effect<A, E | SessionError.SessionError>
  /** one transaction, committed on success, rolled back on any failure */
  readonly transaction: <A, E>(
    f: (run: Run) => Effect.Effect<A, E>,
    mode?: "IMMEDIATE" | "DEFERRED",
    durable?: boolean
  ) => Effect.Effect<A, E | SessionError.SessionError>
  readonly entries: Map<string, Entry>
  readonly serialized: PerId.Serializer
  /** ids whose writer lock this instance holds */
  readonly held: Set<string>
  /** the lock row of an id, in autocommit */
  readonly lockStoreOutside: (id: string) => Lock.Store
  /** the lock row of an id, inside a transaction */
  readonly lockStoreIn: (run: Run, id: string) => Lock.Store
  /** a failed write because storage refused it → `PERSISTENCE_FAILED` (DEC-11) */
  readonly saveFailure: (id: string, op: string) => (e: SessionError.SessionError) => SessionError.SessionError
}

/** Builds the shared state of an instance over the open database. */
export const make = (db: SqliteDatabase.SqliteDatabase["Service"]): Store => {
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

  /** a failed write because storage refused it → `PERSISTENCE_FAILED` (DEC-11) */
  const saveFailure = (id: string, op: string) => (e: SessionError.SessionError): SessionError.SessionError =>
    e.code === "IO" && SaveFailure.isSaveFailure(e.cause) ? SaveFailure.make({ file, op, error: e.cause, sessionId: id }) : e

  return {
    db,
    file,
    autocommit,
    transaction,
    entries,
    serialized,
    held,
    lockStoreOutside,
    lockStoreIn,
    saveFailure
  }
}
