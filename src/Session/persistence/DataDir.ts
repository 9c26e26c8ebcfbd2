/**
 * Where durable sessions live by default.
 *
 * The harness home is, in order of precedence:
 * 1. the `EFFECT_HARNESS_HOME` environment variable (read through `Config`, so a test or an
 *    embedder can set it with a `ConfigProvider`);
 * 2. on macOS `~/Library/Application Support/effect-harness`;
 * 3. on Windows `%LOCALAPPDATA%\effect-harness` (else `~\AppData\Local\effect-harness`);
 * 4. elsewhere `$XDG_DATA_HOME/effect-harness` when `XDG_DATA_HOME` is set and absolute, else
 *    `~/.local/share/effect-harness`.
 *
 * [DECISION] `EFFECT_HARNESS_HOME` names the harness home, not the sessions folder: the JSONL
 * backend keeps its sessions in `<home>/sessions/` ({@link sessionsRoot}) and the SQLite backend
 * its database in `<home>/sessions.sqlite` ({@link sqliteFile}). Both backends also take an
 * explicit constructor option (`Jsonl.layer({ root })`, `Sqlite.layer({ filename })`) that wins over
 * all of the above. Nothing is created until the first write; then every directory the harness
 * creates here is `0700` and every file `0600` (the backends, and `PrivateFile` for the approval
 * files, which also tightens an existing home of the user's to `0700`).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as os from "node:os"
import * as path from "node:path"

const optionalAbsolute = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.String(name)).pipe(
    Config.map(Option.filter((value) => value.length > 0 && path.isAbsolute(value)))
  )

/**
 * The per-user harness home directory (see the module doc for the precedence).
 *
 * @since 0.1.0
 * @category constructors
 */
export const harnessHome: Effect.Effect<string, Config.ConfigError> = Effect.gen(function*() {
  const explicit = yield* Config.option(Config.String("EFFECT_HARNESS_HOME"))
  if (Option.isSome(explicit) && explicit.value.length > 0) return path.resolve(explicit.value)
  const home = yield* Effect.sync(() => os.homedir())
  switch (process.platform) {
    case "darwin":
      return path.join(home, "Library", "Application Support", "effect-harness")
    case "win32": {
      const local = yield* optionalAbsolute("LOCALAPPDATA")
      return path.join(Option.getOrElse(local, () => path.join(home, "AppData", "Local")), "effect-harness")
    }
    default: {
      const xdg = yield* optionalAbsolute("XDG_DATA_HOME")
      return path.join(Option.getOrElse(xdg, () => path.join(home, ".local", "share")), "effect-harness")
    }
  }
})

/**
 * The default root of the JSONL backend: `<harness home>/sessions`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sessionsRoot: Effect.Effect<string, Config.ConfigError> = Effect.map(
  harnessHome,
  (home) => path.join(home, "sessions")
)

/**
 * The default database file of the SQLite backend: `<harness home>/sessions.sqlite`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sqliteFile: Effect.Effect<string, Config.ConfigError> = Effect.map(
  harnessHome,
  (home) => path.join(home, "sessions.sqlite")
)
