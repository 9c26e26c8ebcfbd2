/**
 * The workspace root the built-in file tools are confined to.
 *
 * A tool path may be absolute (inside the root) or relative to the root. Resolution:
 *
 * 1. Lexical: the path is normalised (`..` collapsed) and must lie inside the root, either as the
 *    root was configured or as its real path (so `/tmp/ws/x` works when `/tmp` is a symlink).
 * 2. Symbolic links: the deepest existing ancestor of the path is resolved with `realpath` and the
 *    not-yet-existing rest is appended; the result must still lie inside the real root. A link
 *    pointing outside is denied, a link pointing inside is followed (the tools then operate on the
 *    real target, so an atomic write replaces the target, not the link).
 *
 * Resolution only computes the path; the tools then open it race-free, one verified descriptor
 * per component (see `internal/SafeFs`, decision 0010), so a link swapped in after resolution is
 * refused rather than followed. A name that merely begins with `..` (`..foo`, `...`) is ordinary.
 *
 * Denials are {@link ToolError.BuiltinToolError}s with code `OUTSIDE_WORKSPACE` and a message that
 * names the path and the root. Decisions (DEC-10): a component that cannot be resolved for any
 * reason (missing, dangling link, not a directory) counts as "not existing yet"; the operation that
 * follows reports the real failure. Display paths are root-relative with `/` separators (`.` for
 * the root itself).
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SafeFs from "./internal/SafeFs.js"
import * as ToolError from "./ToolError.js"

/**
 * A path inside the workspace.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedPath {
  /** real absolute path (symbolic links of existing ancestors resolved) */
  readonly absolute: string
  /** root-relative display path, `/`-separated, `.` for the root */
  readonly relative: string
}

/**
 * The workspace service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** the real path of the workspace root */
  readonly root: string
  /** resolves a tool path, denying escapes from the root */
  readonly resolve: (input: string) => Effect.Effect<ResolvedPath, ToolError.BuiltinToolError>
  /** the root-relative display form of an absolute path inside the real root */
  readonly display: (absolute: string) => string
}

/**
 * The workspace tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Workspace extends Context.Service<Workspace, Service>()("effect-harness/Tools/Workspace") {}

const isInside = (_path: Path.Path, root: string, candidate: string): boolean => SafeFs.isInside(root, candidate)

/**
 * Builds the workspace service for `root` (resolved against the process cwd when relative). Fails
 * when the root does not exist or is not a directory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("Workspace.make")(function*(root: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const configured = path.resolve(root)
  const realRoot = yield* fs.realPath(configured).pipe(
    Effect.mapError((e) => ToolError.fromPlatform(e, configured))
  )
  const info = yield* fs.stat(realRoot).pipe(Effect.mapError((e) => ToolError.fromPlatform(e, realRoot)))
  if (info.type !== "Directory") {
    return yield* Effect.fail(ToolError.make("NOT_A_DIRECTORY", `workspace root is not a directory: ${realRoot}`))
  }

  const display = (absolute: string): string => {
    const rel = path.relative(realRoot, absolute)
    return rel === "" ? "." : rel.split(path.sep).join("/")
  }

  const outside = (input: string, detail: string) =>
    Effect.fail(
      ToolError.make(
        "OUTSIDE_WORKSPACE",
        `access denied: ${JSON.stringify(input)} ${detail} the workspace root ${realRoot}`
      )
    )

  const realOfDeepestExisting = (absolute: string): Effect.Effect<string> =>
    Effect.gen(function*() {
      let current = absolute
      const tail: Array<string> = []
      for (;;) {
        const real = yield* Effect.option(fs.realPath(current))
        if (real._tag === "Some") {
          return tail.length === 0 ? real.value : path.join(real.value, ...tail.reverse())
        }
        const parent = path.dirname(current)
        if (parent === current) return absolute
        tail.push(path.basename(current))
        current = parent
      }
    })

  const resolve = (input: string): Effect.Effect<ResolvedPath, ToolError.BuiltinToolError> =>
    Effect.gen(function*() {
      if (input.includes("\0")) {
        return yield* Effect.fail(ToolError.make("INVALID_ARGS", "path contains a NUL character"))
      }
      const lexical = path.isAbsolute(input) ? path.resolve(input) : path.resolve(realRoot, input)
      let rebased: string
      if (isInside(path, realRoot, lexical)) rebased = lexical
      else if (isInside(path, configured, lexical)) rebased = path.join(realRoot, path.relative(configured, lexical))
      else return yield* outside(input, "is outside")
      const real = yield* realOfDeepestExisting(rebased)
      if (!isInside(path, realRoot, real)) {
        return yield* outside(input, `resolves through a symbolic link to ${real}, outside`)
      }
      return { absolute: real, relative: display(real) }
    })

  return Workspace.of({ root: realRoot, resolve, display })
})

/**
 * The workspace layer for `root`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (root: string): Layer.Layer<Workspace, ToolError.BuiltinToolError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(Workspace, make(root))
