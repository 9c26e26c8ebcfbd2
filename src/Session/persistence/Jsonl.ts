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
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type * as Config from "effect/Config"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as path from "node:path"
import type { SessionId } from "../../Llm/Message.js"
import * as Repair from "../Repair.js"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import type { AppendNow, AppendOptions, Loaded, Location, Service, SessionSummary } from "../SessionPersistence.js"
import { SessionPersistence } from "../SessionPersistence.js"
import * as DataDir from "./DataDir.js"
import * as IdEncoding from "./IdEncoding.js"
import * as JsonlReader from "./JsonlReader.js"
import * as FilePool from "./FilePool.js"
import * as Lock from "./Lock.js"
import * as PerId from "./PerId.js"
import * as Records from "./Records.js"
import * as SaveFailure from "./SaveFailure.js"
import * as Summary from "./Summary.js"
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
export const KIND = "jsonl"

const NO_CWD = "_no-cwd"
const bucketRe = /^(cwd-[0-9a-f]{12}|_no-cwd)$/
const WINDOW = 64 * 1024
const PROMPT_SCAN_LIMIT = 1024 * 1024
const NL = 10
/** sessions hold conversations: private to the user */
const DIR_MODE = 0o700
const FILE_MODE = 0o600

/**
 * The bucket directory name of a cwd (`cwd-<12 hex>` or `_no-cwd`).
 *
 * @since 0.1.0
 * @category utils
 */
export const bucketOf = (cwd: string | undefined): string =>
  cwd === undefined ? NO_CWD : `cwd-${crypto.createHash("sha256").update(cwd, "utf8").digest("hex").slice(0, 12)}`

interface Entry {
  readonly header: SessionHeader
  readonly path: string
  stored: boolean
  nextSeq: number
  size: number
  /** batches were written since the last fsync */
  dirty: boolean
  /** created while this instance held the id's lock: forgotten with the lock even if never stored */
  readonly underLock: boolean
}

/** v4: a `PlatformError` wraps its `reason`; a system error's kind is the reason's `_tag` */
const isReason = (e: PlatformError.PlatformError, reason: PlatformError.SystemErrorTag): boolean =>
  e.reason._tag === reason

/** `.<encoded id>.jsonl.<24 hex token>.tmp`: a first write's temporary file */
const orphanRe = /^\.(.+)\.jsonl\.[0-9a-f]{24}\.tmp$/

const notFound = (id: string): SessionError.SessionError =>
  SessionError.make("SESSION_NOT_FOUND", `session ${JSON.stringify(id)} is not stored`, { sessionId: id })

const encodeId = (id: string): Result.Result<string, SessionError.SessionError> =>
  Result.mapError(IdEncoding.encode(id), (why) =>
    SessionError.make(
      "INVALID_EVENT",
      why === "empty"
        ? "session id must not be empty"
        : `session id is too long for a file name (encoded > ${IdEncoding.MAX_ENCODED_LENGTH} characters)`,
      { sessionId: id }
    ))

/**
 * The OS descriptor of an open file when the file system is Node's: `NodeFileSystem`'s handles
 * carry it as `fd` at run time, but Effect 4 took it out of the public `File` type, so it is read
 * with a guard; `undefined` for any other `File` (then `append.now` answers `"later"`).
 */
const descriptorOf = (handle: FileSystem.File): number | undefined =>
  "fd" in handle && typeof handle.fd === "number" ? handle.fd : undefined

const utf8 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")

// ---------------------------------------------------------------------------------------------
// parsing a whole log

const tryParse = (line: string): unknown => {
  try {
    return JSON.parse(line)
  } catch {
    return Records.UNPARSABLE
  }
}

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
 * Builds the JSONL backend (requires a `FileSystem`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Service & Tracked.WithTracked, Config.ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = path.resolve(options.root ?? (yield* DataDir.sessionsRoot))
    const entries = new Map<string, Entry>()
    const serialized = PerId.makeSerializer()
    /** ids whose writer lock this instance holds */
    const held = new Set<string>()
    /** every descriptor this instance opens (append handles of held logs cached, LRU) */
    const processLimit = yield* FilePool.processLimit
    const pool = FilePool.make(options.maxOpenFiles ?? defaultMaxOpenFiles(processLimit))
    const readOptions = options.maxRecordBytes === undefined ? {} : { maxLineBytes: options.maxRecordBytes }
    const limits: SaveFailure.FileLimits = {
      processLimit,
      poolMax: pool.max,
      option: "the JSONL backend's maxOpenFiles"
    }

    const saveFailed = (file: string, op: string, sessionId?: string) => (error: unknown): SessionError.SessionError =>
      SaveFailure.make({ file, op, error, limits, ...(sessionId === undefined ? {} : { sessionId }) })

    /** a failed file operation: `IO`, or `PERSISTENCE_FAILED` naming the limit when out of descriptors */
    const ioError = (file: string, op: string) => (e: PlatformError.PlatformError): SessionError.SessionError =>
      SaveFailure.isTooManyFiles(e)
        ? saveFailed(file, op)(e)
        : SessionError.make("IO", `${op} ${file}: ${e.message}`, { file, cause: e })

    const fileIn = (bucket: string, encoded: string) => path.join(root, bucket, `${encoded}.jsonl`)

    const locate = (header: SessionHeader): Location | undefined =>
      Result.match(IdEncoding.encode(header.id), {
        onFailure: () => undefined,
        onSuccess: (encoded) => ({ kind: KIND, path: fileIn(bucketOf(header.cwd), encoded) })
      })

    const buckets: Effect.Effect<ReadonlyArray<string>, SessionError.SessionError> = pool.withSlot(fs.readDirectory(root)).pipe(
      Effect.map((names) => names.filter((n) => bucketRe.test(n)).sort()),
      Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed([])),
      Effect.mapError(ioError(root, "read directory"))
    )

    const fileExists = (file: string) =>
      fs.exists(file).pipe(Effect.mapError(ioError(file, "stat")))

    /** the stored log of an id in any bucket, or undefined */
    const findStored = (id: string): Effect.Effect<string | undefined, SessionError.SessionError> =>
      Effect.gen(function*() {
        const encoded = yield* Effect.fromResult(encodeId(id))
        const entry = entries.get(id)
        if (entry !== undefined && entry.stored && (yield* fileExists(entry.path))) return entry.path
        for (const bucket of yield* buckets) {
          const file = fileIn(bucket, encoded)
          if (yield* fileExists(file)) return file
        }
        return undefined
      })

    const locksDir = path.join(root, "locks")
    const lockStore = (encoded: string): Lock.Store => {
      const store = Lock.fileStore(fs, path.join(locksDir, `${encoded}.lock`))
      const pooled = <A>(op: string, effect: Effect.Effect<A, SessionError.SessionError>) =>
        pool.withSlot(effect).pipe(
          Effect.mapError((e) => (SaveFailure.isTooManyFiles(e) ? saveFailed(store.describe, op)(e) : e))
        )
      return {
        describe: store.describe,
        tryInsert: (owner) => pooled("write lock", store.tryInsert(owner)),
        read: Effect.suspend(() => pooled("read lock", store.read)),
        removeIf: (token) => pooled("remove lock", store.removeIf(token))
      }
    }

    const fsyncDirectory = (dir: string) =>
      pool.withSlot(Effect.scoped(Effect.flatMap(fs.open(dir, { flag: "r" }), (d) => d.sync))).pipe(
        // contained: some platforms and file systems cannot fsync a directory ("if possible", D-9)
        Effect.catch((e) => Effect.logDebug(`could not fsync directory ${dir}`, e))
      )

    const removeIfPresent = (file: string) =>
      fs.remove(file).pipe(
        Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.void),
        Effect.mapError(ioError(file, "remove"))
      )

    // -- orphaned first writes --------------------------------------------------------------------

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

    // -- load -----------------------------------------------------------------------------------

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

    // -- append ---------------------------------------------------------------------------------

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

    // -- coalesced write-through ---------------------------------------------------------------------

    interface Pending {
      readonly events: ReadonlyArray<SessionEvent>
      readonly sync: boolean
      readonly done: Deferred.Deferred<void, SessionError.SessionError>
    }
    /** per held id: batches waiting while a write of the id is in flight (the key exists while one is) */
    const queues = new Map<string, Array<Pending>>()

    /**
     * Writes the queued batches of a held, stored session as one group: each batch is validated in
     * order (one that fails gets its own error and is left out, as if appended alone), the valid
     * ones go out in one `write`, fsynced when any of them asked for it, and all of them share the
     * outcome. Runs under the id's serializer.
     */
    const writeGroup = (id: string, group: ReadonlyArray<Pending>) =>
      Effect.gen(function*() {
        const entry = entries.get(id)
        const accepted: Array<Pending> = []
        const events: Array<SessionEvent> = []
        let sync = false
        for (const p of group) {
          const valid = entry === undefined
            ? Result.fail(notFound(id))
            : Records.validateBatch(id, p.events, entry.nextSeq + events.length)
          if (Result.isFailure(valid)) {
            yield* Deferred.fail(p.done, valid.failure)
            continue
          }
          accepted.push(p)
          for (const e of valid.success) events.push(e)
          sync ||= p.sync
        }
        if (entry === undefined || accepted.length === 0) return
        const exit = yield* Effect.exit(appendWrite(entry, events, sync))
        for (const p of accepted) yield* Deferred.done(p.done, exit)
      })

    /**
     * Appends of a held, stored session: a batch that arrives while a write of the session is in
     * flight waits in the queue and goes out with the others in the next write (one `write`, at
     * most one fsync), in arrival order. The first append of a burst writes until the queue is
     * empty; the write is uninterruptible, so queued callers always get their outcome.
     */
    const appendCoalesced = (id: string, events: ReadonlyArray<SessionEvent>, sync: boolean) =>
      Effect.flatMap(Deferred.make<void, SessionError.SessionError>(), (done) =>
        Effect.suspend(() => {
          const queue = queues.get(id)
          if (queue !== undefined) {
            queue.push({ events, sync, done })
            return Deferred.await(done)
          }
          const mine: Array<Pending> = [{ events, sync, done }]
          queues.set(id, [])
          const drain = (group: Array<Pending>): Effect.Effect<void> =>
            Effect.flatMap(serialized(id)(writeGroup(id, group)), () => {
              const next = queues.get(id)!
              if (next.length === 0) {
                queues.delete(id)
                return Effect.void
              }
              queues.set(id, [])
              return drain(next)
            })
          // a defect in a write must not strand the callers queued behind it
          const strand = (cause: Cause.Cause<never>) =>
            Effect.suspend(() => {
              const left = queues.get(id) ?? []
              queues.delete(id)
              return Effect.forEach([...mine, ...left], (p) => Deferred.failCause(p.done, cause), { discard: true })
            })
          return Effect.andThen(
            Effect.uninterruptible(Effect.onError(drain(mine), strand)),
            Deferred.await(done)
          )
        }))

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

    // -- list -----------------------------------------------------------------------------------

    const summarize = (file: string, expectedId: string) =>
      pool.withSlot(Effect.scoped(
        Effect.gen(function*() {
          const handle = yield* fs.open(file, { flag: "r" })
          const size = Number((yield* handle.stat).size)
          if (size === 0) return undefined
          const readAt = (offset: number, length: number) =>
            Effect.gen(function*() {
              const buffer = new Uint8Array(length)
              yield* handle.seek(BigInt(offset), "start")
              let filled = 0
              while (filled < length) {
                const n = Number(yield* handle.read(buffer.subarray(filled)))
                if (n === 0) break
                filled += n
              }
              return buffer.subarray(0, filled)
            })
          const head = yield* readAt(0, Math.min(size, WINDOW))
          const headerEnd = head.indexOf(NL)
          if (headerEnd < 0) return undefined
          const decoded = Records.decodeHeader(tryParse(utf8(head.subarray(0, headerEnd))))
          if ("problem" in decoded || decoded.header.id !== expectedId) return undefined
          const header = decoded.header

          const bodyStart = headerEnd + 1
          // the first event's turn number: where this log's turn numbering starts (Summary.make)
          const firstEnd = head.indexOf(NL, bodyStart)
          const firstEvent = firstEnd < 0 ? undefined : tryParse(utf8(head.subarray(bodyStart, firstEnd)))
          const firstTurn = typeof firstEvent === "object" && firstEvent !== null && !Array.isArray(firstEvent)
            ? Summary.turnOf(firstEvent as { type: string; data: unknown })
            : undefined

          // first prompt: complete lines forward from the header, up to PROMPT_SCAN_LIMIT bytes
          let firstPrompt: string | undefined
          let carry: Uint8Array = new Uint8Array(0)
          for (let pos = bodyStart; firstPrompt === undefined && pos < size && pos < PROMPT_SCAN_LIMIT;) {
            const chunk = pos < head.byteLength ? head.subarray(pos) : yield* readAt(pos, Math.min(WINDOW, size - pos))
            pos += chunk.byteLength
            const buffer = carry.byteLength === 0 ? chunk : Buffer.concat([carry, chunk])
            const k = buffer.lastIndexOf(NL)
            carry = buffer.subarray(k + 1)
            if (k < 0) continue
            for (const line of utf8(buffer.subarray(0, k)).split("\n")) {
              if (!line.includes("\"user/message\"")) continue
              const value = tryParse(line)
              if (typeof value === "object" && value !== null && !Array.isArray(value)) {
                firstPrompt = Summary.promptOf(value as SessionEvent)
                if (firstPrompt !== undefined) break
              }
            }
          }

          // tail: the end of the last complete line (a torn last line is ignored) ...
          let end = bodyStart
          for (let pos = size; pos > bodyStart;) {
            const start = Math.max(bodyStart, pos - WINDOW)
            const k = (yield* readAt(start, pos - start)).lastIndexOf(NL)
            if (k >= 0) {
              end = start + k + 1
              break
            }
            pos = start
          }
          // ... then complete lines backwards until the last event's time and turn number are known
          let lastTime: number | undefined
          let lastTurn: number | undefined
          carry = new Uint8Array(0)
          for (let pos = end; pos > bodyStart && (lastTime === undefined || lastTurn === undefined);) {
            const start = Math.max(bodyStart, pos - WINDOW)
            const chunk = yield* readAt(start, pos - start)
            const buffer = carry.byteLength === 0 ? chunk : Buffer.concat([chunk, carry])
            // the bytes up to the first newline belong to a line that starts in an earlier window
            const k = start > bodyStart ? buffer.indexOf(NL) : -1
            carry = buffer.subarray(0, k + 1)
            const lines = utf8(buffer.subarray(k + 1)).split("\n")
            for (let i = lines.length - 2; i >= 0 && (lastTime === undefined || lastTurn === undefined); i--) {
              const value = tryParse(lines[i]!)
              if (typeof value !== "object" || value === null || Array.isArray(value)) continue
              const event = value as { type: unknown; time: unknown; data: unknown }
              if (typeof event.type !== "string") continue
              if (lastTime === undefined && typeof event.time === "number") lastTime = event.time
              if (lastTurn === undefined) lastTurn = Summary.turnOf({ type: event.type, data: event.data })
            }
            pos = start
          }
          return Summary.make({ header, lastTime, lastTurn, firstTurn, firstPrompt, location: { kind: KIND, path: file } })
        })
      )).pipe(
        Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed(undefined)),
        Effect.mapError(ioError(file, "read"))
      )

    const list = (): Effect.Effect<ReadonlyArray<SessionSummary>, SessionError.SessionError> =>
      Effect.gen(function*() {
        const files: Array<{ file: string; id: string }> = []
        for (const bucket of yield* buckets) {
          const dir = path.join(root, bucket)
          const read = pool.withSlot(fs.readDirectory(dir)).pipe(
            Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed([])),
            Effect.mapError(ioError(dir, "read directory"))
          )
          let names = yield* read
          if (names.some((name) => orphanRe.test(name))) {
            yield* recoverOrphans(dir, names)
            names = yield* read
          }
          for (const name of names) {
            if (!name.endsWith(".jsonl")) continue
            const id = IdEncoding.decode(name.slice(0, -".jsonl".length))
            if (id !== undefined) files.push({ file: path.join(dir, name), id })
          }
        }
        const summaries = yield* Effect.forEach(files, ({ file, id }) => summarize(file, id), { concurrency: 4 })
        return summaries.filter((s): s is SessionSummary => s !== undefined).sort(Summary.order)
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

    /**
     * `append.now` (issue 20): a batch of a held, stored log whose descriptor is open and idle,
     * with no operation of the session in flight and nothing to fsync, written by one synchronous
     * `write`. A failed write is taken back (truncated) and answered `"later"`: the effectful path
     * writes it again and reports what fails, in one place (a failed truncation is reported here).
     */
    const appendNow = (id: SessionId, events: ReadonlyArray<SessionEvent>, options?: AppendOptions): AppendNow => {
      if (events.length === 0) return "written"
      if (options?.sync !== false || !held.has(id) || queues.has(id) || serialized.busy(id)) return "later"
      const entry = entries.get(id)
      if (entry === undefined || !entry.stored) return "later"
      const handle = pool.peek(id)
      const fd = handle === undefined ? undefined : descriptorOf(handle)
      if (fd === undefined) return "later"
      const valid = Records.validateBatch(id, events, entry.nextSeq)
      if (Result.isFailure(valid)) return valid.failure
      let text = ""
      for (const event of valid.success) text += `${Records.encodeEvent(event)}\n`
      const bytes = Buffer.from(text, "utf8")
      const before = entry.size
      try {
        let written = 0
        while (written < bytes.byteLength) written += NodeFs.writeSync(fd, bytes, written)
      } catch {
        try {
          // drop whatever part of the batch reached the file (D-9), then let the effectful path
          // write it again and report what fails
          NodeFs.ftruncateSync(fd, before)
        } catch (truncate) {
          // the file may keep a partial batch: say so now rather than write after it
          return saveFailed(entry.path, "truncate a failed append to", id)(truncate)
        }
        return "later"
      }
      entry.size = before + bytes.byteLength
      entry.nextSeq += valid.success.length
      entry.dirty = true
      return "written"
    }

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
