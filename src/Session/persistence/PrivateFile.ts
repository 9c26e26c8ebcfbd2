/**
 * Small files the harness keeps for the user alone (approvals, trusted workspaces): written `0600`
 * in a `0700` directory, and read back only when they are what the harness wrote, i.e. a regular
 * file (not a link) owned by the user and writable by nobody else. Anything else is reported as
 * {@link Untrusted} and treated by callers as empty, so another account (or a process that could
 * only create a group-writable file) cannot plant an approval.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * The file exists but is not private to the user (wrong owner, group/other-writable, a link or
 * not a regular file); `message` says which, in the user's words.
 *
 * @since 0.1.0
 * @category errors
 */
export class Untrusted extends Schema.TaggedError<Untrusted>()("Untrusted", {
  file: Schema.String,
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "UNTRUSTED_FILE" as const
}

/**
 * The file could not be read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class PrivateFileError extends Schema.TaggedError<PrivateFileError>()("PrivateFileError", {
  file: Schema.String,
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "PRIVATE_FILE_FAILED" as const
}

/**
 * The directory mode of private directories.
 *
 * @since 0.1.0
 * @category constants
 */
export const DIR_MODE = 0o700

/**
 * The file mode of private files.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILE_MODE = 0o600

const uid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined)

const errno = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

const reason = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * Why a file with this status is not private, or `undefined` when it is (pure).
 *
 * @since 0.1.0
 * @category utils
 */
export const problem = (
  stat: { readonly uid: number; readonly mode: number; readonly isFile: boolean },
  user: number | undefined
): string | undefined => {
  if (!stat.isFile) return "is not a regular file"
  if (user !== undefined && stat.uid !== user) return `is owned by another user (uid ${stat.uid})`
  if ((stat.mode & 0o022) !== 0) return `is writable by other users (mode ${(stat.mode & 0o777).toString(8)})`
  return undefined
}

/**
 * Reads a private file: `None` when it does not exist; fails with {@link Untrusted} when it is not
 * private. Opened without following a final link, and checked on the open descriptor (no race
 * between the check and the read).
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (file: string): Effect.Effect<Option.Option<string>, Untrusted | PrivateFileError> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => NodeFs.promises.open(file, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NOFOLLOW),
      catch: (e) => e
    }).pipe(
      Effect.map(Option.some),
      Effect.catch((e): Effect.Effect<Option.Option<NodeFs.promises.FileHandle>, Untrusted | PrivateFileError> => {
        const code = errno(e)
        if (code === "ENOENT") return Effect.succeed(Option.none())
        if (code === "ELOOP") return Effect.fail(new Untrusted({ file, message: `${file} is a symbolic link` }))
        return Effect.fail(new PrivateFileError({ file, message: `cannot read ${file} (${reason(e)})` }))
      })
    ),
    (handle) =>
      Option.match(handle, {
        onNone: () => Effect.succeed(Option.none<string>()),
        onSome: (h) =>
          Effect.gen(function*() {
            const stat = yield* Effect.tryPromise({
              try: () => h.stat(),
              catch: (e) => new PrivateFileError({ file, message: `cannot read ${file} (${reason(e)})` })
            })
            const wrong = problem({ uid: stat.uid, mode: stat.mode, isFile: stat.isFile() }, uid())
            if (wrong !== undefined) return yield* new Untrusted({ file, message: `${file} ${wrong}` })
            const text = yield* Effect.tryPromise({
              try: () => h.readFile({ encoding: "utf8" }),
              catch: (e) => new PrivateFileError({ file, message: `cannot read ${file} (${reason(e)})` })
            })
            return Option.some(text)
          })
      }),
    (handle) => Option.match(handle, { onNone: () => Effect.void, onSome: (h) => Effect.promise(() => h.close()) })
  )

/**
 * Creates `dir` (and missing parents) `0700`; an existing directory of the user's is tightened to
 * `0700`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDirectory = (dir: string): Effect.Effect<void, PrivateFileError> =>
  Effect.tryPromise({
    try: async () => {
      await NodeFs.promises.mkdir(dir, { recursive: true, mode: DIR_MODE })
      const stat = await NodeFs.promises.stat(dir)
      const user = uid()
      if ((user === undefined || stat.uid === user) && (stat.mode & 0o077) !== 0) {
        await NodeFs.promises.chmod(dir, DIR_MODE)
      }
    },
    catch: (e) => new PrivateFileError({ file: dir, message: `cannot create ${dir} (${reason(e)})` })
  })

/**
 * Writes a private file atomically: its directory `0700`, a fresh temp file `0600` (exclusive,
 * never through a link), renamed over the name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const write = (file: string, text: string): Effect.Effect<void, PrivateFileError> =>
  Effect.gen(function*() {
    yield* makeDirectory(NodePath.dirname(file))
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`
    yield* Effect.tryPromise({
      try: async () => {
        try {
          await NodeFs.promises.writeFile(tmp, text, { flag: "wx", mode: FILE_MODE })
          await NodeFs.promises.chmod(tmp, FILE_MODE)
          await NodeFs.promises.rename(tmp, file)
        } catch (e) {
          await NodeFs.promises.rm(tmp, { force: true })
          throw e
        }
      },
      catch: (e) => new PrivateFileError({ file, message: `cannot write ${file} (${reason(e)})` })
    })
  })
