/**
 * Recursive directory walk for `glob` and `grep`, honouring `.gitignore` files. Synchronous and
 * race-free (see {@link SafeFs}): every directory is opened relative to its parent's verified
 * descriptor without following links, and each file is yielded together with its open parent
 * directory, so the caller opens it the same way.
 *
 * Decisions (DEC-10):
 * - `.git/` and `node_modules/` are always skipped.
 * - `.gitignore` files of the workspace root and of every directory between the root and the walk
 *   start apply, then those found while descending (deeper wins, see {@link Gitignore}).
 * - Symbolic links are not followed and not listed (like ripgrep's default): following them could
 *   leave the workspace or loop.
 * - Entries are visited in code-unit order of their names, so the output order is deterministic.
 * - The walk stops after {@link MAX_FILES} files and reports `incomplete`.
 * - Paths the caller excludes (a deny rule's hidden paths, see `ReadFilter`) are neither yielded
 *   nor descended into.
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs"
import * as Gitignore from "./Gitignore.js"
import * as SafeFs from "./SafeFs.js"

/**
 * Most files one walk yields.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_FILES = 200_000

/**
 * Directory names that are never descended into.
 *
 * @since 0.1.0
 * @category constants
 */
export const ALWAYS_SKIPPED: ReadonlySet<string> = new Set([".git", "node_modules"])

/**
 * A file found by the walk; `dir` is open only during the visitor call.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileVisit {
  readonly dir: SafeFs.Dir
  readonly name: string
  /** root-relative, `/`-separated */
  readonly relative: string
  /** modification time in ms since the epoch */
  readonly mtime: number
  readonly size: number
}

/**
 * Options of {@link walk}.
 *
 * @since 0.1.0
 * @category models
 */
export interface WalkOptions {
  /** the workspace's real root */
  readonly root: string
  /** the root-relative, `/`-separated directory to start at (`.` for the root) */
  readonly start: string
  /** keep only files whose root-relative path passes this (cheap) test; `undefined` keeps all */
  readonly filter?: ((relative: string) => boolean) | undefined
  /** never yield nor descend into a root-relative path for which this is `true` */
  readonly exclude?: ((relative: string) => boolean) | undefined
}

const joinRel = (dir: string, name: string): string => (dir === "." || dir === "" ? name : `${dir}/${name}`)

/**
 * Loads the `.gitignore` of an open directory (root-relative `relDir`), if it exists and is a
 * readable regular file.
 *
 * @since 0.1.0
 * @category utils
 */
export const loadIgnore = (dir: SafeFs.Dir, relDir: string, root: string): Gitignore.RuleSet | undefined => {
  let fd: number
  try {
    fd = SafeFs.openFileAt(dir, ".gitignore", root, NodeFs.constants.O_RDONLY)
  } catch {
    return undefined
  }
  try {
    if (!NodeFs.fstatSync(fd).isFile()) return undefined
    const { bytes } = SafeFs.readBoundedFd(fd, 1 << 20)
    return Gitignore.parse(relDir === "." ? "" : relDir, new TextDecoder("utf-8").decode(bytes))
  } finally {
    NodeFs.closeSync(fd)
  }
}

/**
 * The files under `options.start`, lazily: a generator that keeps the directories on its current
 * path open (closed when it finishes or is `return`ed), so the caller can pause between files.
 * A file's `dir` is open until the generator is resumed. Throws the Node error when the start
 * directory cannot be opened or listed; returns `incomplete` when it stopped at
 * {@link MAX_FILES}.
 *
 * @since 0.1.0
 * @category utils
 */
export function* walk(options: WalkOptions): Generator<FileVisit, { readonly incomplete: boolean }, undefined> {
  const { root } = options
  let visited = 0
  const segments = options.start === "." ? [] : options.start.split("/")
  const initial: Array<Gitignore.RuleSet> = []
  let current = SafeFs.openRoot(root)
  try {
    for (let i = 0; i < segments.length; i++) {
      const rel = segments.slice(0, i).join("/")
      const set = loadIgnore(current, rel === "" ? "." : rel, root)
      if (set !== undefined) initial.push(set)
      const next = SafeFs.openDirAt(current, segments[i]!, root)
      NodeFs.closeSync(current.fd)
      current = next
    }
  } catch (e) {
    NodeFs.closeSync(current.fd)
    throw e
  }

  function* visit(
    dir: SafeFs.Dir,
    relDir: string,
    inherited: ReadonlyArray<Gitignore.RuleSet>,
    isStart: boolean
  ): Generator<FileVisit, boolean, undefined> {
    let names: Array<string>
    try {
      names = NodeFs.readdirSync(dir.base)
    } catch (e) {
      if (isStart) throw e
      return true // unlistable sub-directory: skipped
    }
    names.sort()
    const own = names.includes(".gitignore") ? loadIgnore(dir, relDir, root) : undefined
    const rules = own !== undefined ? [...inherited, own] : inherited
    for (const name of names) {
      if (ALWAYS_SKIPPED.has(name)) continue
      let info: NodeFs.Stats
      try {
        info = NodeFs.lstatSync(SafeFs.at(dir, name))
      } catch {
        continue // vanished meanwhile
      }
      const isDir = info.isDirectory()
      if (!isDir && !info.isFile()) continue // links and special files
      const rel = joinRel(relDir, name)
      if (Gitignore.isIgnored(rules, rel, isDir)) continue
      if (options.exclude !== undefined && options.exclude(rel)) continue
      if (isDir) {
        let child: SafeFs.Dir
        try {
          child = SafeFs.openDirAt(dir, name, root)
        } catch {
          continue // replaced by a link or removed meanwhile: not followed
        }
        try {
          if (!(yield* visit(child, rel, rules, false))) return false
        } finally {
          NodeFs.closeSync(child.fd)
        }
      } else if (options.filter === undefined || options.filter(rel)) {
        if (visited >= MAX_FILES) return false
        visited++
        yield { dir, name, relative: rel, mtime: info.mtimeMs, size: info.size }
      }
    }
    return true
  }

  try {
    const complete = yield* visit(current, options.start, initial, true)
    return { incomplete: !complete }
  } finally {
    NodeFs.closeSync(current.fd)
  }
}
