/**
 * The pre-image journal of one workspace: tools call it around every change so that, BEFORE the
 * workspace changes, the previous content, mode and existence of each path are kept in the
 * session's store (`<harness home>/checkpoints/<session id>/`, never in `.git`), and after the
 * change the new state is noted. The changes of a step are taken with {@link Service.take} and
 * logged as one `checkpoint/manifest` event (see `Hooks`).
 *
 * - `write` / `edit`: {@link Service.aroundPaths} keeps the target (and notes the parent
 *   directories the write creates).
 * - `bash`: {@link Service.aroundScan}: bubblewrap 0.8 (the version this project targets) has no
 *   overlay mounts, so changes are found by a before/after scan (`Scan`): before the command every
 *   workspace file not seen unchanged since the last scan is copied into the store (content
 *   addressed: an unchanged file costs one `lstat`), after it the workspace is scanned again and
 *   hashed where `lstat` changed; the difference is exactly the changed, created and deleted paths.
 *   The root `.git` is never scanned, kept or restored.
 *
 * The service is a `Context.Reference` whose default is {@link disabled} (tools run unjournaled when
 * nothing provides one, e.g. in library tests).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as CheckpointError from "./CheckpointError.js"
import * as FileState from "./FileState.js"
import type * as Manifest from "./Manifest.js"
import * as Scan from "./Scan.js"
import * as Store from "./Store.js"

/**
 * The journal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** `false` for {@link disabled} */
  readonly enabled: boolean
  /** the workspace root (absolute) */
  readonly root: string
  /** the session and position the next changes belong to */
  readonly begin: (sessionId: string, turn: number, step: number) => Effect.Effect<void>
  /** runs `body`, which changes the given workspace paths (relative or absolute), journaling them */
  readonly aroundPaths: <A, E, R>(
    tool: string,
    paths: ReadonlyArray<string>,
    body: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CheckpointError.CheckpointIoError, R>
  /** runs `body`, which may change anything in the workspace, journaling what it changed */
  readonly aroundScan: <A, E, R>(
    tool: string,
    body: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CheckpointError.CheckpointIoError, R>
  /** the changes since the last take, as a manifest payload (`undefined` when nothing changed) */
  readonly take: () => Effect.Effect<Manifest.ManifestData | undefined>
}

/**
 * A journal that keeps nothing.
 *
 * @since 0.1.0
 * @category constants
 */
export const disabled: Service = {
  enabled: false,
  root: "",
  begin: () => Effect.void,
  aroundPaths: (_tool, _paths, body) => body,
  aroundScan: (_tool, body) => body,
  take: () => Effect.undefined
}

/**
 * The journal the tools use (default {@link disabled}).
 *
 * @since 0.1.0
 * @category references
 */
export const Journal: Context.Reference<Service> = Context.Reference<Service>(
  "effect-harness/Checkpoint/Journal",
  { defaultValue: () => disabled }
)

/**
 * Where a session's journal lives under the harness home.
 *
 * @since 0.1.0
 * @category utils
 */
export const dirOf = (home: string, sessionId: string): string => NodePath.join(home, "checkpoints", sessionId)

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the workspace root (absolute) */
  readonly root: string
  /** the harness home (journals go to `<home>/checkpoints/<session id>`) */
  readonly home: string
  readonly bounds?: Store.Bounds
  /** absolute paths never looked at (e.g. a session store inside the workspace) */
  readonly exclude?: ReadonlyArray<string>
}

/**
 * `true` for the relative paths a journal never looks at: the root `.git`, and the harness home and
 * `exclude` when they lie inside the workspace.
 *
 * @since 0.1.0
 * @category utils
 */
export const skipper = (root: string, home: string, exclude: ReadonlyArray<string> = []) => {
  const inside = [home, ...exclude].flatMap((p) => {
    const rel = NodePath.relative(root, NodePath.resolve(p))
    return rel === "" || rel.startsWith("..") || NodePath.isAbsolute(rel) ? [] : [rel.split(NodePath.sep).join("/")]
  })
  return (relative: string): boolean => relative === ".git" || inside.includes(relative)
}

interface Pending {
  before: FileState.FileState
  after: FileState.FileState
  tool: string
  notice: string | undefined
}

/**
 * A journal for one workspace.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Service> =>
  Effect.sync(() => {
    const root = NodePath.resolve(options.root)
    const bounds = options.bounds ?? Store.defaultBounds
    const skip = skipper(root, options.home, options.exclude)
    let session: { id: string; store: Store.Store } | undefined
    let position = { turn: 0, step: 0 }
    let baseline: Scan.Snapshot | undefined
    let pending = new Map<string, Pending>()
    let problems: Array<string> = []
    const lock = Semaphore.makeUnsafe(1)

    const storeOf = (): Store.Store | undefined => session?.store
    const note = (path: string, tool: string, before: Scan.Entry, after: FileState.FileState) => {
      const seen = pending.get(path)
      if (seen === undefined) pending.set(path, { before: before.state, after, tool, notice: before.notice })
      else {
        seen.after = after
        if (seen.tool !== tool && !seen.tool.split(",").includes(tool)) seen.tool = `${seen.tool},${tool}`
      }
    }
    const relativeOf = (input: string): string | undefined => {
      const rel = NodePath.relative(root, NodePath.resolve(root, input))
      if (rel === "" || rel.startsWith("..") || NodePath.isAbsolute(rel)) return undefined
      const posix = rel.split(NodePath.sep).join("/")
      return skip(posix.split("/")[0] as string) ? undefined : posix
    }
    const entry = (store: Store.Store, rel: string, mode: "store" | "hash"): Scan.Entry => {
      const absolute = NodePath.join(root, rel)
      const stats = FileState.lstatOrUndefined(absolute)
      return stats === undefined
        ? { key: "", offered: true, state: FileState.absent }
        : Scan.entryOf(absolute, rel, stats, mode, store, Store.hashFile, undefined)
    }
    // where a link inside the workspace leads (workspace-relative), if anywhere inside it
    const realRelative = (rel: string): string | undefined => {
      let real: string
      try {
        real = NodePath.relative(NodeFs.realpathSync(root), NodeFs.realpathSync(NodePath.join(root, rel)))
      } catch {
        return undefined // absent (a new file), a dangling link or unreadable: nothing more to keep
      }
      return real === "" || real.startsWith("..") || NodePath.isAbsolute(real) ? undefined : real.split(NodePath.sep).join("/")
    }
    // the path and every missing ancestor (a write creates them)
    const withMissingParents = (rel: string): ReadonlyArray<string> => {
      const out = [rel]
      for (let dir = NodePath.posix.dirname(rel); dir !== "."; dir = NodePath.posix.dirname(dir)) {
        if (FileState.lstatOrUndefined(NodePath.join(root, dir)) !== undefined) break
        out.push(dir)
      }
      return out
    }

    const aroundPaths: Service["aroundPaths"] = (tool, paths, body) =>
      Effect.suspend(() => {
        const store = storeOf()
        const rels = [...new Set(paths.flatMap((p) => {
          const rel = relativeOf(p)
          if (rel === undefined) return []
          // a write through a link inside the workspace changes the file it points to
          const real = realRelative(rel)
          return [...withMissingParents(rel), ...(real === undefined || real === rel ? [] : [real])]
        }))]
        if (store === undefined || rels.length === 0) return body
        return lock.withPermits(1)(Effect.gen(function*() {
          const befores = yield* Effect.try({
            try: () => rels.map((rel) => [rel, entry(store, rel, "store")] as const),
            catch: CheckpointError.io("keep the previous content of", rels.join(", "))
          })
          return yield* body.pipe(Effect.ensuring(Effect.sync(() => {
            for (const [rel, before] of befores) {
              try {
                note(rel, tool, before, entry(store, rel, "hash").state)
              } catch (e) {
                // the change happened; its new state is unknown: keep the pre-image, say why
                note(rel, tool, { ...before, notice: `${rel}: cannot read its new state (${String(e)})` }, FileState.absent)
              }
            }
          })))
        }))
      })

    const aroundScan: Service["aroundScan"] = (tool, body) =>
      Effect.suspend(() => {
        const store = storeOf()
        if (store === undefined) return body
        return lock.withPermits(1)(Effect.gen(function*() {
          const before = yield* Effect.try({
            try: () => Scan.scan({ root, mode: "store", store, hash: Store.hashFile, previous: baseline, skip }),
            catch: CheckpointError.io("scan the workspace", root)
          })
          baseline = before
          return yield* body.pipe(Effect.ensuring(Effect.suspend(() =>
            Effect.try({
              try: () => {
                const after = Scan.scan({ root, mode: "hash", store, hash: Store.hashFile, previous: before, skip })
                for (const change of Scan.diff(before, after)) {
                  const seen = before.get(change.path)
                  note(change.path, tool, seen ?? { key: "", offered: true, state: FileState.absent }, change.after)
                }
                baseline = after
              },
              catch: CheckpointError.io("scan the workspace", root)
            }).pipe(Effect.catch((e) => Effect.sync(() => void problems.push(`changes of ${tool} not journaled: ${e.message}`))))
          )))
        }))
      })

    const take: Service["take"] = () =>
      lock.withPermits(1)(Effect.sync(() => {
        const changes: Array<Manifest.PathChange> = []
        const notices: Array<string> = problems
        problems = []
        for (const [path, p] of [...pending].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
          if (FileState.same(p.before, p.after)) continue
          changes.push({ path, before: p.before, after: p.after, tool: p.tool })
          if (p.notice !== undefined) notices.push(p.notice)
        }
        pending = new Map()
        return changes.length === 0 && notices.length === 0 ? undefined : { ...position, changes, notices }
      }))

    const begin: Service["begin"] = (sessionId, turn, step) =>
      Effect.sync(() => {
        if (session?.id !== sessionId) {
          session = { id: sessionId, store: Store.open(dirOf(options.home, sessionId), bounds) }
          baseline = undefined
        }
        position = { turn, step }
      })

    return { enabled: true, root, begin, aroundPaths, aroundScan, take }
  })
