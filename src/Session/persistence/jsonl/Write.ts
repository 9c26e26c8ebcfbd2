/**
 * The effectful write path (`Jsonl` module doc, Writes): the first write (temporary file, fsync,
 * hard-link publication), later appends through a pooled append handle (truncated back on
 * failure), `sync`, and an append outside the coalesced path (adopting a log changed behind this
 * instance's back first).
 *
 * @since 0.1.0
 * @internal
 */
import type * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import * as SessionError from "../../SessionError.js"
import type { SessionEvent } from "../../SessionEvent.js"
import type { Loaded } from "../../SessionPersistence.js"
import * as Lock from "../Lock.js"
import * as Records from "../Records.js"
import { DIR_MODE, encodeId, FILE_MODE, isReason, notFound } from "./Store.js"
import type { Entry, Store } from "./Store.js"


/** The write path of an instance; `loadUnserialized` adopts a log this instance does not know (yet). */
export const make = (
  store: Store,
  loadUnserialized: (id: string) => Effect.Effect<Loaded, SessionError.SessionError>
) => {
  const { fs, root, pool, entries, held, ioError, saveFailed, findStored, lockStore, fsyncDirectory, removeIfPresent } = store

  const firstWrite = (entry: Entry, events: ReadonlyArray<SessionEvent>) =>
    Effect.gen(function*() {
      const id = entry.header.id
      const elsewhere = yield* findStored(id)
      if (elsewhere !== undefined) {
        return yield* Effect.fail(
          SessionError.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(id)} is already stored at ${elsewhere}`, {
            sessionId: id,
            file: elsewhere
          })
        )
      }
      const dir = path.dirname(entry.path)
      yield* fs.makeDirectory(dir, { recursive: true, mode: DIR_MODE }).pipe(
        Effect.mapError(saveFailed(dir, "create directory", id))
      )
      const tmp = path.join(dir, `.${path.basename(entry.path)}.${Lock.randomToken()}.tmp`)
      let text = `${JSON.stringify(Records.headerRecord(entry.header))}\n`
      for (const event of events) text += `${Records.encodeEvent(event)}\n`
      const bytes = Buffer.from(text, "utf8")
      yield* Effect.gen(function*() {
        yield* pool.withSlot(Effect.scoped(
          Effect.gen(function*() {
            const handle = yield* fs.open(tmp, { flag: "wx", mode: FILE_MODE })
            yield* handle.writeAll(bytes)
            yield* handle.sync
          })
        )).pipe(Effect.mapError(saveFailed(tmp, "write", id)))
        yield* fs.link(tmp, entry.path).pipe(
          Effect.mapError((e) =>
            isReason(e, "AlreadyExists")
              ? SessionError.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(id)} is already stored at ${entry.path}`, {
                sessionId: id,
                file: entry.path
              })
              : saveFailed(entry.path, "publish", id)(e)
          )
        )
      }).pipe(Effect.ensuring(removeIfPresent(tmp).pipe(Effect.catch((e) => Effect.logWarning(e.message)))))
      yield* fsyncDirectory(dir)
      // the bucket itself may be new
      yield* fsyncDirectory(root)
      entry.stored = true
      entry.size = bytes.byteLength
      entry.nextSeq = events.length
      entry.dirty = false
    })

  /**
   * Runs `f` with an append handle of the log: while this instance holds the session's writer
   * lock, the handle stays open in the pool between batches (write-through costs one `write` per
   * batch) until the lock is released or the pool needs the descriptor for another log (LRU);
   * otherwise the log is opened for this call only. A failure closes the handle.
   */
  const withHandle = <A, E>(
    entry: Entry,
    f: (handle: FileSystem.File) => Effect.Effect<A, E>
  ): Effect.Effect<A, E | PlatformError.PlatformError> => {
    const open = fs.open(entry.path, { flag: "a", mode: FILE_MODE })
    return held.has(entry.header.id)
      ? pool.withFile(entry.header.id, open, f)
      : pool.withSlot(Effect.scoped(Effect.flatMap(open, f)))
  }

  const appendWrite = (entry: Entry, events: ReadonlyArray<SessionEvent>, sync: boolean) =>
    Effect.gen(function*() {
      let text = ""
      for (const event of events) text += `${Records.encodeEvent(event)}\n`
      const bytes = Buffer.from(text, "utf8")
      const before = entry.size
      yield* withHandle(entry, (handle) =>
        (sync ? Effect.andThen(handle.writeAll(bytes), handle.sync) : handle.writeAll(bytes)).pipe(
          Effect.tapError(() =>
            // drop whatever part of the batch reached the file (D-9)
            Effect.andThen(handle.truncate(before), handle.sync).pipe(
              Effect.catch((e) => Effect.logError(`could not truncate a failed append in ${entry.path}`, e))
            )
          )
        )).pipe(Effect.mapError(saveFailed(entry.path, "append to", entry.header.id)))
      entry.size = before + bytes.byteLength
      entry.nextSeq += events.length
      entry.dirty = !sync
    })

  const syncUnserialized = (id: string) =>
    Effect.suspend(() => {
      const entry = entries.get(id)
      if (entry === undefined || !entry.stored || !entry.dirty) return Effect.void
      return withHandle(entry, (handle) => handle.sync).pipe(
        Effect.mapError(saveFailed(entry.path, "fsync", id)),
        Effect.tap(() => Effect.sync(() => (entry.dirty = false)))
      )
    })

  const appendUnserialized = (id: string, input: ReadonlyArray<SessionEvent>, sync: boolean) =>
    Effect.gen(function*() {
      let entry = entries.get(id)
      if (entry === undefined) {
        yield* loadUnserialized(id)
        entry = entries.get(id)!
      } else if (entry.stored && !held.has(id)) {
        // (while this instance holds the writer lock nobody else writes the log: DEC-4)
        const info = yield* fs.stat(entry.path).pipe(
          Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.fail(notFound(id))),
          Effect.mapError((e) => (e instanceof SessionError.SessionError ? e : ioError(entry!.path, "stat")(e)))
        )
        if (Number(info.size) !== entry.size) {
          // changed behind our back: adopt what is really stored
          yield* loadUnserialized(id)
          entry = entries.get(id)!
        }
      }
      const events = yield* Effect.fromResult(Records.validateBatch(id, input, entry.nextSeq))
      if (!held.has(id)) yield* Lock.check(lockStore(yield* Effect.fromResult(encodeId(id))), id)
      if (entry.stored) yield* appendWrite(entry, events, sync)
      else yield* firstWrite(entry, events)
    })

  return { appendWrite, syncUnserialized, appendUnserialized }
}
