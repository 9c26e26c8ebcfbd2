/**
 * The SQLite persistence backend as its own package entry (`effect-harness/sqlite`): importing the root entry
 * never loads `better-sqlite3` (a native addon) for users who only need JSONL or memory persistence.
 *
 * ```ts
 * import { Sqlite } from "effect-harness/sqlite"
 * ```
 *
 * @since 0.2.0
 */
export * as Sqlite from "./Session/persistence/Sqlite.js"
