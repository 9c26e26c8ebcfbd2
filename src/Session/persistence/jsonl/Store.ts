/**
 * The state one JSONL backend instance shares between its parts (`Jsonl.make`): the root, the
 * sessions it tracks, the per-id serializer, the ids whose writer lock it holds, its `FilePool`,
 * and the file helpers every part uses (paths, bucket listing, lookup of a stored log, locks,
 * directory fsync, error mapping).
 *
 * @since 0.1.0
 * @internal
 */
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import type * as Config from "effect/Config"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as crypto from "node:crypto"
import * as path from "node:path"
import * as SessionError from "../../SessionError.js"
import type { SessionEvent, SessionHeader } from "../../SessionEvent.js"
import * as DataDir from "../DataDir.js"
import * as FilePool from "../FilePool.js"
import * as IdEncoding from "../IdEncoding.js"
import * as Lock from "../Lock.js"
import * as PerId from "../PerId.js"
import * as SaveFailure from "../SaveFailure.js"

/**
 * The `Location.kind` of the JSONL backend.
 *
 * @since 0.1.0
 * @category constants
 */
export const KIND = "jsonl"

const NO_CWD = "_no-cwd"
const bucketRe = /^(cwd-[0-9a-f]{12}|_no-cwd)$/
/** sessions hold conversations: private to the user */
export const DIR_MODE = 0o700
export const FILE_MODE = 0o600

/**
 * The bucket directory name of a cwd (`cwd-<12 hex>` or `_no-cwd`).
 *
 * @since 0.1.0
 * @category utils
 */
export const bucketOf = (cwd: string | undefined): string =>
  cwd === undefined ? NO_CWD : `cwd-${crypto.createHash("sha256").update(cwd, "utf8").digest("hex").slice(0, 12)}`

/** What the instance knows of one session. */
export interface Entry {
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

/** A batch of a held, stored session waiting while a write of it is in flight (`Coalesce`). */
export interface Pending {
  readonly events: ReadonlyArray<SessionEvent>
  readonly sync: boolean
  readonly done: Deferred.Deferred<void, SessionError.SessionError>
}

/** v4: a `PlatformError` wraps its `reason`; a system error's kind is the reason's `_tag` */
export const isReason = (e: PlatformError.PlatformError, reason: PlatformError.SystemErrorTag): boolean =>
  e.reason._tag === reason

/** `.<encoded id>.jsonl.<24 hex token>.tmp`: a first write's temporary file */
export const orphanRe = /^\.(.+)\.jsonl\.[0-9a-f]{24}\.tmp$/

export const notFound = (id: string): SessionError.SessionError =>
  SessionError.make("SESSION_NOT_FOUND", `session ${JSON.stringify(id)} is not stored`, { sessionId: id })

export const encodeId = (id: string): Result.Result<string, SessionError.SessionError> =>
  Result.mapError(IdEncoding.encode(id), (why) =>
    SessionError.make(
      "INVALID_EVENT",
      why === "empty"
        ? "session id must not be empty"
        : `session id is too long for a file name (encoded > ${IdEncoding.MAX_ENCODED_LENGTH} characters)`,
      { sessionId: id }
    ))

/** The shared state and file helpers of one instance. */
export interface Store {
  readonly fs: FileSystem.FileSystem
  readonly root: string
  readonly entries: Map<string, Entry>
  readonly serialized: PerId.Serializer
  /** ids whose writer lock this instance holds */
  readonly held: Set<string>
  /** every descriptor this instance opens (append handles of held logs cached, LRU) */
  readonly pool: FilePool.FilePool
  /** per held id: batches waiting while a write of the id is in flight (the key exists while one is) */
  readonly queues: Map<string, Array<Pending>>
  readonly readOptions: { readonly maxLineBytes?: number }
  readonly saveFailed: (file: string, op: string, sessionId?: string) => (error: unknown) => SessionError.SessionError
  readonly ioError: (file: string, op: string) => (e: PlatformError.PlatformError) => SessionError.SessionError
  readonly fileIn: (bucket: string, encoded: string) => string
  readonly buckets: Effect.Effect<ReadonlyArray<string>, SessionError.SessionError>
  readonly fileExists: (file: string) => Effect.Effect<boolean, SessionError.SessionError>
  readonly findStored: (id: string) => Effect.Effect<string | undefined, SessionError.SessionError>
  readonly locksDir: string
  readonly lockStore: (encoded: string) => Lock.Store
  readonly fsyncDirectory: (dir: string) => Effect.Effect<void>
  readonly removeIfPresent: (file: string) => Effect.Effect<void, SessionError.SessionError>
}

/** Builds the shared state of an instance (root: the option, else `DataDir.sessionsRoot`). */
export const make = (
  options: { readonly root?: string | undefined; readonly maxOpenFiles: (processLimit: number | undefined) => number; readonly maxRecordBytes?: number | undefined }
): Effect.Effect<Store, Config.ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = path.resolve(options.root ?? (yield* DataDir.sessionsRoot))
    const processLimit = yield* FilePool.processLimit
    const pool = FilePool.make(options.maxOpenFiles(processLimit))
    const readOptions = options.maxRecordBytes === undefined ? {} : { maxLineBytes: options.maxRecordBytes }
    const entries = new Map<string, Entry>()
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

    return {
      fs,
      root,
      entries,
      serialized: PerId.makeSerializer(),
      held: new Set<string>(),
      pool,
      queues: new Map<string, Array<Pending>>(),
      readOptions,
      saveFailed,
      ioError,
      fileIn,
      buckets,
      fileExists,
      findStored,
      locksDir,
      lockStore,
      fsyncDirectory,
      removeIfPresent
    }
  })
