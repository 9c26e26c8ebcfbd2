/**
 * A small SQLite client over Node's built-in `node:sqlite` (`DatabaseSync`): no native addon to
 * compile, nothing to install. It is what the SQLite persistence backend (`Sqlite`) runs on.
 *
 * - One connection per database handle, opened and closed as a scoped resource ({@link open},
 *   {@link layer}). A writer switches the file to WAL on open; a read-only handle (`readOnly`)
 *   opens the file with `SQLITE_OPEN_READONLY` and never changes its journal mode.
 * - `node:sqlite` is synchronous, so statements never overlap; a transaction spans several
 *   statements, though, so every use of the connection holds it exclusively
 *   ({@link Service.withConnection}: a one-permit semaphore, like the connection of
 *   `@effect/sql-sqlite-node` it replaces) and nothing of another fiber lands inside it.
 * - Prepared statements are cached per SQL text (the most recent {@link STATEMENT_CACHE}).
 * - `SQLITE_BUSY`: a busy handler waits up to {@link Options.busyTimeout} (default 5 s, as
 *   better-sqlite3 did) for another connection's lock before a statement fails `SQLITE_BUSY`.
 * - Every failure is a {@link SqliteError} whose `code` is the canonical name of the SQLite primary
 *   result code (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_READONLY`, …; `node:sqlite` itself only
 *   gives the number), so `SaveFailure` maps it to the OS error it stands for, as before.
 *
 * [DECISION] `node:sqlite` is loaded when a database is first opened, not when this module is
 * imported, and Node's one-time `ExperimentalWarning` for it ("SQLite is an experimental feature")
 * is filtered out while it loads (Node 22.23 still prints it, on every run): the project chose the
 * built-in driver deliberately, and the warning would otherwise reach the CLI's stderr. Every
 * other warning passes through.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type { DatabaseSync, StatementSync } from "node:sqlite"

/**
 * A row: column name → value (`null`, a number, a string, or bytes).
 *
 * @since 0.1.0
 * @category models
 */
export type Row = { readonly [column: string]: unknown }

/**
 * A statement parameter.
 *
 * @since 0.1.0
 * @category models
 */
export type Param = null | number | bigint | string | Uint8Array

/**
 * A failed SQLite call. `code` is the canonical name of the SQLite primary result code
 * (`SQLITE_FULL`), or Node's own code when the call failed before SQLite ran it
 * (`ERR_INVALID_ARG_TYPE`); `errcode` is SQLite's extended result code when there is one.
 *
 * @since 0.1.0
 * @category errors
 */
export class SqliteError extends Data.TaggedError("SqliteError")<{
  readonly code: string
  readonly errcode?: number
  readonly message: string
  readonly cause: unknown
}> {}

/**
 * Options of a database handle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the database file (`":memory:"` for a private in-memory database) */
  readonly filename: string
  /** open read-only: nothing is created, the journal mode is left alone, writes fail `SQLITE_READONLY` */
  readonly readOnly?: boolean
  /** milliseconds to wait for another connection's lock before failing `SQLITE_BUSY`; default 5000 */
  readonly busyTimeout?: number
}

/**
 * The connection, held exclusively (inside {@link Service.withConnection}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  /** runs one statement (prepared once, cached) and returns its rows (none for a statement that returns none) */
  readonly query: (sql: string, params?: ReadonlyArray<Param>) => Effect.Effect<ReadonlyArray<Row>, SqliteError>
  /**
   * Runs `body` in one transaction: `BEGIN <mode>`, then `COMMIT` on success, `ROLLBACK` on any
   * failure or interruption (the body's failure is kept; a failed `ROLLBACK` is logged). Not nestable.
   */
  readonly transaction: <A, E, R>(
    mode: "DEFERRED" | "IMMEDIATE",
    body: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | SqliteError, R>
}

/**
 * A database handle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly filename: string
  readonly readOnly: boolean
  /** runs `f` with the connection held exclusively (waits while another fiber holds it) */
  readonly withConnection: <A, E, R>(f: (connection: Connection) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** one statement on the connection (`withConnection` + `query`) */
  readonly query: (sql: string, params?: ReadonlyArray<Param>) => Effect.Effect<ReadonlyArray<Row>, SqliteError>
}

/**
 * The database handle Tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class SqliteDatabase extends Context.Service<SqliteDatabase, Service>()(
  "effect-harness/Session/persistence/SqliteDatabase"
) {}

/**
 * How many prepared statements a handle keeps (least recently used dropped first).
 *
 * @since 0.1.0
 * @category constants
 */
export const STATEMENT_CACHE = 200

/** SQLite primary result codes (the low byte of an extended code) → their names */
const PRIMARY_CODES: ReadonlyArray<string> = [
  "SQLITE_OK",
  "SQLITE_ERROR",
  "SQLITE_INTERNAL",
  "SQLITE_PERM",
  "SQLITE_ABORT",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_NOMEM",
  "SQLITE_READONLY",
  "SQLITE_INTERRUPT",
  "SQLITE_IOERR",
  "SQLITE_CORRUPT",
  "SQLITE_NOTFOUND",
  "SQLITE_FULL",
  "SQLITE_CANTOPEN",
  "SQLITE_PROTOCOL",
  "SQLITE_EMPTY",
  "SQLITE_SCHEMA",
  "SQLITE_TOOBIG",
  "SQLITE_CONSTRAINT",
  "SQLITE_MISMATCH",
  "SQLITE_MISUSE",
  "SQLITE_NOLFS",
  "SQLITE_AUTH",
  "SQLITE_FORMAT",
  "SQLITE_RANGE",
  "SQLITE_NOTADB",
  "SQLITE_NOTICE",
  "SQLITE_WARNING"
]

/**
 * The canonical name of a SQLite result code (primary or extended): `13` → `SQLITE_FULL`,
 * `1811` (`SQLITE_CONSTRAINT_TRIGGER`) → `SQLITE_CONSTRAINT`.
 *
 * @since 0.1.0
 * @category utils
 */
export const codeName = (errcode: number): string => PRIMARY_CODES[errcode & 0xff] ?? `SQLITE_${errcode}`

/**
 * Wraps what a `node:sqlite` call threw (an `Error` with `errcode`/`errstr` for a SQLite failure).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromThrown = (thrown: unknown): SqliteError => {
  const e = typeof thrown === "object" && thrown !== null
    ? thrown as { readonly errcode?: unknown; readonly code?: unknown; readonly message?: unknown }
    : {}
  const message = typeof e.message === "string" ? e.message : String(thrown)
  if (typeof e.errcode === "number") {
    return new SqliteError({ code: codeName(e.errcode), errcode: e.errcode, message, cause: thrown })
  }
  return new SqliteError({ code: typeof e.code === "string" ? e.code : "UNKNOWN", message, cause: thrown })
}

const isSqliteWarning = (warning: string | Error, rest: ReadonlyArray<unknown>): boolean => {
  const options = rest[0]
  const type = typeof options === "string"
    ? options
    : typeof options === "object" && options !== null && "type" in options
    ? options.type
    : typeof warning === "string"
    ? undefined
    : warning.name
  const text = typeof warning === "string" ? warning : warning.message
  return type === "ExperimentalWarning" && text.startsWith("SQLite ")
}

/** `node:sqlite`, loaded on first use without its experimental-feature warning */
const loadDriver = (): typeof import("node:sqlite") => {
  const original = process.emitWarning
  process.emitWarning = function(this: NodeJS.Process, warning: string | Error, ...rest: Array<unknown>): void {
    if (!isSqliteWarning(warning, rest)) Reflect.apply(original, this, [warning, ...rest])
  }
  let driver: typeof import("node:sqlite") | undefined
  try {
    driver = process.getBuiltinModule("node:sqlite")
  } finally {
    process.emitWarning = original
  }
  // absent when Node runs with --no-experimental-sqlite
  if (driver === undefined) throw new Error("node:sqlite is not available in this Node.js (is --no-experimental-sqlite set?)")
  return driver
}

/** a bounded cache of prepared statements, most recently used last */
const makeStatements = (db: DatabaseSync) => {
  const cache = new Map<string, StatementSync>()
  return (sql: string): StatementSync => {
    const cached = cache.get(sql)
    if (cached !== undefined) {
      cache.delete(sql)
      cache.set(sql, cached)
      return cached
    }
    const statement = db.prepare(sql)
    cache.set(sql, statement)
    if (cache.size > STATEMENT_CACHE) {
      const oldest = cache.keys().next()
      if (oldest.done !== true) cache.delete(oldest.value)
    }
    return statement
  }
}

const makeConnection = (db: DatabaseSync): Connection => {
  const prepare = makeStatements(db)
  const query = (sql: string, params: ReadonlyArray<Param> = []): Effect.Effect<ReadonlyArray<Row>, SqliteError> =>
    Effect.try({
      try: (): ReadonlyArray<Row> => prepare(sql).all(...params),
      catch: fromThrown
    })
  const rollback = query("ROLLBACK").pipe(
    Effect.catch((e) => Effect.logError("ROLLBACK failed", e))
  )
  const transaction = <A, E, R>(
    mode: "DEFERRED" | "IMMEDIATE",
    body: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | SqliteError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(query(`BEGIN ${mode}`), () =>
        Effect.flatMap(Effect.exit(restore(body)), (exit): Effect.Effect<A, E | SqliteError> => {
          if (Exit.isFailure(exit)) return Effect.andThen(rollback, Effect.failCause(exit.cause))
          return Effect.matchEffect(query("COMMIT"), {
            onFailure: (e) => Effect.andThen(db.isTransaction ? rollback : Effect.void, Effect.fail(e)),
            onSuccess: () => Effect.succeed(exit.value)
          })
        }))
    )
  return { query, transaction }
}

const openDatabase = (options: Options): Effect.Effect<DatabaseSync, SqliteError> =>
  Effect.try({
    try: () => {
      const { DatabaseSync } = loadDriver()
      const db = new DatabaseSync(options.filename, {
        readOnly: options.readOnly === true,
        timeout: options.busyTimeout ?? 5000
      })
      try {
        // WAL for a writer; a read-only connection cannot switch the mode and keeps the file's
        if (options.readOnly !== true) db.exec("PRAGMA journal_mode = WAL")
      } catch (e) {
        db.close()
        throw e
      }
      return db
    },
    catch: fromThrown
  })

/**
 * Opens the database for the scope (closed when the scope closes).
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (options: Options): Effect.Effect<Service, SqliteError, Scope.Scope> =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(openDatabase(options), (db) =>
      Effect.try({ try: () => db.close(), catch: fromThrown }).pipe(
        Effect.catch((e) => Effect.logError(`closing ${options.filename} failed`, e))
      ))
    const semaphore = yield* Semaphore.make(1)
    const connection = makeConnection(db)
    const withConnection = <A, E, R>(f: (connection: Connection) => Effect.Effect<A, E, R>) =>
      semaphore.withPermits(1)(Effect.suspend(() => f(connection)))
    return {
      filename: options.filename,
      readOnly: options.readOnly === true,
      withConnection,
      query: (sql, params) => withConnection((c) => c.query(sql, params))
    } satisfies Service
  })

/**
 * The database as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<SqliteDatabase, SqliteError> =>
  Layer.effect(SqliteDatabase, open(options))
