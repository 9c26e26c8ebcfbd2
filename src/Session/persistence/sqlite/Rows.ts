/**
 * The rows of the SQLite backend: events as `INSERT` parameters and back, headers and list
 * summaries decoded from rows, and the multi-row insert of a batch.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as SessionError from "../../SessionError.js"
import type { SessionEvent, SessionHeader } from "../../SessionEvent.js"
import type { SessionSummary } from "../../SessionPersistence.js"
import * as Records from "../Records.js"
import type * as SqliteDatabase from "../SqliteDatabase.js"
import * as Summary from "../Summary.js"


/** rows per multi-row INSERT (7 parameters each, far below SQLite's variable limit) */
export const INSERT_CHUNK = 100

export type Row = SqliteDatabase.Row
export type Param = SqliteDatabase.Param

/** One statement on a connection. */
export type Run = (sql: string, params?: ReadonlyArray<Param>) => Effect.Effect<ReadonlyArray<Row>, SessionError.SessionError>

export const notFound = (id: string): SessionError.SessionError =>
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

export const eventsParams = (id: string, events: ReadonlyArray<SessionEvent>): Array<Param> => {
  const params: Array<Param> = []
  for (const e of events) pushEventParams(params, id, e)
  return params
}

/** the multi-row INSERT of 1..INSERT_CHUNK events (built once per row count: the statement cache's key) */
const insertSqls: Array<string> = []
export const insertSql = (rows: number): string =>
  (insertSqls[rows] ??= `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES ${
    Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?)").join(", ")
  }`)

/** Rebuilds the stored event of a row (envelope key order as in JSONL), or UNPARSABLE. */
export const rowEvent = (row: Row): unknown => {
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

export const headerOf = (row: Row): { readonly header: SessionHeader } | { readonly problem: string; readonly version?: unknown } =>
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

export const summaryOf = (row: Row): SessionSummary | undefined => {
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

export const LIST_SQL = `SELECT s.*,
  (SELECT time FROM events e WHERE e.session_id = s.id ORDER BY seq DESC LIMIT 1) AS last_time,
  (SELECT data FROM events e WHERE e.session_id = s.id AND e.type = 'turn/start' ORDER BY seq DESC LIMIT 1) AS last_turn_start,
  (SELECT data FROM events e WHERE e.session_id = s.id AND e.type = 'turn/start' ORDER BY seq LIMIT 1) AS first_turn_start,
  (SELECT data FROM events e WHERE e.session_id = s.id AND e.type = 'user/message' ORDER BY seq LIMIT 1) AS first_user
FROM sessions s`

/** Inserts a batch in multi-row statements of at most `INSERT_CHUNK` rows. */
export const insertEvents = (run: Run, id: string, events: ReadonlyArray<SessionEvent>) =>
  Effect.gen(function*() {
    for (let i = 0; i < events.length; i += INSERT_CHUNK) {
      const chunk = events.slice(i, i + INSERT_CHUNK)
      yield* run(insertSql(chunk.length), eventsParams(id, chunk))
    }
  })
