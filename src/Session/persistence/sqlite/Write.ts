/**
 * The write path of the SQLite backend (`Sqlite` module doc): the held fast path (one multi-row
 * `INSERT` in autocommit), the checked transaction (adopting a session known only from storage,
 * reading the stored next seq back, creating the session row on the first write), and `sync`
 * (an fsync of the write-ahead log).
 *
 * @since 0.1.0
 * @internal
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as SessionError from "../../SessionError.js"
import type { SessionEvent } from "../../SessionEvent.js"
import type { Loaded } from "../../SessionPersistence.js"
import * as Lock from "../Lock.js"
import * as Records from "../Records.js"
import * as SaveFailure from "../SaveFailure.js"
import { eventsParams, INSERT_CHUNK, insertEvents, insertSql, notFound } from "./Rows.js"
import type { Run } from "./Rows.js"
import type { Entry, Store } from "./Store.js"


/** The write path of an instance; `loadRepairing` adopts a session known only from storage. */
export const make = (
  store: Store,
  loadRepairing: (run: Run, id: string) => Effect.Effect<Loaded, SessionError.SessionError>
) => {
  const { file, autocommit, transaction, entries, held, lockStoreIn, saveFailure } = store

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

  return { appendUnserialized, syncUnserialized }
}
