/**
 * Before/after scans of a workspace: how `bash` changes are found without an overlay file system.
 *
 * A scan walks the workspace (never following links, skipping what `skip` names, e.g. the root
 * `.git`) and records every path's {@link FileState}. A file whose `lstat` key (inode, size,
 * mtime and ctime in ns, mode) matches the previous scan keeps its previous state without being
 * read again; ctime cannot be set by a process, so a changed file always shows a new key. In
 * `store` mode every file's bytes are kept in the store (a pre-image: the scan before a command);
 * in `hash` mode they are only hashed (the scan after it). {@link diff} then names exactly the paths
 * whose kind, bytes, mode or link target differ. A directory that may not be listed, or a file that
 * may not be read, is left out (state `other`): its changes are not journaled.
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as FileState from "./FileState.js"
import type * as Store from "./Store.js"

/**
 * One scanned path.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly key: string
  readonly state: FileState.FileState
  /** the bytes were offered to the store (kept, or refused with {@link notice}) */
  readonly offered: boolean
  readonly notice?: string
}

/**
 * A scan: workspace-relative path (`/`-separated) → entry.
 *
 * @since 0.1.0
 * @category models
 */
export type Snapshot = ReadonlyMap<string, Entry>

/**
 * One changed path.
 *
 * @since 0.1.0
 * @category models
 */
export interface Change {
  readonly path: string
  readonly before: FileState.FileState
  readonly after: FileState.FileState
}

const denied = (e: unknown): boolean => e instanceof Error && "code" in e && (e.code === "EACCES" || e.code === "EPERM")

const keyOf = (s: NodeFs.BigIntStats): string => `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}`

/**
 * The state of one path from its `lstat` (files stored or hashed as `mode` says), reusing the
 * previous entry when its key matches.
 *
 * @since 0.1.0
 * @category utils
 */
export const entryOf = (
  absolute: string,
  relative: string,
  stats: NodeFs.BigIntStats,
  mode: "store" | "hash",
  store: Store.Store,
  hash: (absolute: string) => string,
  previous: Entry | undefined
): Entry => {
  const key = keyOf(stats)
  if (previous !== undefined && previous.key === key && (mode === "hash" || previous.offered)) return previous
  const perm = Number(stats.mode) & 0o7777
  if (stats.isFile()) {
    if (mode === "hash") {
      return { key, offered: false, state: { kind: "file", hash: hash(absolute), size: Number(stats.size), mode: perm, stored: false } }
    }
    const put = store.put(absolute, relative, stats)
    return { key, offered: true, state: put.state, ...(put.notice === undefined ? {} : { notice: put.notice }) }
  }
  if (stats.isDirectory()) return { key, offered: true, state: { kind: "dir", mode: perm } }
  if (stats.isSymbolicLink()) return { key, offered: true, state: { kind: "symlink", target: NodeFs.readlinkSync(absolute) } }
  return { key, offered: true, state: { kind: "other" } }
}

/**
 * Scans the workspace at `root`.
 *
 * @since 0.1.0
 * @category scanning
 */
export const scan = (options: {
  readonly root: string
  readonly mode: "store" | "hash"
  readonly store: Store.Store
  readonly hash: (absolute: string) => string
  readonly previous: Snapshot | undefined
  /** `true` for a relative path not to look at (nor below) */
  readonly skip: (relative: string) => boolean
}): Snapshot => {
  const out = new Map<string, Entry>()
  const pending: Array<string> = [""]
  while (pending.length > 0) {
    const dir = pending.pop() as string
    let entries: ReadonlyArray<string>
    try {
      entries = NodeFs.readdirSync(dir === "" ? options.root : NodePath.join(options.root, dir))
    } catch (e) {
      if (!denied(e)) throw e
      continue // a directory we may not list: its contents are not journaled
    }
    for (const name of entries) {
      const relative = dir === "" ? name : `${dir}/${name}`
      if (options.skip(relative)) continue
      const absolute = NodePath.join(options.root, relative)
      const stats = FileState.lstatOrUndefined(absolute)
      if (stats === undefined) continue // gone meanwhile
      let entry: Entry
      try {
        entry = entryOf(absolute, relative, stats, options.mode, options.store, options.hash, options.previous?.get(relative))
      } catch (e) {
        if (!denied(e)) throw e
        entry = { key: "", offered: true, state: { kind: "other" } } // unreadable: noted, never restored
      }
      out.set(relative, entry)
      if (entry.state.kind === "dir") pending.push(relative)
    }
  }
  return out
}

/**
 * The paths that differ between two scans, with their states, in path order.
 *
 * @since 0.1.0
 * @category scanning
 */
export const diff = (before: Snapshot, after: Snapshot): ReadonlyArray<Change> => {
  const paths = new Set([...before.keys(), ...after.keys()])
  const out: Array<Change> = []
  for (const path of [...paths].sort()) {
    const b = before.get(path)?.state ?? FileState.absent
    const a = after.get(path)?.state ?? FileState.absent
    if (!FileState.same(b, a)) out.push({ path, before: b, after: a })
  }
  return out
}
