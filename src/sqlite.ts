/**
 * The SQLite persistence backend as its own package entry (`effect-harness/sqlite`), with the small
 * `node:sqlite` client it runs on (`SqliteDatabase`, for `Sqlite.make` over a database you open).
 * Importing the root entry never loads the SQLite backend; this entry loads Node's built-in
 * `node:sqlite` only when a database is opened.
 *
 * ```ts
 * import { Sqlite } from "effect-harness/sqlite"
 * ```
 *
 * @since 0.1.0
 */
export * as Sqlite from "./Session/persistence/Sqlite.js"
/**
 * @since 0.1.0
 */
export * as SqliteDatabase from "./Session/persistence/SqliteDatabase.js"
