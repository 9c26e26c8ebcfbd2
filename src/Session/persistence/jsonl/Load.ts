/**
 * Reading a stored log (`Jsonl` module doc, Load and Readers): the read-only `snapshot`, and the
 * writer's `load`, which recovers orphans, checks the lock, truncates a torn tail and appends and
 * fsyncs the closers before it adopts the session.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Repair from "../../Repair.js"
import * as SessionError from "../../SessionError.js"
import type { Loaded } from "../../SessionPersistence.js"
import * as JsonlReader from "../JsonlReader.js"
import * as Lock from "../Lock.js"
import * as Records from "../Records.js"
import { encodeId, isReason, notFound } from "./Store.js"
import type { Store } from "./Store.js"


/** The readers of an instance; `recoverOrphansOf` runs before a writer loads an id it does not hold stored. */
export const make = (
  store: Store,
  recoverOrphansOf: (id: string) => Effect.Effect<void, SessionError.SessionError>
) => {
  const { fs, pool, entries, held, readOptions, ioError, saveFailed, findStored, lockStore } = store

  /** the log read line by line (`JsonlReader`): any size, one record held at a time */
  const readParsed = (id: string, file: string) =>
    Effect.flatMap(
      pool.withSlot(Effect.scoped(
        Effect.flatMap(fs.open(file, { flag: "r" }), (handle) => JsonlReader.read(handle, file, id, readOptions))
      )).pipe(
        Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.fail(notFound(id))),
        Effect.mapError((e) => (e instanceof SessionError.SessionError ? e : ioError(file, "read")(e)))
      ),
      Effect.fromResult
    )

  /** A read-only snapshot: no lock, no write; repair in memory (DEC-11 readers). */
  const snapshot = (id: string): Effect.Effect<Loaded, SessionError.SessionError> =>
    Effect.gen(function*() {
      const file = yield* findStored(id)
      if (file === undefined) return yield* Effect.fail(notFound(id))
      const parsed = yield* readParsed(id, file)
      const closers = Repair.repair(parsed.events)
      const events = closers.length === 0 ? parsed.events : parsed.events.concat(closers)
      return { header: parsed.header, events, repaired: closers, truncated: parsed.dropped }
    })

  const loadUnserialized = (id: string): Effect.Effect<Loaded, SessionError.SessionError> =>
    Effect.gen(function*() {
      if (entries.get(id)?.stored !== true) yield* recoverOrphansOf(id)
      const file = yield* findStored(id)
      if (file === undefined) {
        if (entries.get(id)?.stored === true) entries.delete(id)
        return yield* Effect.fail(notFound(id))
      }
      yield* Lock.check(lockStore(yield* Effect.fromResult(encodeId(id))), id)
      const parsed = yield* readParsed(id, file)
      const closers = Repair.repair(parsed.events)
      let size = parsed.keepBytes
      if (parsed.dropped > 0 || closers.length > 0) {
        const tail = Buffer.from(closers.map((e) => `${Records.encodeEvent(e)}\n`).join(""), "utf8")
        yield* pool.withSlot(Effect.scoped(
          Effect.gen(function*() {
            const handle = yield* fs.open(file, { flag: "r+" })
            if (parsed.dropped > 0) yield* handle.truncate(parsed.keepBytes)
            yield* handle.seek(BigInt(parsed.keepBytes), "start")
            if (tail.byteLength > 0) yield* handle.writeAll(tail)
            yield* handle.sync
          })
        )).pipe(Effect.mapError(saveFailed(file, "repair", id)))
        size += tail.byteLength
      }
      const events = closers.length === 0 ? parsed.events : parsed.events.concat(closers)
      entries.set(id, {
        header: parsed.header,
        path: file,
        stored: true,
        nextSeq: events.length,
        size,
        dirty: false,
        underLock: held.has(id)
      })
      return { header: parsed.header, events, repaired: closers, truncated: parsed.dropped }
    })

  return { snapshot, loadUnserialized }
}
