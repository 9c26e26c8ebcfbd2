/**
 * A bounded pool of open files (issue 20): at most `max` descriptors are open through the pool at
 * any time, whatever the number of sessions.
 *
 * - `withFile(key, open, use)` runs `use` with the cached handle of `key` (a session's log kept open
 *   for appending), opening it when absent. A handle not in use is idle; when a new one would
 *   exceed the bound, the least recently used idle handle is closed first (LRU). A handle whose use
 *   failed is closed, not kept.
 * - `withSlot(effect)` runs a short-lived file operation (a read, a temporary file, a lock file)
 *   inside the same bound: it counts as one open descriptor while it runs.
 * - A permit per running operation caps `active` at `max`, so `idle + active <= max` holds: when
 *   the bound is reached there is always an idle handle to close, and an operation beyond `max`
 *   waits for a permit instead of failing with `EMFILE`.
 * - `close(key)` closes the key's idle handle (a session released); nothing else stays behind.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Semaphore from "effect/Semaphore"
import * as Scope from "effect/Scope"

/**
 * A bounded pool of open files.
 *
 * @since 0.1.0
 * @category models
 */
export interface FilePool {
  /** the bound */
  readonly max: number
  /** runs `use` with the key's handle (cached between uses; opened with `open` when absent) */
  readonly withFile: <A, E>(
    key: string,
    open: Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope>,
    use: (file: FileSystem.File) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | PlatformError.PlatformError>
  /** runs a short-lived file operation within the bound */
  readonly withSlot: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * The key's idle handle for a synchronous use that ends before the caller yields (it stays
   * idle; it becomes the most recently used), else `undefined`.
   */
  readonly peek: (key: string) => FileSystem.File | undefined
  /** closes the key's idle handle, if any */
  readonly close: (key: string) => Effect.Effect<void>
  /** descriptors open through the pool now (idle handles + running operations) */
  readonly open: () => number
  /** keys with an idle handle */
  readonly idle: () => number
}

interface Handle {
  readonly file: FileSystem.File
  readonly scope: Scope.Closeable
}

/**
 * A pool of at most `max` (>= 1) open files.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (max: number): FilePool => {
  const bound = Math.max(1, Math.floor(max))
  const permits = Semaphore.makeUnsafe(bound)
  /** idle handles, least recently used first (Map iteration order) */
  const idle = new Map<string, Handle>()
  let active = 0

  /**
   * Closes a handle inline, uninterruptibly. (Effect 3 closed it in a child fiber: a finalizer left
   * the opener's FiberRef stacks in the fiber that ran it, issue 20 / decision 0020; Effect 4 has no
   * FiberRef stacks, decision 0023.)
   */
  const closeHandle = (h: Handle): Effect.Effect<void> => Effect.uninterruptible(Scope.close(h.scope, Exit.void))

  /** closes least recently used idle handles until one more descriptor fits */
  const makeRoom: Effect.Effect<void> = Effect.suspend(() => {
    if (idle.size + active <= bound) return Effect.void
    const [key, h] = idle.entries().next().value!
    idle.delete(key)
    return Effect.andThen(closeHandle(h), makeRoom)
  })

  const enter = Effect.suspend(() => {
    active++
    return makeRoom
  })
  const leave = Effect.sync(() => {
    active--
  })

  const withFile: FilePool["withFile"] = (key, open, use) =>
    permits.withPermits(1)(
      Effect.acquireUseRelease(
        Effect.suspend(() => {
          const cached = idle.get(key)
          if (cached !== undefined) {
            // taken out of the idle set: the same descriptor, now counted as active
            idle.delete(key)
            active++
            return Effect.succeed(cached)
          }
          return Effect.gen(function*() {
            yield* enter
            const scope = yield* Scope.make()
            const file = yield* Scope.provide(open, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
            return { file, scope }
          }).pipe(Effect.onError(() => leave))
        }),
        (h) => use(h.file),
        (h, exit) =>
          Effect.suspend(() => {
            active--
            if (Exit.isFailure(exit) || idle.has(key)) return closeHandle(h)
            idle.set(key, h)
            return Effect.void
          })
      )
    )

  const withSlot: FilePool["withSlot"] = (effect) =>
    permits.withPermits(1)(Effect.acquireUseRelease(enter, () => effect, () => leave))

  const close = (key: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const h = idle.get(key)
      if (h === undefined) return Effect.void
      idle.delete(key)
      return closeHandle(h)
    })

  const peek = (key: string): FileSystem.File | undefined => {
    const h = idle.get(key)
    if (h === undefined) return undefined
    idle.delete(key)
    idle.set(key, h)
    return h.file
  }

  return { max: bound, withFile, withSlot, peek, close, open: () => idle.size + active, idle: () => idle.size }
}

/**
 * The soft limit of open files of this process (`ulimit -n`), read from `/proc/self/limits` where
 * there is one (Linux); `undefined` elsewhere or when unlimited. Read once, up front: when the
 * limit is reached, reading it would need one more descriptor.
 *
 * @since 0.1.0
 * @category utils
 */
export const processLimit: Effect.Effect<number | undefined, never, FileSystem.FileSystem> = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) =>
    fs.readFileString("/proc/self/limits").pipe(
      Effect.map((text) => {
        const m = /^Max open files\s+(\d+)/m.exec(text)
        return m === null ? undefined : Number(m[1])
      }),
      Effect.orElseSucceed(() => undefined)
    )
)
