/**
 * A workspace that is `/` or contains the user's home directory (`$HOME`, or the home of the
 * passwd entry when it differs) puts keys, shell start-up files and every other project within
 * the model's reach. Such a workspace is refused at start-up unless the user confirms it (an
 * interactive y/N) or passes `--allow-home-workspace`; without a terminal and without the flag the
 * check fails with {@link HomeWorkspaceError} (the CLI prints its one line and exits 2).
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type * as WorkspaceTrust from "./WorkspaceTrust.js"

/**
 * The flag that accepts such a workspace.
 *
 * @since 0.1.0
 * @category constants
 */
export const FLAG = "--allow-home-workspace"

/**
 * The workspace is `/` or contains a home directory and was not accepted.
 *
 * @since 0.1.0
 * @category errors
 */
export class HomeWorkspaceError extends Schema.TaggedError<HomeWorkspaceError>()("HomeWorkspaceError", {
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "HOME_WORKSPACE" as const
}

/**
 * Why the workspace is refused (pure): it is `/`, or one of `homes` is the workspace or lies
 * inside it; `undefined` when it is fine. Paths are absolute and real.
 *
 * @since 0.1.0
 * @category utils
 */
export const problem = (cwd: string, homes: ReadonlyArray<string>): string | undefined => {
  if (cwd === NodePath.parse(cwd).root) return `the workspace ${cwd} is the whole file system`
  for (const home of homes) {
    if (home === NodePath.parse(home).root) continue
    const rel = NodePath.relative(cwd, home)
    if (rel === "") return `the workspace ${cwd} is your home directory`
    if (!rel.startsWith("..") && !NodePath.isAbsolute(rel)) return `the workspace ${cwd} contains your home directory ${home}`
  }
  return undefined
}

const passwdHome = (): string | undefined => {
  try {
    const home = NodeOs.userInfo().homedir
    return home === "" ? undefined : home
  } catch {
    // no passwd entry for this uid (some containers): `$HOME` is all there is
    return undefined
  }
}

/**
 * Refuses a workspace that is `/` or contains a home directory, unless `allow` or the user
 * confirms through `ask`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (options: {
  readonly cwd: string
  readonly allow: boolean
  readonly ask?: WorkspaceTrust.Ask | undefined
}): Effect.Effect<void, HomeWorkspaceError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (options.allow) return
    const fs = yield* FileSystem.FileSystem
    const real = (p: string) => fs.realPath(p).pipe(Effect.orElseSucceed(() => NodePath.resolve(p)))
    const env = yield* Config.option(Config.String("HOME")).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    const passwd = passwdHome()
    const candidates = [...Option.toArray(Option.filter(env, (h) => h !== "")), ...(passwd === undefined ? [] : [passwd])]
    const homes = yield* Effect.forEach(candidates, real)
    const found = problem(yield* real(options.cwd), homes)
    if (found === undefined) return
    if (options.ask !== undefined) {
      const answer = yield* options.ask(
        `Warning: ${found}: the agent's tools could read and change everything under it (keys, shell start-up files, other projects). Use it as the workspace?`
      ).pipe(Effect.orElseSucceed(() => undefined))
      if (answer === true) return
    }
    return yield* new HomeWorkspaceError({
      message: `error: ${found}; choose a project directory with --cwd, or pass ${FLAG} to use it anyway`
    })
  })
