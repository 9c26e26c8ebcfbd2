/**
 * Recovery of orphaned first writes (`Jsonl` module doc): a process killed during a first write
 * leaves `.<name>.<token>.tmp`; while no live writer holds the id's lock, a complete temporary
 * file is published as the log when no log exists, and removed in every case.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as path from "node:path"
import * as IdEncoding from "../IdEncoding.js"
import * as JsonlReader from "../JsonlReader.js"
import * as Lock from "../Lock.js"
import { encodeId, isReason, orphanRe } from "./Store.js"
import type { Store } from "./Store.js"


/** The orphan recovery of an instance. */
export const make = (store: Store) => {
  const { fs, root, pool, serialized, readOptions, buckets, ioError, fileExists, removeIfPresent, fsyncDirectory, lockStore } = store

  /** `true` while a live writer (here or in another process) holds the id's lock */
  const heldByLiveWriter = (encoded: string) =>
    Effect.map(lockStore(encoded).read, (owner) => owner !== undefined && owner !== "unreadable" && !Lock.isStale(owner))

  /** Recovers one orphaned temporary file (see the module doc); failures are logged, not raised. */
  const recoverOrphan = (dir: string, name: string, encoded: string, id: string) =>
    Effect.gen(function*() {
      if (yield* heldByLiveWriter(encoded)) return
      const tmp = path.join(dir, name)
      const final = path.join(dir, `${encoded}.jsonl`)
      const parsed = yield* pool.withSlot(Effect.scoped(
        Effect.flatMap(fs.open(tmp, { flag: "r" }), (handle) => JsonlReader.read(handle, tmp, id, readOptions))
      )).pipe(Effect.mapError(ioError(tmp, "read")))
      // complete: nothing dropped (a last line without its newline is an incomplete record)
      const complete = Result.isSuccess(parsed) && parsed.success.dropped === 0
      if (complete && !(yield* fileExists(final))) {
        yield* fs.link(tmp, final).pipe(
          Effect.catchIf((e) => isReason(e, "AlreadyExists"), () => Effect.void),
          Effect.mapError(ioError(final, "publish"))
        )
        yield* Effect.logInfo(`recovered the first write of session ${id} into ${final}`)
      }
      yield* removeIfPresent(tmp)
      yield* fsyncDirectory(dir)
    }).pipe(Effect.catch((e) => Effect.logWarning(`could not recover ${path.join(dir, name)}: ${e.message}`)))

  /** Recovers the orphaned temporary files in a bucket (of one encoded id, or all). */
  const recoverOrphans = (dir: string, names: ReadonlyArray<string>, only?: string) =>
    Effect.forEach(names, (name) => {
      const m = orphanRe.exec(name)
      if (m === null || (only !== undefined && m[1] !== only)) return Effect.void
      const id = IdEncoding.decode(m[1]!)
      return id === undefined ? Effect.void : serialized(id)(recoverOrphan(dir, name, m[1]!, id))
    }, { discard: true })

  /** Recovers the orphans of one id in every bucket (before a writer loads it). */
  const recoverOrphansOf = (id: string) =>
    Effect.gen(function*() {
      const encoded = yield* Effect.fromResult(encodeId(id))
      for (const bucket of yield* buckets) {
        const dir = path.join(root, bucket)
        const names = yield* pool.withSlot(fs.readDirectory(dir)).pipe(
          Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed([])),
          Effect.mapError(ioError(dir, "read directory"))
        )
        for (const name of names) {
          const m = orphanRe.exec(name)
          if (m !== null && m[1] === encoded) yield* recoverOrphan(dir, name, encoded, id)
        }
      }
    })

  return { recoverOrphans, recoverOrphansOf }
}
