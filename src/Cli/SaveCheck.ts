/**
 * Save failures are loud (DEC-11): a `run` or `chat` turn never ends with exit 0 while events of
 * its session are not on disk.
 *
 * After a turn settles the command asks the store how many events are still unsaved; if any, it
 * flushes once more, and a failure becomes ONE stderr line naming the file and the operating
 * system's error (`error: the session could not be saved: <file>: EROFS (read-only file system)`)
 * and exit code 4. The store keeps the unsaved events and retries them at its next flush point
 * (e.g. the release); that retry's log entry is not printed again ({@link Logger.markReported}).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { SessionError } from "../Session/SessionError.js"
import * as SessionStore from "../Session/SessionStore.js"
import { CliError } from "./CliError.js"
import { ExitCode } from "./ExitCode.js"
import * as Logger from "./Logger.js"

const descriptions: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EIO: "input/output error",
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
  EMFILE: "too many open files",
  EFBIG: "file too large"
}

// the first errno-style code (`EROFS`) in an error and its nested causes
const osCodeIn = (value: unknown, depth = 0): string | undefined => {
  if (depth > 5 || typeof value !== "object" || value === null) return undefined
  for (const key of ["osCode", "code"] as const) {
    const v = (value as Record<string, unknown>)[key]
    if (typeof v === "string" && /^E[A-Z0-9]+$/.test(v)) return v
  }
  return osCodeIn((value as Record<string, unknown>)["cause"], depth + 1)
}

/**
 * `true` for a session error that means "the log could not be written".
 *
 * @since 0.1.0
 * @category predicates
 */
export const isSaveFailure = (error: SessionError): boolean =>
  error.code === "PERSISTENCE_FAILED" || error.code === "IO"

/**
 * The one line reporting a save failure.
 *
 * @since 0.1.0
 * @category utils
 */
export const line = (error: SessionError): string => {
  const osCode = osCodeIn(error)
  const os = osCode === undefined ? undefined : `${osCode}${descriptions[osCode] ? ` (${descriptions[osCode]})` : ""}`
  if (error.file !== undefined && os !== undefined) return `error: the session could not be saved: ${error.file}: ${os}`
  const message = error.message.split("\n")[0] ?? ""
  return `error: the session could not be saved: ${error.file === undefined ? "" : `${error.file}: `}${message}`
}

/**
 * The CLI error of a save failure (exit 4); later save-failure log entries are not repeated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failure = (error: SessionError): Effect.Effect<CliError> =>
  Effect.as(Logger.markReported, new CliError({ message: line(error), exitCode: ExitCode.Session }))

/**
 * Fails with the save failure (exit 4) when events of session `id` are still unsaved and one more
 * flush does not save them.
 *
 * @since 0.1.0
 * @category utils
 */
export const ensureSaved = (id: string): Effect.Effect<void, CliError, SessionStore.SessionStore> =>
  Effect.gen(function*() {
    const store = yield* SessionStore.SessionStore
    const loud = (error: SessionError) => Effect.flatMap(failure(error), Effect.fail)
    // a session that is no longer live has been released (and drained) already
    const pending = yield* store.pending(id).pipe(
      Effect.catchIf((e) => e.code === "SESSION_NOT_FOUND", () => Effect.succeed(0)),
      Effect.catch(loud)
    )
    if (pending === 0) return
    yield* store.flush(id).pipe(Effect.catch(loud))
  })
