/**
 * The workspace files a command names, and a digest of their contents: what an approval of a
 * command (a project MCP server, a project hook) must cover besides the command line, since
 * rewriting `./srv.js` changes what `node ./srv.js` does without changing a byte of the
 * configuration.
 *
 * A word of the command names a file when, after the project-directory variables
 * (`$CLAUDE_PROJECT_DIR`, `$EFFECT_HARNESS_PROJECT_DIR`, `$PWD`) are replaced by the workspace root,
 * it contains a `/` or ends with a file extension (`srv.js`, `./h.sh`, `"$CLAUDE_PROJECT_DIR"/x.py`,
 * `--config=./c.json`), or is a bare name of an existing file (`sh hook`), resolved against the
 * workspace root and every directory a `cd` moves to, inside the workspace. Missing files are
 * recorded as missing, so creating one later changes the digest too. Files are hashed whole,
 * whatever their size.
 *
 * Limits: files the named script loads itself (`require("./lib")`, `source other.sh`), modules
 * named without a path (`python -m pkg`) and words holding other variables are not covered.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * One named file and the digest of its contents (`missing`, `not a file`, or sha256 hex).
 *
 * @since 0.1.0
 * @category models
 */
export interface Named {
  /** workspace-relative, POSIX-separated */
  readonly path: string
  readonly digest: string
}

// the commands run in the workspace root, so `$PWD` is the root too
const PROJECT_VARS = /\$\{(?:CLAUDE_PROJECT_DIR|EFFECT_HARNESS_PROJECT_DIR|PWD)\}|\$(?:CLAUDE_PROJECT_DIR|EFFECT_HARNESS_PROJECT_DIR|PWD)\b/g

/**
 * The words of a shell command line (pure): quotes removed, the project-directory variables
 * replaced by `root`, operators (`; & | ( ) < >`) treated as separators.
 *
 * @since 0.1.0
 * @category utils
 */
export const shellWords = (command: string, root: string): ReadonlyArray<string> => {
  const text = command.replace(PROJECT_VARS, root)
  const words: Array<string> = []
  let current = ""
  let started = false
  let quote: "'" | "\"" | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
      else current += c
    } else if (quote === "\"") {
      if (c === "\"") quote = undefined
      else if (c === "\\" && i + 1 < text.length && "\"\\$`".includes(text[i + 1]!)) current += text[++i]!
      else current += c
    } else if (c === "'" || c === "\"") {
      quote = c
      started = true
    } else if (c === "\\" && i + 1 < text.length) {
      current += text[++i]!
      started = true
    } else if (/\s/.test(c) || ";&|()<>".includes(c)) {
      if (started) words.push(current)
      current = ""
      started = false
    } else {
      current += c
      started = true
    }
  }
  if (started) words.push(current)
  return words
}

/**
 * The workspace-relative paths the words name (see the module doc), sorted, without duplicates.
 * A word is resolved against the workspace root and against every directory a `cd` in the command
 * moves to; a bare word (`hook`, `sh hook`) names a file when such a regular file exists now (the
 * only look at the file system here).
 *
 * @since 0.1.0
 * @category utils
 */
export const namedPaths = (words: ReadonlyArray<string>, root: string, base: string = root): ReadonlyArray<string> => {
  const bases = [base, ...words.flatMap((w, i) => (i > 0 && words[i - 1] === "cd" ? [NodePath.resolve(base, w)] : []))]
  const out = new Set<string>()
  for (const word of words) {
    for (const candidate of [word, ...(word.includes("=") ? [word.slice(word.indexOf("=") + 1)] : [])]) {
      if (candidate === "" || candidate.startsWith("-") || candidate.includes("$")) continue
      const pathLike = candidate.includes("/") || /\.[A-Za-z0-9]{1,8}$/.test(candidate)
      for (const dir of bases) {
        const abs = NodePath.resolve(dir, candidate)
        const rel = NodePath.relative(root, abs)
        if (rel === "" || rel.startsWith("..") || NodePath.isAbsolute(rel)) continue
        if (pathLike || isFile(abs)) out.add(rel.split(NodePath.sep).join("/"))
      }
    }
  }
  return [...out].sort()
}

const isFile = (path: string): boolean => {
  try {
    return NodeFs.statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * The digest of each named file (read now).
 *
 * @since 0.1.0
 * @category constructors
 */
export const digest = (root: string, paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Named>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* Effect.forEach(paths, (path) =>
      Effect.gen(function*() {
        const abs = NodePath.join(root, path)
        const info = yield* Effect.result(fs.stat(abs))
        if (Result.isFailure(info)) return { path, digest: "missing" }
        if (info.success.type !== "File") return { path, digest: "not a file" }
        // streamed: a large file is hashed whole too, never identified by size and time alone
        const hash = createHash("sha256")
        const read = yield* Effect.result(Stream.runForEach(fs.stream(abs), (bytes) => Effect.sync(() => void hash.update(bytes))))
        if (Result.isFailure(read)) return { path, digest: "unreadable" }
        return { path, digest: hash.digest("hex") }
      }))
  })

/**
 * One hex digest over a list of named files (stable: sorted by path).
 *
 * @since 0.1.0
 * @category utils
 */
export const combined = (named: ReadonlyArray<Named>): string => {
  const hash = createHash("sha256")
  for (const n of [...named].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    hash.update(n.path).update("\0").update(n.digest).update("\0")
  }
  return hash.digest("hex")
}
