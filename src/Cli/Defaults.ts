/**
 * CLI defaults from the layered settings files (`provider`, `model`, `store`, `colour`; see
 * `Workspace/Settings.ts`): command-line flags win, then the last settings file that sets a key,
 * then the built-in default.
 *
 * The defaults are read once before the command line is parsed ({@link load}) and reach the
 * options through Effect's `ConfigProvider` reference ({@link provider}): the shared options fall back to
 * {@link config} when their flag is absent, so `run`, `chat` and `sessions` all honour them without
 * knowing where they come from. The keys live under one namespace no environment variable can
 * spell (`harness.settings`), so the environment never sets them by accident.
 *
 * A settings file that cannot be read or decoded is ignored here: the command that loads the
 * settings for real (`HarnessLayer`) reports it as a usage error.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Settings from "../Workspace/Settings.js"

const NAMESPACE = "harness.settings"

/**
 * The value of `--name VALUE` / `--name=VALUE` among the options of a command line (before `--`).
 *
 * @since 0.1.0
 * @category utils
 */
export const flagValue = (args: ReadonlyArray<string>, name: string): string | undefined => {
  let found: string | undefined
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!
    if (token === "--") break
    if (token === name) found = args[++i]
    else if (token.startsWith(`${name}=`)) found = token.slice(name.length + 1)
  }
  return found
}

/**
 * The defaults the settings files set for a command line (its `--cwd` and `--settings`); none when a
 * file is malformed (reported later by the command that needs the settings).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (
  args: ReadonlyArray<string>
): Effect.Effect<Settings.Defaults, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const cwd = path.resolve(flagValue(args, "--cwd") ?? process.cwd())
    const at = yield* Settings.locations(cwd, flagValue(args, "--settings"))
    const loaded = yield* Settings.load(at).pipe(Effect.orElseSucceed(() => Settings.empty))
    return loaded.defaults ?? {}
  })

// an empty value is a value (Effect 3's providers; Effect 4's treat it as missing by default)
const keepEmpty = { preserveEmptyStrings: true } as const

/**
 * A config provider answering the defaults under their namespace, then the environment. An empty
 * value (`VAR=`) is a value, not an absent one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const provider = (defaults: Settings.Defaults): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromUnknown({ [NAMESPACE]: defaults }, keepEmpty).pipe(
    ConfigProvider.orElse(ConfigProvider.fromEnv(keepEmpty))
  )

/**
 * The config of one default (`provider`, `model`, `store`): an option falls back to it.
 *
 * @since 0.1.0
 * @category utils
 */
export const config = <A>(value: Config.Config<A>): Config.Config<A> => Config.nested(value, NAMESPACE)

/**
 * What the help of an option with a settings-file default says (`replacement`: `Help.presenter`
 * appends it to the flags declared with `CommandDoc.fromSettings`), and the sentence Effect 3's
 * `@effect/cli` generated in its place (`generated`: `effect/cli` adds none; kept for the reference
 * generator).
 *
 * @since 0.1.0
 * @category constants
 */
export const helpSentence = {
  generated: "This option can be set from environment variables.",
  replacement: "A settings file may set the default."
} as const
