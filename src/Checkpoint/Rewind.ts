/**
 * Code rewind: puts every workspace path the journal saw change back to its state at the end of a
 * turn (turn 0: before the first one), from the `checkpoint/manifest` events of a log.
 *
 * - Target: for each path, the `before` of the first manifest after the turn's `turn/end`; the
 *   expected current state is the `after` of its last manifest. A path that matches neither was
 *   changed outside the agent since the checkpoint: it is listed and nothing is restored
 *   (`REWIND_CONFLICT`) unless `force`. A pre-image that was too large to keep is listed the same
 *   way (with `force` such paths are left as they are).
 * - Crash safety: the plan (every path with its current and target state) is written to a marker
 *   (`rewind.json` in the journal directory) BEFORE the first change, the current bytes kept in the
 *   store first, so the rewind itself is recorded and can be undone. Every step is idempotent (a
 *   path already in its target state is skipped; files are written to a temp file and renamed);
 *   when a marker is found, {@link run} resumes it instead of planning anew. The caller appends
 *   {@link record} to the log, then calls {@link finish} (which removes the marker).
 * - `.git` is never read or written.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { SessionEvent } from "../Session/SessionEvent.js"
import * as CheckpointError from "./CheckpointError.js"
import * as FileState from "./FileState.js"
import * as Manifest from "./Manifest.js"
import * as Scan from "./Scan.js"
import * as Store from "./Store.js"

/**
 * One path of a plan.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly path: string
  readonly current: FileState.FileState
  readonly target: FileState.FileState
}

/**
 * The marker: what a rewind in progress does.
 *
 * @since 0.1.0
 * @category models
 */
export interface Marker {
  readonly id: string
  readonly turn: number
  /** the session whose log gets the record */
  readonly recordTo: string
  /** a conversation fork made with it, if any */
  readonly fork?: string
  readonly steps: ReadonlyArray<Step>
  /** paths left as they are (forced past a missing pre-image) */
  readonly skipped: ReadonlyArray<string>
}

/**
 * Options of {@link run}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<E = never, R = never> {
  /** the workspace root */
  readonly root: string
  /** the journal directory of the session named (marker and the current bytes go here) */
  readonly dir: string
  /** where pre-images may be: this session's journal directory, then its ancestors' */
  readonly objectDirs: ReadonlyArray<string>
  readonly events: ReadonlyArray<SessionEvent>
  readonly turn: number
  readonly force: boolean
  /** the session whose log gets the record (default: the one named) */
  readonly recordTo: string
  readonly fork?: string
  /** before the first change (e.g. making the fork); may return the session that gets the record */
  readonly prepare?: Effect.Effect<{ readonly recordTo: string; readonly fork?: string }, E, R>
}

/**
 * The marker file of a journal directory.
 *
 * @since 0.1.0
 * @category utils
 */
export const markerPath = (dir: string): string => NodePath.join(dir, "rewind.json")

/**
 * The seq after which manifests are undone to reach the end of `turn` (`-1` for turn 0).
 *
 * @since 0.1.0
 * @category planning
 */
export const boundaryOf = (
  events: ReadonlyArray<SessionEvent>,
  turn: number
): Effect.Effect<number, CheckpointError.RewindTargetError> => {
  if (!Number.isSafeInteger(turn) || turn < 0) {
    return Effect.fail(new CheckpointError.RewindTargetError({ message: `--turn takes a turn number (0 or more), not ${turn}` }))
  }
  if (turn === 0) return Effect.succeed(-1)
  const end = events.find((e) => e.type === "turn/end" && e.data.turn === turn)
  if (end !== undefined) return Effect.succeed(end.seq)
  const started = events.some((e) => e.type === "turn/start" && e.data.turn === turn)
  return Effect.fail(new CheckpointError.RewindTargetError({
    message: started ? `turn ${turn} has not ended` : `there is no turn ${turn} in this session`
  }))
}

/**
 * For each path changed after `boundary`: its target (state at the boundary) and expected current
 * state (after its last change), in path order.
 *
 * @since 0.1.0
 * @category planning
 */
export const targets = (
  events: ReadonlyArray<SessionEvent>,
  boundary: number
): ReadonlyArray<{ readonly path: string; readonly target: FileState.FileState; readonly expected: FileState.FileState }> => {
  const target = new Map<string, FileState.FileState>()
  const expected = new Map<string, FileState.FileState>()
  for (const m of Manifest.of(events)) {
    for (const c of m.data.changes) {
      if (m.seq > boundary && !target.has(c.path)) target.set(c.path, c.before)
      expected.set(c.path, c.after)
    }
  }
  return [...target.keys()].sort().map((path) => ({
    path,
    target: target.get(path) as FileState.FileState,
    expected: expected.get(path) as FileState.FileState
  }))
}

const readMarker = (dir: string): Marker | undefined => {
  let text: string
  try {
    text = NodeFs.readFileSync(markerPath(dir), "utf8")
  } catch (e) {
    if (e instanceof Error && "code" in e && e.code === "ENOENT") return undefined
    throw e
  }
  return JSON.parse(text) as Marker
}

// one temporary name per file, the same in every process: a rerun after a crash between the write and
// the rename writes the same temporary file again and renames it, so no stray copy is left behind
const writeAtomic = (file: string, bytes: string | Buffer, mode: number) => {
  const temp = `${file}.harness-rewind.tmp`
  const fd = NodeFs.openSync(temp, "w", mode)
  try {
    NodeFs.writeFileSync(fd, bytes)
    NodeFs.fsyncSync(fd)
  } finally {
    NodeFs.closeSync(fd)
  }
  NodeFs.chmodSync(temp, mode)
  NodeFs.renameSync(temp, file)
}

const depth = (path: string): number => path.split("/").length

const findObject = (dirs: ReadonlyArray<string>, hash: string): string => {
  for (const dir of dirs) {
    const p = Store.objectPath(dir, hash)
    if (NodeFs.existsSync(p)) return p
  }
  throw new Error(`the kept content ${hash.slice(0, 12)} is missing from the journal`)
}

const remove = (absolute: string, state: FileState.FileState) => {
  if (state.kind === "dir") NodeFs.rmdirSync(absolute)
  else NodeFs.unlinkSync(absolute)
}

/**
 * Applies the steps of a marker (idempotent): removals deepest first, then creations and writes
 * shallowest first.
 *
 * @since 0.1.0
 * @category restoring
 */
export const apply = (root: string, objectDirs: ReadonlyArray<string>, marker: Marker): void => {
  const stateNow = (rel: string): FileState.FileState => {
    const absolute = NodePath.join(root, rel)
    const stats = FileState.lstatOrUndefined(absolute)
    if (stats === undefined) return FileState.absent
    if (stats.isFile()) {
      return { kind: "file", hash: Store.hashFile(absolute), size: Number(stats.size), mode: Number(stats.mode) & 0o7777, stored: false }
    }
    if (stats.isDirectory()) return { kind: "dir", mode: Number(stats.mode) & 0o7777 }
    if (stats.isSymbolicLink()) return { kind: "symlink", target: NodeFs.readlinkSync(absolute) }
    return { kind: "other" }
  }
  const pending = marker.steps.filter((s) => !marker.skipped.includes(s.path))
  for (const step of [...pending].sort((a, b) => depth(b.path) - depth(a.path))) {
    const now = stateNow(step.path)
    if (now.kind === "absent" || FileState.same(now, step.target)) continue
    if (step.target.kind === "absent" || now.kind !== step.target.kind || now.kind === "symlink") {
      remove(NodePath.join(root, step.path), now)
    }
  }
  for (const step of [...pending].sort((a, b) => depth(a.path) - depth(b.path))) {
    const absolute = NodePath.join(root, step.path)
    const target = step.target
    const now = stateNow(step.path)
    if (FileState.same(now, target)) continue
    switch (target.kind) {
      case "dir":
        if (now.kind === "absent") NodeFs.mkdirSync(absolute, { mode: target.mode })
        NodeFs.chmodSync(absolute, target.mode)
        break
      case "file":
        if (now.kind === "file" && now.hash === target.hash) NodeFs.chmodSync(absolute, target.mode)
        else writeAtomic(absolute, NodeFs.readFileSync(findObject(objectDirs, target.hash)), target.mode)
        break
      case "symlink":
        NodeFs.symlinkSync(target.target, absolute)
        break
      default:
        break // absent: removed above; other: never restored
    }
  }
}

/**
 * What a rewind did (also the payload of its record).
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly marker: Marker
  /** a marker left by an interrupted rewind was finished instead of planning anew */
  readonly resumed: boolean
}

/**
 * Plans (or resumes) and applies a code rewind. Fails `REWIND_CONFLICT` before changing anything
 * when a path was changed outside the agent (or lacks a pre-image) and `force` is off.
 *
 * @since 0.1.0
 * @category restoring
 */
export const run = <E = never, R = never>(
  options: Options<E, R>
): Effect.Effect<Result, CheckpointError.CheckpointError | E, R> =>
  Effect.gen(function*() {
    const io = (what: string, path: string) => CheckpointError.io(what, path)
    const found = yield* Effect.try({ try: () => readMarker(options.dir), catch: io("read the rewind marker", markerPath(options.dir)) })
    if (found !== undefined) {
      yield* Effect.try({ try: () => apply(options.root, options.objectDirs, found), catch: io("restore the workspace", options.root) })
      return { marker: found, resumed: true }
    }
    const boundary = yield* boundaryOf(options.events, options.turn)
    const planned = targets(options.events, boundary)
    const store = Store.open(options.dir, { maxFileBytes: Number.MAX_SAFE_INTEGER, maxTotalBytes: Number.MAX_SAFE_INTEGER })
    const steps = yield* Effect.try({
      try: () =>
        planned.map((p) => {
          const absolute = NodePath.join(options.root, p.path)
          const stats = FileState.lstatOrUndefined(absolute)
          const current = stats === undefined
            ? FileState.absent
            : Scan.entryOf(absolute, p.path, stats, "store", store, Store.hashFile, undefined).state
          return { ...p, current }
        }),
      catch: io("keep the current content of the workspace", options.root)
    })
    const changed = steps.filter((s) => !FileState.same(s.current, s.expected) && !FileState.same(s.current, s.target))
    const unrecorded = steps.filter((s) =>
      s.target.kind === "file" && !s.target.stored && !FileState.same(s.current, s.target) &&
      !options.objectDirs.some((d) => NodeFs.existsSync(Store.objectPath(d, s.target.kind === "file" ? s.target.hash : "")))
    )
    if ((changed.length > 0 || unrecorded.length > 0) && !options.force) {
      const parts = [
        ...(changed.length > 0 ? [`changed outside the agent since the checkpoint: ${changed.map((s) => s.path).join(", ")}`] : []),
        ...(unrecorded.length > 0 ? [`too large to have been checkpointed: ${unrecorded.map((s) => s.path).join(", ")}`] : [])
      ]
      return yield* new CheckpointError.RewindConflictError({
        message: `not rewinding: ${parts.join("; ")} (use --force to overwrite them)`,
        changed: changed.map((s) => s.path),
        unrecorded: unrecorded.map((s) => s.path)
      })
    }
    const prepared = options.prepare === undefined
      ? { recordTo: options.recordTo, ...(options.fork === undefined ? {} : { fork: options.fork }) }
      : yield* options.prepare
    const marker: Marker = {
      id: NodeCrypto.randomUUID(),
      turn: options.turn,
      ...prepared,
      steps: steps.map(({ current, path, target }) => ({ path, current, target })),
      skipped: unrecorded.map((s) => s.path)
    }
    yield* Effect.try({
      try: () => {
        NodeFs.mkdirSync(options.dir, { recursive: true, mode: 0o700 })
        writeAtomic(markerPath(options.dir), JSON.stringify(marker), 0o600)
      },
      catch: io("write the rewind marker", markerPath(options.dir))
    })
    yield* Effect.try({ try: () => apply(options.root, options.objectDirs, marker), catch: io("restore the workspace", options.root) })
    return { marker, resumed: false }
  })

/**
 * The manifest recording a finished rewind (`turn` = the session's last turn number).
 *
 * @since 0.1.0
 * @category restoring
 */
export const record = (marker: Marker, lastTurn: number): Manifest.ManifestData => ({
  turn: lastTurn,
  step: 0,
  changes: marker.steps
    .filter((s) => !marker.skipped.includes(s.path) && !FileState.same(s.current, s.target))
    .map((s) => ({ path: s.path, before: s.current, after: s.target, tool: "rewind" })),
  notices: marker.skipped.map((p) => `${p} was left as it is (no pre-image)`),
  rewind: { id: marker.id, turn: marker.turn }
})

/**
 * `true` when the log already holds the record of the rewind `id` (a crash after appending it).
 *
 * @since 0.1.0
 * @category restoring
 */
export const recorded = (events: ReadonlyArray<SessionEvent>, id: string): boolean =>
  Manifest.of(events).some((m) => m.data.rewind?.id === id)

/**
 * Removes the marker once the record is in the log.
 *
 * @since 0.1.0
 * @category restoring
 */
export const finish = (dir: string): Effect.Effect<void, CheckpointError.CheckpointIoError> =>
  Effect.try({
    try: () => NodeFs.rmSync(markerPath(dir), { force: true }),
    catch: CheckpointError.io("remove the rewind marker", markerPath(dir))
  })
