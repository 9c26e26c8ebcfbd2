/**
 * Save failures (DEC-11): a failed write or fsync of a session log becomes one
 * `PERSISTENCE_FAILED` {@link SessionError.SessionError} naming the file and the operating system's
 * error (`ENOSPC`, `EACCES`, `EROFS`, `EIO`, …), in words a user understands. Running out of file
 * descriptors (`EMFILE`, `ENFILE`) also says which limit was reached and what to raise.
 *
 * @since 0.1.0
 */
import * as PlatformError from "effect/PlatformError"
import * as SessionError from "../SessionError.js"

const words: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EIO: "input/output error",
  EFBIG: "file too large",
  ENOENT: "no such file or directory",
  EMFILE: "too many open files in this process",
  ENFILE: "too many open files in the system"
}

/**
 * What bounds the open files of a backend, for the advice of an `EMFILE`/`ENFILE` failure.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileLimits {
  /** the process's soft limit of open files (`ulimit -n`), when known */
  readonly processLimit: number | undefined
  /** the backend's own bound and the option that sets it */
  readonly poolMax: number
  readonly option: string
}

/**
 * `true` for a failure that means "out of file descriptors" (`EMFILE`, `ENFILE`).
 *
 * @since 0.1.0
 * @category utils
 */
export const isTooManyFiles = (error: unknown): boolean => {
  const code = codeOf(error)
  return code === "EMFILE" || code === "ENFILE"
}

const adviceOf = (osCode: string, limits: FileLimits | undefined): string => {
  if (osCode !== "EMFILE" && osCode !== "ENFILE") return ""
  const pool = limits === undefined ? "" : ` or lower ${limits.option} (now ${limits.poolMax})`
  if (osCode === "ENFILE") return `; raise the system's limit of open files (fs.file-max)${pool}`
  const limit = limits?.processLimit === undefined ? "" : ` is ${limits.processLimit} and`
  return `; the limit of open files per process (ulimit -n)${limit} was reached: raise it${pool}`
}

/** SQLite result codes → the operating system error they stand for */
const sqliteCodes: ReadonlyArray<readonly [RegExp, string]> = [
  [/^SQLITE_FULL/, "ENOSPC"],
  [/^SQLITE_READONLY/, "EROFS"],
  [/^SQLITE_IOERR/, "EIO"],
  [/^SQLITE_CANTOPEN/, "EACCES"],
  [/^SQLITE_PERM/, "EACCES"]
]

/**
 * The error code carried by `error` or anything in its `cause` chain (`ENOSPC`, `SQLITE_FULL`, …).
 *
 * @since 0.1.0
 * @category utils
 */
export const codeOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string" && /^(E[A-Z0-9]+|SQLITE_[A-Z0-9_]+)$/.test(code)) return code
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

/**
 * The operating system error code of a failed save: the errno name, or the one a SQLite result
 * code stands for (`SQLITE_FULL` → `ENOSPC`), else `UNKNOWN`.
 *
 * @since 0.1.0
 * @category utils
 */
export const osCodeOf = (error: unknown): string => {
  const code = codeOf(error)
  if (code === undefined) return "UNKNOWN"
  for (const [re, os] of sqliteCodes) if (re.test(code)) return os
  return code
}

/**
 * `true` for a failure that means the data did not (or may not) reach storage: the codes a save
 * failure is about (anything else — a bug, a missing session — keeps its own error).
 *
 * @since 0.1.0
 * @category utils
 */
export const isSaveFailure = (error: unknown): boolean => {
  const code = codeOf(error)
  if (code === undefined) return false
  return code.startsWith("SQLITE_") ? sqliteCodes.some(([re]) => re.test(code)) : code !== "EEXIST"
}

const describe = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const e = error as { readonly description?: unknown; readonly message?: unknown }
  if (typeof e.description === "string" && e.description !== "") return e.description
  // Effect 4: a `PlatformError` wraps the failure in its `reason` and names only the call in its
  // message; the description, else the OS error (its cause), says what happened
  if (PlatformError.isPlatformError(error)) {
    const description = error.reason.description
    if (description !== undefined && description !== "") return description
    if (error.cause instanceof Error && error.cause.message !== "") return error.cause.message
  }
  return typeof e.message === "string" && e.message !== "" ? e.message : "I/O failure"
}

/**
 * Builds the `PERSISTENCE_FAILED` error of a failed `op` ("write", "fsync", …) on `file`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly file: string
  readonly op: string
  readonly error: unknown
  readonly sessionId?: string
  /** what bounds open files (named in the advice of an `EMFILE`/`ENFILE` failure) */
  readonly limits?: FileLimits
}): SessionError.SessionError => {
  const osCode = osCodeOf(options.error)
  const raw = codeOf(options.error)
  const what = words[osCode] ?? describe(options.error)
  const detail = raw !== undefined && raw !== osCode ? `${osCode}, ${raw}` : osCode
  return SessionError.make(
    "PERSISTENCE_FAILED",
    `could not save the session: ${options.op} ${options.file} failed: ${what} (${detail})${adviceOf(osCode, options.limits)}`,
    {
      file: options.file,
      osCode,
      cause: options.error,
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId })
    }
  )
}
