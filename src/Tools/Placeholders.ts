/**
 * Read-only mount points for paths that must not be created inside the sandbox (issue 26).
 *
 * A bind mount needs an existing mount point, so a protected path that does not exist yet (a
 * workspace without `.claude/`, a home without `.bash_profile`) gets a placeholder on the host for
 * as long as a sandboxed command runs: the first missing component of the path is created (an
 * empty directory, or a file with fixed harmless content) and mounted read-only over itself, so
 * the command can neither write into it nor remove or rename it (a mount point is busy). When the
 * last command using it ends, a placeholder the harness created is removed if it is still as
 * created (an empty directory, a file with the content written), so the user's tree is left as it
 * was. Placeholders are counted per process: concurrent commands share one.
 *
 * The walk to the missing component refuses symbolic links and non-directories on the way: such
 * a target is skipped (nothing is created through a link).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as ToolError from "./ToolError.js"

/**
 * A path to keep read-only in the sandbox.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  /** the directory under which placeholders may be created (the workspace or the home) */
  readonly base: string
  /** the path relative to `base`, POSIX-separated */
  readonly relative: string
  /** what the path is when it exists: a directory or a file */
  readonly kind: "directory" | "file"
  /** the content of a file placeholder (default empty) */
  readonly content?: string
  /**
   * `false`: an absent target gets no placeholder; whatever a command creates there is removed
   * when the scope closes
   */
  readonly placeholder?: false
}

interface Held {
  count: number
  readonly kind: "directory" | "file"
  readonly content: string
  /** whether this process created it (only those are removed) */
  readonly created: boolean
}

const held = new Map<string, Held>()

const errnoCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/** errors meaning "nobody here can create it": the command could not either */
const UNCREATABLE = new Set(["EACCES", "EPERM", "EROFS"])

type Step =
  | { readonly _tag: "exists"; readonly path: string }
  | { readonly _tag: "missing"; readonly path: string; readonly kind: "directory" | "file" }
  | { readonly _tag: "skip" }

/** the existing target, or its first missing component, walking without following links */
const locate = (target: Target): Step => {
  const parts = target.relative.split("/").filter((p) => p !== "" && p !== ".")
  let current = target.base
  for (let i = 0; i < parts.length; i++) {
    current = NodePath.join(current, parts[i]!)
    const last = i === parts.length - 1
    let info: NodeFs.Stats
    try {
      info = NodeFs.lstatSync(current)
    } catch (e) {
      if (errnoCode(e) === "ENOENT") {
        return { _tag: "missing", path: current, kind: last ? target.kind : "directory" }
      }
      return { _tag: "skip" }
    }
    if (last) return { _tag: "exists", path: current }
    if (info.isSymbolicLink() || !info.isDirectory()) return { _tag: "skip" }
  }
  return { _tag: "skip" }
}

const create = (path: string, kind: "directory" | "file", content: string): "created" | "exists" | "uncreatable" => {
  try {
    if (kind === "directory") NodeFs.mkdirSync(path, { mode: 0o700 })
    else NodeFs.writeFileSync(path, content, { flag: "wx", mode: 0o644 })
    return "created"
  } catch (e) {
    const code = errnoCode(e)
    if (code === "EEXIST") return "exists"
    if (code !== undefined && UNCREATABLE.has(code)) return "uncreatable"
    throw e
  }
}

const release = (path: string): void => {
  const entry = held.get(path)
  if (entry === undefined) return
  entry.count -= 1
  if (entry.count > 0) return
  held.delete(path)
  if (!entry.created) return
  try {
    if (entry.kind === "directory") NodeFs.rmdirSync(path)
    else if (NodeFs.readFileSync(path, "utf8") === entry.content) NodeFs.unlinkSync(path)
  } catch {
    // not empty, changed, or already gone: the user's now, left in place
  }
}

/**
 * Makes every target bindable: existing ones are returned as they are, missing ones get a
 * placeholder (removed at scope close when unchanged). Returns the paths to mount read-only;
 * targets reached through a link, or that nobody can create, are left out.
 *
 * @since 0.1.0
 * @category resources
 */
export const acquire = (targets: ReadonlyArray<Target>) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const mounts: Array<string> = []
        const taken: Array<string> = []
        const absent: Array<string> = []
        try {
          for (const target of targets) {
            const step = locate(target)
            if (step._tag === "skip") continue
            if (step._tag === "exists" && !held.has(step.path)) {
              mounts.push(step.path)
              continue
            }
            const entry = held.get(step.path)
            if (entry !== undefined) {
              entry.count += 1
              taken.push(step.path)
              mounts.push(step.path)
              continue
            }
            if (step._tag !== "missing") continue
            if (target.placeholder === false) {
              if (step.kind === "file" && step.path === NodePath.join(target.base, target.relative)) absent.push(step.path)
              continue
            }
            const content = step.kind === "file" ? target.content ?? "" : ""
            const outcome = create(step.path, step.kind, content)
            if (outcome === "uncreatable") continue
            held.set(step.path, { count: 1, kind: step.kind, content, created: outcome === "created" })
            taken.push(step.path)
            mounts.push(step.path)
          }
        } catch (e) {
          for (const path of taken) release(path)
          throw e
        }
        return { mounts: [...new Set(mounts)], taken, absent }
      },
      catch: (e) =>
        ToolError.make(
          "SPAWN_FAILED",
          `cannot prepare the sandbox's read-only paths: ${e instanceof Error ? e.message : String(e)}`
        )
    }),
    ({ absent, taken }) =>
      Effect.sync(() => {
        taken.forEach(release)
        // created by the command where nothing may be: removed (the tool's own writes are refused there)
        for (const path of absent) NodeFs.rmSync(path, { recursive: true, force: true })
      })
  ).pipe(Effect.map(({ mounts }) => mounts))
