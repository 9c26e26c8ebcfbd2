/**
 * The JSONL persistence backend (D-9, DEC-9): the embedded default.
 *
 * Layout: `<root>/cwd-<first 12 hex of sha256(cwd)>/<encoded id>.jsonl`, or
 * `<root>/_no-cwd/<encoded id>.jsonl` for a session without cwd (`IdEncoding` keeps the name
 * injective and traversal-proof). `root` defaults to `DataDir.sessionsRoot`
 * (`$EFFECT_HARNESS_HOME/sessions`, else the per-user data directory, see `DataDir`), and the
 * `root` option wins over it. Line 1 is the session header tagged `type: "session"`; every further
 * line is exactly one event (`Records.encodeEvent`). Nothing else goes in the file.
 *
 * Writes (DEC-11 write-through).
 * - The first non-empty append (D-1) writes header and batch to `.<name>.<token>.tmp` beside the
 *   log, fsyncs it, publishes it with a hard link (which fails instead of overwriting: a racing
 *   writer gets `SESSION_ALREADY_EXISTS`), removes the temporary name and fsyncs the directory when
 *   the platform allows it (a failure to fsync a directory is logged, not raised). So a log is
 *   never visible half-written (no half header), and it exists from its first batch.
 * - Later appends write the batch with one `write` (it survives
 *   the death of this process once `append` resolves); with `sync` (the default) they fsync before
 *   resolving, else the batch is fsynced by the next synced append or `sync(id)`. A failed write or
 *   fsync truncates the file back to its previous size and fails `PERSISTENCE_FAILED` naming the
 *   file and the OS error (`SaveFailure`), so the log stays valid and the batch can be retried.
 *   While this instance holds the session's writer lock, the log stays open for appending until the
 *   lock is released and nothing else is checked per batch (nobody else writes it, DEC-4): no
 *   `stat`, no lock re-read, one `write` per batch and an fsync only when the append asks for it.
 *   Appends of such a session that arrive while a write of it is in flight go out together in the
 *   next write (one `write`, at most one fsync; a batch that fails validation fails alone).
 *   Otherwise each append opens the log, checks the lock and compares the file size with the size
 *   this instance last left: a log changed behind our back is re-adopted (loaded and repaired)
 *   first, so the seq check is against what is really stored.
 * - Appending to a session known only from storage adopts it first (load + repair, D-3).
 * - Orphans: a process killed during a first write leaves `.<name>.<token>.tmp`. `load` (of that
 *   id) and `list` recover it while no live writer holds the id's lock: a complete temporary file
 *   (header and whole lines) is published as the log when no log exists, and removed in every case.
 *
 * Readers (DEC-11): `snapshot` reads the file once, never looks at the lock and never writes; a
 * torn tail (a writer's batch caught mid-write) is dropped and the closers are computed in memory.
 *
 * Load (D-4, D-5): the log is read in 1 MiB chunks and parsed line by line (`JsonlReader`, issue
 * 26: a log past V8's 512 MiB string limit stays readable; a line over `maxRecordBytes` is skipped
 * unread as a torn record), one `JSON.parse` and one synchronous check per line
 * (`Records.Scanner`), then the repair scan (`Repair.repair`). A torn tail is truncated and the
 * closers appended and fsynced before `load` returns; an unloadable log is never written to.
 *
 * Locks (DEC-4): `lock(id)` creates `<root>/locks/<encoded id>.lock` holding `{pid, hostname,
 * token, acquiredAt}` (protocol in `Lock`). `append` and `load` (which may repair) fail
 * `SESSION_LOCKED` while another live writer holds the lock; `list` and `exists` never look at it.
 * [DECISION] The lock is per id under the root, not beside the log: a writer locks before it
 * creates (the header's cwd, hence the log's bucket, may not be known yet), and two processes
 * creating the same id for different cwds contend on the same lock. Locking an id that is not
 * stored yet is allowed (it reserves the id).
 *
 * `list` (D-6) reads, per log, the header line, the first 64 KiB to find the first prompt (up to
 * 1 MiB when the first `user/message` is further down) and the last 64 KiB backwards until it has
 * the last event's time and turn number (`Summary`). [DECISION] No sidecar index: turn counts come
 * from turn numbers (S-17), so nothing can go stale. Files that are empty, header-less, of another
 * format version or whose name is not an encoded id are skipped; a missing root means no sessions.
 *
 * [DECISION] Sessions hold whole conversations, so directories are created `0700` and logs, temporary
 * files and locks `0600`.
 *
 * Ids are unique across cwd buckets: `create` rejects an id stored in any bucket (D-2), and the
 * first write checks again (D-8). Operations on one id are serialized within an instance.
 *
 * Descriptors (issue 20): every file this instance opens goes through one `FilePool` of
 * `maxOpenFiles` (default {@link DEFAULT_MAX_OPEN_FILES}): the logs kept open for appending are
 * closed least recently used first when another file needs the room, and operations beyond the
 * bound wait instead of failing. Running out of descriptors anyway (`EMFILE`, `ENFILE`: other
 * files and sockets of the process) fails `PERSISTENCE_FAILED` naming the limit (`ulimit -n`) and
 * what to raise; the store keeps the unsaved events and retries them. Releasing the lock closes
 * the log and forgets the session in this instance (`tracked()` reports what is left: nothing).
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as path from "node:path"
import type { SessionId } from "../../Llm/Message.js"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import type { AppendOptions, Location, Service } from "../SessionPersistence.js"
import { SessionPersistence } from "../SessionPersistence.js"
import * as IdEncoding from "./IdEncoding.js"
import * as JsonlReader from "./JsonlReader.js"
import * as Coalesce from "./jsonl/Coalesce.js"
import * as List from "./jsonl/List.js"
import * as Load from "./jsonl/Load.js"
import * as Orphans from "./jsonl/Orphans.js"
import * as Store from "./jsonl/Store.js"
import { DIR_MODE, encodeId, notFound } from "./jsonl/Store.js"
import * as Write from "./jsonl/Write.js"
import * as WriteNow from "./jsonl/WriteNow.js"
import * as Lock from "./Lock.js"
import * as Records from "./Records.js"
import type * as Tracked from "./Tracked.js"

/**
 * Options of the JSONL backend.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the sessions root; default `DataDir.sessionsRoot` */
  readonly root?: string
  /**
   * at most this many files open at once (logs kept open for appending, reads, lock and temporary
   * files; `FilePool`); default {@link defaultMaxOpenFiles} of the process's limit
   */
  readonly maxOpenFiles?: number
  /**
   * Write a batch that needs no fsync with one synchronous `write(2)` on the log's open descriptor,
   * in the appending fiber's step (issue 20), instead of a round trip through the thread pool;
   * fsyncs stay asynchronous. Needs the file system to be Node's (its handles carry the OS
   * descriptor; with any other `File` every batch takes the effectful path): {@link layer} turns it
   * on, {@link make} (any `FileSystem`) leaves it off unless asked.
   */
  readonly writeNow?: boolean
  /**
   * the longest line a load reads (default `Records.MAX_EVENT_BYTES`, 64 MiB); a longer one is
   * skipped unread and treated as a torn record
   */
  readonly maxRecordBytes?: number
}

/**
 * The bound of open files per backend instance when the process's limit is unknown: far below the
 * usual per-process limits (256 on macOS, 1024 on Linux), so sockets and the host service keep room.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_OPEN_FILES = 64

/**
 * The default bound of open files for a process limit (`ulimit -n`): a quarter of it, between
 * {@link DEFAULT_MAX_OPEN_FILES} and 1,024 (256 under the usual Linux limit of 1,024). Every live
 * log the pool cannot keep open is reopened at each write (an LRU over more logs than it holds
 * misses on every round-robin write), so many agents want as many as the process can spare.
 *
 * @since 0.1.0
 * @category utils
 */
export const defaultMaxOpenFiles = (processLimit: number | undefined): number =>
  processLimit === undefined
    ? DEFAULT_MAX_OPEN_FILES
    : Math.min(1024, Math.max(DEFAULT_MAX_OPEN_FILES, Math.floor(processLimit / 4)))

/**
 * The `Location.kind` of this backend.
 *
 * @since 0.1.0
 * @category constants
 */
export const KIND = Store.KIND

/**
 * The bucket directory name of a cwd (`cwd-<12 hex>` or `_no-cwd`).
 *
 * @since 0.1.0
 * @category utils
 */
export const bucketOf: (cwd: string | undefined) => string = Store.bucketOf

/**
 * Parses and checks a whole JSONL log held in memory (D-4, D-5) without side effects; stored logs
 * are read line by line (`JsonlReader`).
 *
 * @since 0.1.0
 * @category internal
 */
export const parseLog = (
  bytes: Uint8Array,
  file: string,
  id: string
): Result.Result<JsonlReader.ParsedLog, SessionError.SessionError> => JsonlReader.parse(bytes, file, id)

// ---------------------------------------------------------------------------------------------
// the service

/**
 * Builds the JSONL backend (requires a `FileSystem`) from its parts under `jsonl/`: the shared
 * state (`Store`), orphan recovery, load and snapshot, the write path, coalesced write-through,
 * `append.now` and `list`; creation, locks and removal are here.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Service & Tracked.WithTracked, Config.ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const store = yield* Store.make({
      root: options.root,
      maxOpenFiles: (processLimit) => options.maxOpenFiles ?? defaultMaxOpenFiles(processLimit),
      maxRecordBytes: options.maxRecordBytes
    })
    const { fs, entries, serialized, held, pool, fileIn, findStored, locksDir, lockStore, ioError } = store
    const { fsyncDirectory, removeIfPresent } = store
    const orphans = Orphans.make(store)
    const { snapshot, loadUnserialized } = Load.make(store, orphans.recoverOrphansOf)
    const { appendWrite, syncUnserialized, appendUnserialized } = Write.make(store, loadUnserialized)
    const { appendCoalesced } = Coalesce.make(store, appendWrite)
    const appendNow = WriteNow.make(store)
    const { list } = List.make(store, orphans.recoverOrphans)

    const locate = (header: SessionHeader): Location | undefined =>
      Result.match(IdEncoding.encode(header.id), {
        onFailure: () => undefined,
        onSuccess: (encoded) => ({ kind: KIND, path: fileIn(bucketOf(header.cwd), encoded) })
      })

    // -- create, exists, lock ---------------------------------------------------------------------

    const create = (input: SessionHeader): Effect.Effect<void, SessionError.SessionError> =>
      Effect.gen(function*() {
        const header = yield* Effect.fromResult(Records.validateHeader(input))
        const encoded = yield* Effect.fromResult(encodeId(header.id))
        yield* serialized(header.id)(Effect.gen(function*() {
          if (entries.has(header.id)) {
            return yield* Effect.fail(
              SessionError.make("SESSION_ALREADY_EXISTS", `session ${JSON.stringify(header.id)} already exists; load or resume it instead`, {
                sessionId: header.id
              })
            )
          }
          const stored = yield* findStored(header.id)
          if (stored !== undefined) {
            return yield* Effect.fail(
              SessionError.make(
                "SESSION_ALREADY_EXISTS",
                `session ${JSON.stringify(header.id)} is already stored at ${stored}; load or resume it instead`,
                { sessionId: header.id, file: stored }
              )
            )
          }
          entries.set(header.id, {
            header,
            path: fileIn(bucketOf(header.cwd), encoded),
            stored: false,
            nextSeq: 0,
            size: 0,
            dirty: false,
            underLock: held.has(header.id)
          })
        }))
      })

    const lock = (id: SessionId) =>
      Effect.gen(function*() {
        const encoded = yield* Effect.fromResult(encodeId(id))
        yield* fs.makeDirectory(locksDir, { recursive: true, mode: DIR_MODE }).pipe(
          Effect.mapError(ioError(locksDir, "create directory"))
        )
        yield* Lock.acquire(lockStore(encoded), id)
        // released first (finalizers run in reverse): the cached append handle closes before the
        // lock goes, and the instance forgets the session (the log is the truth; a later writer
        // adopts it again), so released sessions leave nothing behind
        yield* Effect.acquireRelease(
          Effect.sync(() => held.add(id)),
          () =>
            serialized(id)(Effect.andThen(
              pool.close(id),
              Effect.sync(() => {
                held.delete(id)
                const entry = entries.get(id)
                if (entry !== undefined && (entry.stored || entry.underLock)) entries.delete(id)
              })
            ))
        )
      })

    const remove = (id: SessionId): Effect.Effect<void, SessionError.SessionError> =>
      Effect.scoped(Effect.gen(function*() {
        const file = yield* findStored(id)
        if (file === undefined) return yield* notFound(id)
        yield* lock(id)
        yield* serialized(id)(Effect.gen(function*() {
          yield* pool.close(id)
          yield* removeIfPresent(file)
          entries.delete(id)
          yield* fsyncDirectory(path.dirname(file))
        }))
      }))

    const appendEffect = (id: SessionId, events: ReadonlyArray<SessionEvent>, options?: AppendOptions) =>
      Effect.suspend(() => {
        if (events.length === 0) return Effect.void
        const sync = options?.sync !== false
        return held.has(id) && entries.get(id)?.stored === true
          ? appendCoalesced(id, events, sync)
          : serialized(id)(appendUnserialized(id, events, sync))
      })

    const service: Service & Tracked.WithTracked = {
      tracked: () => ({ sessions: entries.size, serializing: serialized.size(), held: held.size, openFiles: pool.open() }),
      locate,
      remove,
      create,
      append: options.writeNow === true ? Object.assign(appendEffect, { now: appendNow }) : appendEffect,
      sync: (id) => serialized(id)(syncUnserialized(id)),
      load: (id) => serialized(id)(loadUnserialized(id)),
      snapshot,
      list,
      exists: (id) => Effect.map(findStored(id), (file) => file !== undefined),
      lock
    }
    return service
  })

/**
 * The JSONL backend as a Layer (Node file system included).
 *
 * @example
 * ```ts
 * import * as Jsonl from "effect-harness/Session/persistence/Jsonl"
 * const Persistence = Jsonl.layer({ root: "/var/lib/my-agent/sessions" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<SessionPersistence, Config.ConfigError> =>
  Layer.effect(SessionPersistence, make({ ...options, writeNow: options.writeNow ?? true })).pipe(
    Layer.provide(NodeFileSystem.layer)
  )
