/**
 * One writer per session (DEC-4, D-11): the lock protocol shared by the durable backends.
 *
 * A lock is a record `{pid, hostname, token, acquiredAt}` kept by a {@link Store} (a lock file for
 * JSONL, a `locks` row for SQLite). Taking it inserts the record only if none exists; releasing it
 * removes the record only if it still carries our token. An existing record is **stale**, and is
 * reclaimed, when
 * - it was written on this host and its pid is dead (`process.kill(pid, 0)` → `ESRCH`), or
 * - it names this process but no live holder in this process has its token (a holder whose release
 *   failed, or a record that survived a restart with a recycled pid equal to ours), or
 * - it is unreadable: the protocol publishes a record only complete, so an empty or garbled record
 *   can only come from a power loss or a foreign tool, never from a live holder.
 *
 * Otherwise the session is held and the caller fails `SESSION_LOCKED` naming the holder. A record
 * from another host is always treated as live (its pid cannot be checked). [DECISION] A recycled
 * pid that belongs to an unrelated live process keeps a crashed holder's lock alive; the error
 * message names the lock so a user can remove it.
 *
 * The live holders of this process are a process-wide set of tokens (one `Set` under a
 * `Symbol.for` key of `globalThis`, shared by every copy of this module), so two backend instances
 * in one process see each other's locks.
 *
 * File store ({@link fileStore}): the record is written to a temporary file and published with a
 * hard link, which fails when the lock exists (no partially written lock is ever visible). A stale
 * lock is reclaimed by renaming it aside first (only one reclaimer wins the rename), checking that
 * the renamed record is the stale one, and putting it back with a link if a racing reclaimer had
 * replaced it in the meantime.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import * as SessionError from "../SessionError.js"

/**
 * A lock record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Owner {
  readonly pid: number
  readonly hostname: string
  readonly token: string
  readonly acquiredAt: number
}

/**
 * What a backend provides to keep lock records. `read` answers `"unreadable"` for a record that is
 * present but not a valid {@link Owner}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Store {
  /** human-readable place of the lock (a path, or a table in a database) */
  readonly describe: string
  /** inserts the record when none exists; `false` when one exists */
  readonly tryInsert: (owner: Owner) => Effect.Effect<boolean, SessionError.SessionError>
  readonly read: Effect.Effect<Owner | "unreadable" | undefined, SessionError.SessionError>
  /** removes the record only while it still carries `token` */
  readonly removeIf: (token: string) => Effect.Effect<void, SessionError.SessionError>
}

const LIVE_TOKENS = Symbol.for("effect-harness/Session/persistence/Lock/liveTokens")
const liveTokens: Set<string> = ((): Set<string> => {
  const existing: unknown = Reflect.get(globalThis, LIVE_TOKENS)
  if (existing instanceof Set) return existing
  const created = new Set<string>()
  Reflect.set(globalThis, LIVE_TOKENS, created)
  return created
})()

/**
 * A fresh random token.
 *
 * @since 0.1.0
 * @category constructors
 */
export const randomToken = (): string => crypto.randomBytes(12).toString("hex")

/**
 * `true` when a process with this pid exists (on this host).
 *
 * @since 0.1.0
 * @category utils
 */
export const isAlive = (pid: number): boolean => {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists but belongs to someone else
    return !(typeof e === "object" && e !== null && "code" in e && e.code === "ESRCH")
  }
}

/**
 * `true` when the record can be reclaimed (see the module doc).
 *
 * @since 0.1.0
 * @category utils
 */
export const isStale = (owner: Owner | "unreadable"): boolean => {
  if (owner === "unreadable") return true
  if (owner.hostname !== os.hostname()) return false
  if (owner.pid === process.pid) return !liveTokens.has(owner.token)
  return !isAlive(owner.pid)
}

/**
 * `true` when a live holder in this process has the token.
 *
 * @since 0.1.0
 * @category utils
 */
export const isHeldHere = (token: string): boolean => liveTokens.has(token)

/**
 * Parses a lock record (`undefined` when it is not one).
 *
 * @since 0.1.0
 * @category utils
 */
export const parseOwner = (value: unknown): Owner | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const o = value as Record<string, unknown>
  return typeof o["pid"] === "number" && Number.isSafeInteger(o["pid"]) && o["pid"] > 0 &&
      typeof o["hostname"] === "string" && typeof o["token"] === "string" && o["token"].length > 0 &&
      typeof o["acquiredAt"] === "number"
    ? { pid: o["pid"], hostname: o["hostname"], token: o["token"], acquiredAt: o["acquiredAt"] }
    : undefined
}

const describeOwner = (owner: Owner): string =>
  owner.pid === process.pid && owner.hostname === os.hostname()
    ? "this process"
    : `pid ${owner.pid} on ${owner.hostname}`

const locked = (sessionId: string, store: Store, owner: Owner): SessionError.SessionError =>
  SessionError.make(
    "SESSION_LOCKED",
    `session ${JSON.stringify(sessionId)} is open for writing by ${describeOwner(owner)} since ${
      new Date(owner.acquiredAt).toISOString()
    } (lock: ${store.describe}; remove it only if no such writer runs)`,
    { sessionId }
  )

const MAX_ATTEMPTS = 8

/**
 * Takes the lock for the lifetime of the scope, reclaiming a stale record; fails
 * `SESSION_LOCKED` when a live holder (in this or another process) has it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const acquire = (store: Store, sessionId: string): Effect.Effect<void, SessionError.SessionError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const owner: Owner = {
        pid: process.pid,
        hostname: os.hostname(),
        token: randomToken(),
        acquiredAt: yield* Clock.currentTimeMillis
      }
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (yield* store.tryInsert(owner)) {
          liveTokens.add(owner.token)
          return owner
        }
        const current = yield* store.read
        if (current === undefined) continue
        if (current !== "unreadable" && !isStale(current)) return yield* Effect.fail(locked(sessionId, store, current))
        yield* store.removeIf(current === "unreadable" ? "" : current.token)
      }
      return yield* Effect.fail(
        SessionError.make("SESSION_LOCKED", `session ${JSON.stringify(sessionId)}: lock ${store.describe} is contended`, {
          sessionId
        })
      )
    }),
    (owner) =>
      store.removeIf(owner.token).pipe(
        Effect.ensuring(Effect.sync(() => liveTokens.delete(owner.token))),
        // contained: a lock we failed to remove names this process with a dead token and is reclaimed later
        Effect.catch((e) => Effect.logWarning(`could not release the lock ${store.describe}`, e))
      )
  ).pipe(Effect.asVoid)

/**
 * Succeeds when nobody but a live holder in this process has the lock (a writer may proceed);
 * fails `SESSION_LOCKED` naming the foreign holder otherwise. Never modifies the record.
 *
 * @since 0.1.0
 * @category utils
 */
export const check = (store: Store, sessionId: string): Effect.Effect<void, SessionError.SessionError> =>
  Effect.flatMap(store.read, (current) =>
    current === undefined || current === "unreadable" || isHeldHere(current.token) || isStale(current)
      ? Effect.void
      : Effect.fail(locked(sessionId, store, current)))

const ioError = (file: string, op: string) => (e: PlatformError.PlatformError): SessionError.SessionError =>
  SessionError.make("IO", `${op} ${file}: ${e.message}`, { file, cause: e })

/** v4: a `PlatformError` wraps its `reason`; a system error's kind is the reason's `_tag` */
const isReason = (e: PlatformError.PlatformError, reason: PlatformError.SystemErrorTag): boolean =>
  e.reason._tag === reason

/**
 * A lock file store at `lockPath` (the directory must exist).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fileStore = (fs: FileSystem.FileSystem, lockPath: string): Store => {
  const readAt = (file: string): Effect.Effect<Owner | "unreadable" | undefined, SessionError.SessionError> =>
    fs.readFileString(file).pipe(
      Effect.map((text): Owner | "unreadable" => {
        try {
          return parseOwner(JSON.parse(text)) ?? "unreadable"
        } catch {
          return "unreadable"
        }
      }),
      Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed(undefined)),
      Effect.mapError(ioError(file, "read lock"))
    )
  const removeQuietly = (file: string) =>
    fs.remove(file).pipe(
      Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.void),
      Effect.mapError(ioError(file, "remove"))
    )
  return {
    describe: lockPath,
    tryInsert: (owner) => {
      const tmp = `${lockPath}.${owner.token}.tmp`
      return fs.writeFileString(tmp, JSON.stringify(owner), { flag: "wx", mode: 0o600 }).pipe(
        Effect.mapError(ioError(tmp, "write")),
        Effect.andThen(
          fs.link(tmp, lockPath).pipe(
            Effect.as(true),
            Effect.catchIf((e) => isReason(e, "AlreadyExists"), () => Effect.succeed(false)),
            Effect.mapError(ioError(lockPath, "link"))
          )
        ),
        Effect.ensuring(
          removeQuietly(tmp).pipe(Effect.catch((e) => Effect.logWarning(`could not remove ${tmp}`, e)))
        )
      )
    },
    // built when run: a store lives as long as the lock it guards (one per live session, issue 20)
    read: Effect.suspend(() => readAt(lockPath)),
    removeIf: (token) =>
      Effect.gen(function*() {
        const tomb = path.join(path.dirname(lockPath), `${path.basename(lockPath)}.${randomToken()}.stale`)
        const moved = yield* fs.rename(lockPath, tomb).pipe(
          Effect.as(true),
          Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed(false)),
          Effect.mapError(ioError(lockPath, "rename"))
        )
        if (!moved) return
        const taken = yield* readAt(tomb)
        const expected = taken === "unreadable" ? token === "" : taken !== undefined && taken.token === token
        if (!expected) {
          // a racing reclaimer published a fresh lock between our read and our rename: put it back
          yield* fs.link(tomb, lockPath).pipe(
            Effect.catchIf((e) => isReason(e, "AlreadyExists"), () => Effect.void),
            Effect.mapError(ioError(lockPath, "link"))
          )
        }
        yield* removeQuietly(tomb)
      })
  }
}
