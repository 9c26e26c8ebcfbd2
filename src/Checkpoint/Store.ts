/**
 * The content-addressed store of pre-images: `<journal dir>/objects/<2 hex>/<sha256>`, each object a
 * private (0600) copy of a file's bytes, written once (a temp copy hashed then renamed into place,
 * so an object's name is always the hash of its bytes, even if the source changes meanwhile; a
 * file up to 1 MiB is read once into memory, hashed and written from that buffer).
 *
 * Bounds: a file larger than `maxFileBytes`, or one that would take the store past `maxTotalBytes`,
 * is not kept (its state says `stored: false` and a notice is returned); its hash is still taken
 * so a later change is still seen. Copies use `COPYFILE_FICLONE` (a reflink where the file system
 * has them, a plain copy elsewhere).
 *
 * @since 0.1.0
 */
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { FileState } from "./FileState.js"

/**
 * Bounds of one journal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bounds {
  /** largest file kept (default {@link DEFAULT_MAX_FILE_BYTES}) */
  readonly maxFileBytes: number
  /** largest store (default {@link DEFAULT_MAX_TOTAL_BYTES}) */
  readonly maxTotalBytes: number
}

/**
 * Default per-file bound (32 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024

/**
 * Default whole-journal bound (2 GiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024

/**
 * The default bounds.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBounds: Bounds = { maxFileBytes: DEFAULT_MAX_FILE_BYTES, maxTotalBytes: DEFAULT_MAX_TOTAL_BYTES }

/**
 * One store (synchronous: callers wrap it in `Effect.try`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Store {
  readonly dir: string
  /** stores the file at `absolute` (stat'ed as `stats`); returns its state and a notice when not kept */
  readonly put: (absolute: string, relative: string, stats: NodeFs.BigIntStats) => {
    readonly state: FileState
    readonly notice?: string
  }
  /** bytes held */
  readonly total: () => number
}

const CHUNK = 1024 * 1024

/** files up to this size are read into memory once instead of copied then hashed */
const SMALL_FILE_BYTES = 1024 * 1024

/**
 * sha256 of a file's bytes, read in chunks.
 *
 * @since 0.1.0
 * @category utils
 */
export const hashFile = (absolute: string): string => {
  const hash = NodeCrypto.createHash("sha256")
  const fd = NodeFs.openSync(absolute, "r")
  try {
    const buffer = Buffer.allocUnsafe(CHUNK)
    for (;;) {
      const n = NodeFs.readSync(fd, buffer, 0, CHUNK, null)
      if (n === 0) break
      hash.update(buffer.subarray(0, n))
    }
  } finally {
    NodeFs.closeSync(fd)
  }
  return hash.digest("hex")
}

/**
 * Where an object lives in a store directory.
 *
 * @since 0.1.0
 * @category utils
 */
export const objectPath = (dir: string, hash: string): string => NodePath.join(dir, "objects", hash.slice(0, 2), hash)

const sizeOfTree = (dir: string): number => {
  let total = 0
  let entries: Array<NodeFs.Dirent>
  try {
    entries = NodeFs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0 // no store yet
  }
  for (const entry of entries) {
    const p = NodePath.join(dir, entry.name)
    total += entry.isDirectory() ? sizeOfTree(p) : NodeFs.statSync(p).size
  }
  return total
}

/**
 * Opens (lazily creates) the store in `dir`; the bytes already held are counted once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (dir: string, bounds: Bounds): Store => {
  let total = sizeOfTree(NodePath.join(dir, "objects"))
  let counter = 0
  const made = new Set<string>()
  const ensureDir = (path: string): string => {
    if (!made.has(path)) {
      NodeFs.mkdirSync(path, { recursive: true, mode: 0o700 })
      made.add(path)
    }
    return path
  }
  const put: Store["put"] = (absolute, relative, stats) => {
    const size = Number(stats.size)
    const mode = Number(stats.mode) & 0o7777
    const tooLarge = size > bounds.maxFileBytes
    const full = !tooLarge && total + size > bounds.maxTotalBytes
    if (tooLarge || full) {
      const notice = tooLarge
        ? `${relative} (${size} bytes) is larger than the checkpoint limit of ${bounds.maxFileBytes} bytes: its previous content is not kept and cannot be rewound`
        : `the checkpoint journal is full (${bounds.maxTotalBytes} bytes): the previous content of ${relative} is not kept and cannot be rewound`
      return { state: { kind: "file", hash: hashFile(absolute), size, mode, stored: false }, notice }
    }
    const objects = ensureDir(NodePath.join(dir, "objects"))
    const temp = NodePath.join(objects, `.tmp-${process.pid}-${counter++}`)
    // small files are read once (hash and copy from one buffer); larger ones are copied, then the
    // copy is hashed (its name is the hash of exactly the bytes kept)
    let hash: string
    let kept: number
    if (size <= SMALL_FILE_BYTES) {
      const bytes = NodeFs.readFileSync(absolute)
      hash = NodeCrypto.createHash("sha256").update(bytes).digest("hex")
      kept = bytes.length
      if (NodeFs.existsSync(objectPath(dir, hash))) return { state: { kind: "file", hash, size: kept, mode, stored: true } }
      NodeFs.writeFileSync(temp, bytes, { mode: 0o600 })
    } else {
      NodeFs.copyFileSync(absolute, temp, NodeFs.constants.COPYFILE_FICLONE)
      NodeFs.chmodSync(temp, 0o600)
      hash = hashFile(temp)
      kept = NodeFs.statSync(temp).size
    }
    const target = objectPath(dir, hash)
    if (NodeFs.existsSync(target)) {
      NodeFs.unlinkSync(temp)
    } else {
      ensureDir(NodePath.dirname(target))
      NodeFs.renameSync(temp, target)
      total += kept
    }
    return { state: { kind: "file", hash, size: kept, mode, stored: true } }
  }
  return { dir, put, total: () => total }
}
