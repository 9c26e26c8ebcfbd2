/**
 * The JSONL persistence backend, Effect 4 port of `src/Session/persistence/Jsonl.ts` (spike, issue 27):
 * only what the streaming hot path uses (create, lock, the first write, coalesced appends, `append.now`,
 * fsync). Cut for the spike: load/repair, snapshot, list, orphan recovery, remove and the lock FILE
 * (`lock` only marks the id as held, which is what the write path looks at). The per-batch code
 * (`appendNow`, `appendWrite`, `appendCoalesced`) is the original's.
 */
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as path from "node:path"
import type { SessionId } from "../../Llm/Message.js"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import type { AppendNow, AppendOptions, Service } from "../SessionPersistence.js"
import { SessionPersistence } from "../SessionPersistence.js"
import * as IdEncoding from "./IdEncoding.js"
import * as FilePool from "./FilePool.js"
import * as PerId from "./PerId.js"
import * as Records from "./Records.js"
import * as SaveFailure from "./SaveFailure.js"

export interface Options {
  /** the sessions root; default `DataDir.sessionsRoot` */
  readonly root: string
  /**
   * at most this many files open at once (logs kept open for appending, reads, lock and temporary
   * files; `FilePool`); default {@link defaultMaxOpenFiles} of the process's limit
   */
  readonly maxOpenFiles?: number
  /**
   * Write a batch that needs no fsync with one synchronous `write(2)` on the log's open descriptor,
   * in the appending fiber's step (issue 20), instead of a round trip through the thread pool;
   * fsyncs stay asynchronous. Needs the file system to be Node's (its handles' `fd` must be real):
   * {@link layer} turns it on, {@link make} (any `FileSystem`) leaves it off unless asked.
   */
  readonly writeNow?: boolean
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
 * @since 0.2.0
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

// v4: PlatformError is a wrapper with a `reason` (the error-code mappings change shape)
const isReason = (e: PlatformError.PlatformError, reason: string): boolean => e.reason._tag === reason

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

export const make = (
  options: Options
): Effect.Effect<Service, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = path.resolve(options.root)
    const entries = new Map<string, Entry>()
    const serialized = PerId.makeSerializer()
    /** ids whose writer lock this instance holds */
    const held = new Set<string>()
    /** every descriptor this instance opens (append handles of held logs cached, LRU) */
    const processLimit = yield* FilePool.processLimit
    const pool = FilePool.make(options.maxOpenFiles ?? defaultMaxOpenFiles(processLimit))
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

    const locate = (header: SessionHeader): { readonly kind: string; readonly path: string } | undefined =>
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
        const tmp = path.join(dir, `.${path.basename(entry.path)}.${crypto.randomBytes(12).toString("hex")}.tmp`)
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
        const entry = entries.get(id)
        // v4 spike: load/adopt of a log known only from storage is cut
        if (entry === undefined) return yield* Effect.fail(notFound(id))
        if (entry.stored && !held.has(id)) {
          // (while this instance holds the writer lock nobody else writes the log: DEC-4)
          const info = yield* fs.stat(entry.path).pipe(
            Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.fail(notFound(id))),
            Effect.mapError((e) => (e instanceof SessionError.SessionError ? e : ioError(entry!.path, "stat")(e)))
          )
          if (Number(info.size) !== entry.size) return yield* Effect.fail(notFound(id))
        }
        const events = yield* Effect.fromResult(Records.validateBatch(id, input, entry.nextSeq))
        if (entry.stored) yield* appendWrite(entry, events, sync)
        else yield* firstWrite(entry, events)
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
      // v4 spike: no lock file (cut); held while the scope lasts, the cached handle closed on release
      Effect.asVoid(Effect.acquireRelease(
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
      ))

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
      if (handle === undefined) return "later"
      const valid = Records.validateBatch(id, events, entry.nextSeq)
      if (Result.isFailure(valid)) return valid.failure
      let text = ""
      for (const event of valid.success) text += `${Records.encodeEvent(event)}\n`
      const bytes = Buffer.from(text, "utf8")
      // v4: `File.fd` is not in the public type any more (it is there at run time)
      const fd = (handle as unknown as { readonly fd: number }).fd
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

    const unsupported = (what: string) => Effect.die(new Error(`Jsonl (v4 spike): ${what} is not ported`))
    const service: Service = {
      locate: () => undefined,
      remove: () => unsupported("remove"),
      create,
      append: options.writeNow === true ? Object.assign(appendEffect, { now: appendNow }) : appendEffect,
      sync: (id) => serialized(id)(syncUnserialized(id)),
      load: () => unsupported("load"),
      snapshot: () => unsupported("snapshot"),
      list: () => unsupported("list"),
      exists: (id) => Effect.map(findStored(id), (file) => file !== undefined),
      lock
    }
    return service
  })

/** The JSONL backend as a Layer (Node file system included). */
export const layer = (options: Options): Layer.Layer<SessionPersistence> =>
  Layer.effect(SessionPersistence, make({ ...options, writeNow: options.writeNow ?? true })).pipe(
    Layer.provide(NodeFileSystem.layer)
  )
