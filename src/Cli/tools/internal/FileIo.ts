/**
 * Small file helpers shared by the built-in tools: binary sniffing, bounded reads and atomic
 * writes (temp file in the same directory + rename).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as ToolError from "../ToolError.js"

/**
 * Bytes inspected by {@link looksBinary}.
 *
 * @since 0.1.0
 * @category constants
 */
export const SNIFF_BYTES = 8192

/**
 * A buffer looks binary when its first {@link SNIFF_BYTES} bytes contain a NUL byte (the
 * heuristic of git and grep).
 *
 * @since 0.1.0
 * @category predicates
 */
export const looksBinary = (bytes: Uint8Array): boolean => {
  const n = Math.min(bytes.length, SNIFF_BYTES)
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true
  return false
}

/**
 * Stats `absolute`, mapping failures to readable tool errors.
 *
 * @since 0.1.0
 * @category utils
 */
export const stat = (absolute: string, display: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.stat(absolute).pipe(Effect.mapError((e) => ToolError.fromPlatform(e, display))))

/**
 * Stats `absolute`; `None` when it does not exist.
 *
 * @since 0.1.0
 * @category utils
 */
export const statOption = (absolute: string, display: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.stat(absolute).pipe(
      Effect.map(Option.some),
      Effect.catchIf(
        (e) => e._tag === "SystemError" && e.reason === "NotFound",
        () => Effect.succeedNone
      ),
      Effect.mapError((e) => ToolError.fromPlatform(e, display))
    ))

/**
 * Reads at most `maxBytes` bytes of a file; `truncated` when the file is longer.
 *
 * @since 0.1.0
 * @category utils
 */
export const readBounded = (absolute: string, display: string, maxBytes: number) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.scoped(
      Effect.gen(function*() {
        const file = yield* fs.open(absolute, { flag: "r" })
        const chunks: Array<Uint8Array> = []
        let total = 0
        for (;;) {
          const want = Math.min(65536, maxBytes + 1 - total)
          if (want <= 0) break
          const chunk = yield* file.readAlloc(want)
          if (Option.isNone(chunk)) break
          chunks.push(chunk.value)
          total += chunk.value.length
        }
        const truncated = total > maxBytes
        const bytes = new Uint8Array(Math.min(total, maxBytes))
        let offset = 0
        for (const c of chunks) {
          const take = Math.min(c.length, bytes.length - offset)
          bytes.set(c.subarray(0, take), offset)
          offset += take
          if (offset >= bytes.length) break
        }
        return { bytes, truncated }
      })
    ).pipe(Effect.mapError((e) => ToolError.fromPlatform(e, display))))

/**
 * Writes `data` to `absolute` atomically: a temp file next to it, then a rename over the target.
 * Parent directories are created; an existing file's permission bits are kept. The temp file is
 * removed when the write fails or is interrupted.
 *
 * @since 0.1.0
 * @category utils
 */
export const atomicWrite = (absolute: string, display: string, data: Uint8Array, mode: number | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = path.dirname(absolute)
    yield* fs.makeDirectory(dir, { recursive: true })
    const suffix = (yield* Random.nextIntBetween(0, 2 ** 31 - 1)).toString(36)
    const temp = path.join(dir, `.${path.basename(absolute)}.${suffix}.tmp`)
    yield* Effect.acquireUseRelease(
      Effect.succeed(temp),
      (t) =>
        Effect.gen(function*() {
          yield* fs.writeFile(t, data, mode === undefined ? {} : { mode })
          if (mode !== undefined) yield* fs.chmod(t, mode)
          yield* fs.rename(t, absolute)
        }),
      (t, exit) =>
        exit._tag === "Success"
          ? Effect.void
          : fs.remove(t).pipe(
            Effect.catchAll((e) => Effect.logDebug("atomicWrite: temp file cleanup failed", e))
          )
    )
  }).pipe(Effect.mapError((e) => ToolError.fromPlatform(e, display)))
