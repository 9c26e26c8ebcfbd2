/**
 * What a workspace path held at one moment: nothing, a regular file (content hash, size, permission
 * bits, and whether its bytes are kept in the store), a directory (permission bits), a symbolic
 * link (its target) or something else (a FIFO, a socket: noted, never restored).
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs"

/**
 * The state of one path.
 *
 * @since 0.1.0
 * @category models
 */
export type FileState =
  | { readonly kind: "absent" }
  | {
    readonly kind: "file"
    /** sha256 of the bytes, hex */
    readonly hash: string
    readonly size: number
    /** permission bits (`mode & 0o7777`) */
    readonly mode: number
    /** `false` when the bytes were too large to keep (the journal's bounds) */
    readonly stored: boolean
  }
  | { readonly kind: "dir"; readonly mode: number }
  | { readonly kind: "symlink"; readonly target: string }
  | { readonly kind: "other" }

/**
 * The absent state.
 *
 * @since 0.1.0
 * @category constants
 */
export const absent: FileState = { kind: "absent" }

/**
 * `true` when two states hold the same bytes, mode and kind (whether the bytes were stored does
 * not matter).
 *
 * @since 0.1.0
 * @category utils
 */
export const same = (a: FileState, b: FileState): boolean => {
  switch (a.kind) {
    case "absent":
    case "other":
      return b.kind === a.kind
    case "file":
      return b.kind === "file" && a.hash === b.hash && a.mode === b.mode
    case "dir":
      return b.kind === "dir" && a.mode === b.mode
    case "symlink":
      return b.kind === "symlink" && a.target === b.target
  }
}

/**
 * A short description (`file 12 B 644`, `absent`, …) for messages.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (s: FileState): string => {
  switch (s.kind) {
    case "file":
      return `file ${s.size} B ${s.mode.toString(8)}`
    case "dir":
      return `directory ${s.mode.toString(8)}`
    case "symlink":
      return `symlink -> ${s.target}`
    default:
      return s.kind
  }
}

/**
 * The `lstat` of a path, or `undefined` when it does not exist (any other error throws).
 *
 * @since 0.1.0
 * @category utils
 */
export const lstatOrUndefined = (absolute: string): NodeFs.BigIntStats | undefined => {
  try {
    return NodeFs.lstatSync(absolute, { bigint: true })
  } catch (e) {
    if (e instanceof Error && "code" in e && (e.code === "ENOENT" || e.code === "ENOTDIR")) return undefined
    throw e
  }
}
