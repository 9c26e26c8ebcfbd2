/**
 * Race-free file access under a workspace root (decision 0010), as synchronous primitives shared by
 * the main thread ({@link FileIo}) and the search worker.
 *
 * Node has no `openat`, but on Linux `/proc/self/fd/N` is a magic link: a path through it
 * (`/proc/self/fd/N/name`) is looked up in the directory the descriptor `N` refers to, whatever
 * has been renamed since. So every access is a walk of descriptors:
 *
 * 1. the root is opened with `O_DIRECTORY | O_NOFOLLOW` and its descriptor's real path
 *    (`readlink /proc/self/fd/N`) must equal the workspace's real root;
 * 2. each further component is opened relative to the previous directory's descriptor, one
 *    component at a time, with `O_NOFOLLOW` (a symbolic link anywhere fails with `ELOOP` /
 *    `ENOTDIR`: links are resolved beforehand, lexically checked, by `Workspace.resolve`);
 * 3. the final descriptor's real path is checked again to lie inside the root before any byte is
 *    read or written;
 * 4. writes create a temp file with `O_CREAT | O_EXCL | O_NOFOLLOW` inside the verified directory
 *    and rename it over the name in that same directory (a link swapped in as the name is
 *    replaced, never followed).
 *
 * Where `/proc/self/fd` is unavailable (not Linux) the directory's real path stands in for the
 * magic link: still `O_NOFOLLOW` per component and checked, but no longer immune to a concurrent
 * rename of a directory between two steps (documented in docs/security.md).
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const C = NodeFs.constants

/**
 * Whether `/proc/self/fd` magic links are available.
 *
 * @since 0.1.0
 * @category constants
 */
export const procFd: boolean = (() => {
  try {
    // a descriptor of our own (fd 0 may be closed): its magic link must name the opened directory
    const fd = NodeFs.openSync("/", NodeFs.constants.O_RDONLY | NodeFs.constants.O_DIRECTORY)
    try {
      return NodeFs.readlinkSync(`/proc/self/fd/${fd}`) === "/" && NodeFs.statSync(`/proc/self/fd/${fd}/.`).isDirectory()
    } finally {
      NodeFs.closeSync(fd)
    }
  } catch {
    return false
  }
})()

/**
 * An open directory: its descriptor and the path prefix that reaches it race-free.
 *
 * @since 0.1.0
 * @category models
 */
export interface Dir {
  readonly fd: number
  /** `/proc/self/fd/<fd>` on Linux, else the directory's real path */
  readonly base: string
}

/**
 * A refused access: the opened object is not where it was asked for (a concurrent change).
 *
 * @since 0.1.0
 * @category errors
 */
export class EscapeError extends Error {
  /** discriminator */
  readonly code = "ESCAPE"
  constructor(readonly actual: string) {
    super(`the path changed during access and now leads to ${actual}, outside the workspace`)
  }
}

/**
 * Whether `candidate` is `root` or below it (`..foo` is an ordinary name).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isInside = (root: string, candidate: string): boolean => {
  const rel = NodePath.relative(root, candidate)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${NodePath.sep}`) && !NodePath.isAbsolute(rel))
}

/**
 * The path of `name` inside `dir`, reached through the directory's descriptor.
 *
 * @since 0.1.0
 * @category utils
 */
export const at = (dir: Dir, name: string): string => `${dir.base}/${name}`

/**
 * The real path of an open descriptor (`readlink /proc/self/fd/N`); `undefined` off Linux.
 *
 * @since 0.1.0
 * @category utils
 */
export const realPathOf = (fd: number): string | undefined => procFd ? NodeFs.readlinkSync(`/proc/self/fd/${fd}`) : undefined

/**
 * Throws {@link EscapeError} unless the descriptor's real path lies inside `root`.
 *
 * @since 0.1.0
 * @category utils
 */
export const verify = (fd: number, root: string): void => {
  const real = realPathOf(fd)
  if (real !== undefined && !isInside(root, real)) throw new EscapeError(real)
}

/**
 * The {@link Dir} of an open directory descriptor (`fallback`: its real path, used off Linux).
 *
 * @since 0.1.0
 * @category constructors
 */
export const dirOf = (fd: number, fallback: string): Dir => ({ fd, base: procFd ? `/proc/self/fd/${fd}` : fallback })

const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW

/**
 * Opens the workspace root (its real path) and checks the descriptor is that directory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openRoot = (root: string): Dir => {
  const fd = NodeFs.openSync(root, DIR_FLAGS)
  const real = realPathOf(fd)
  if (real !== undefined && real !== root) {
    NodeFs.closeSync(fd)
    throw new EscapeError(real)
  }
  return dirOf(fd, root)
}

/**
 * Opens the sub-directory `name` of `dir` without following a link; with `create`, a missing one
 * is created first.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openDirAt = (dir: Dir, name: string, root: string, create = false): Dir => {
  let fd: number
  try {
    fd = NodeFs.openSync(at(dir, name), DIR_FLAGS)
  } catch (e) {
    if (!create || errnoOf(e) !== "ENOENT") throw e
    NodeFs.mkdirSync(at(dir, name))
    fd = NodeFs.openSync(at(dir, name), DIR_FLAGS)
  }
  try {
    verify(fd, root)
  } catch (e) {
    NodeFs.closeSync(fd)
    throw e
  }
  return dirOf(fd, NodePath.join(dir.base, name))
}

/**
 * Opens the directory `segments` below the root, one component at a time (intermediate
 * descriptors are closed). The caller closes the result.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openDir = (root: string, segments: ReadonlyArray<string>, create = false): Dir => {
  let current = openRoot(root)
  for (const segment of segments) {
    try {
      const next = openDirAt(current, segment, root, create)
      NodeFs.closeSync(current.fd)
      current = next
    } catch (e) {
      NodeFs.closeSync(current.fd)
      throw e
    }
  }
  return current
}

/**
 * Opens the file `name` in `dir` with `flags | O_NOFOLLOW` and verifies where it is. The caller
 * closes the descriptor.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openFileAt = (dir: Dir, name: string, root: string, flags: number, mode?: number): number => {
  const fd = NodeFs.openSync(at(dir, name), flags | C.O_NOFOLLOW | C.O_NONBLOCK, mode)
  try {
    verify(fd, root)
  } catch (e) {
    NodeFs.closeSync(fd)
    throw e
  }
  return fd
}

/**
 * The segments of an absolute path inside `root` (empty for the root itself).
 *
 * @since 0.1.0
 * @category utils
 */
export const segmentsOf = (root: string, absolute: string): Array<string> => {
  const rel = NodePath.relative(root, absolute)
  return rel === "" ? [] : rel.split(NodePath.sep)
}

/**
 * Runs `use` with the directory `segments` below the root open, closing it afterwards.
 *
 * @since 0.1.0
 * @category utils
 */
export const withDir = <A>(root: string, segments: ReadonlyArray<string>, create: boolean, use: (dir: Dir) => A): A => {
  const dir = openDir(root, segments, create)
  try {
    return use(dir)
  } finally {
    NodeFs.closeSync(dir.fd)
  }
}

/**
 * The `code` of a Node system error.
 *
 * @since 0.1.0
 * @category utils
 */
export const errnoOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/**
 * Reads at most `maxBytes` bytes from the start of an open file; `truncated` when it is longer.
 *
 * @since 0.1.0
 * @category utils
 */
export const readBoundedFd = (fd: number, maxBytes: number): { readonly bytes: Uint8Array; readonly truncated: boolean } => {
  const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, 1 << 20))
  const chunks: Array<Buffer> = []
  let total = 0
  for (;;) {
    const want = Math.min(buffer.length, maxBytes + 1 - total)
    if (want <= 0) break
    const n = NodeFs.readSync(fd, buffer, 0, want, null)
    if (n === 0) break
    chunks.push(Buffer.from(buffer.subarray(0, n)))
    total += n
  }
  const all = Buffer.concat(chunks)
  return { bytes: all.subarray(0, Math.min(total, maxBytes)), truncated: total > maxBytes }
}
