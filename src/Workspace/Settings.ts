/**
 * Layered settings (HB-1): every settings file that exists is read and merged. Hooks and permission
 * rules from every file apply; scalar settings (`permissions.defaultMode`, `stopHookLimit` and the
 * CLI defaults `provider`, `model`, `store`, `colour`) are taken from the last file that sets them
 * (command-line flags win over all of them).
 *
 * Files, in merge order (later wins for scalars):
 * 1. `~/.claude/settings.json` (Claude dialect)
 * 2. `<home>/settings.json` (`$EFFECT_HARNESS_HOME`, else `~/.effect-harness`)
 * 3. `.claude/settings.json`, 4. `.claude/settings.local.json` (Claude dialect)
 * 5. `.codex/hooks.json` (Codex dialect)
 * 6. `.effect-harness/settings.json`, 7. `.effect-harness/settings.local.json`
 * 8. `--settings FILE`
 *
 * [DECISION] (0008) the compatibility files come before ours, so our own files win a scalar
 * conflict; rules and hooks are additive anyway.
 *
 * Files 3-7 are the workspace's (`project`): what they may run or grant is decided by
 * `WorkspaceTrust` between {@link read} and {@link merge}.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as NodeOs from "node:os"
import * as SettingsFile from "./SettingsFile.js"

/**
 * One configured command-hook handler (HB-2), flattened.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookEntry {
  /** the event name as configured (`PreToolUse`, …) */
  readonly event: string
  readonly matcher: string | undefined
  readonly command: string
  /** seconds */
  readonly timeout: number | undefined
  readonly onFailure: "continue" | "block"
  readonly dialect: SettingsFile.Dialect
  /** display path of the file */
  readonly file: string
  /** stable id: `<file>#<event>[group].hooks[index]` */
  readonly id: string
  /** from a workspace file (runs with the allowlisted environment, see `Hooks/Bridge`) */
  readonly project?: boolean
}

/**
 * One permission rule with its origin (HB-12).
 *
 * @since 0.1.0
 * @category models
 */
export interface RuleEntry {
  readonly kind: "allow" | "deny" | "ask"
  readonly text: string
  /** display path of the file, or `session` */
  readonly origin: string
}

/**
 * Everything the settings files say.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  /** display paths of the files read, in merge order */
  readonly files: ReadonlyArray<string>
  readonly hooks: ReadonlyArray<HookEntry>
  readonly rules: ReadonlyArray<RuleEntry>
  readonly defaultMode: SettingsFile.PermissionMode | undefined
  readonly stopHookLimit: number | undefined
  /** CLI defaults (`provider`, `model`, `store`, `colour`): the last file that sets each wins */
  readonly defaults?: Defaults
  readonly warnings: ReadonlyArray<string>
}

/**
 * The CLI defaults a settings file may set.
 *
 * @since 0.1.0
 * @category models
 */
export type Defaults = Pick<SettingsFile.Settings, "provider" | "model" | "store" | "colour" | "resume">

/**
 * Nothing configured.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Loaded = { files: [], hooks: [], rules: [], defaultMode: undefined, stopHookLimit: undefined, warnings: [] }

/**
 * A file to read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly path: string
  readonly display: string
  readonly dialect: SettingsFile.Dialect
  /** a workspace file (its hooks, allow rules and mode need the user's approval) */
  readonly project?: boolean
}

/**
 * A file that exists, read and decoded.
 *
 * @since 0.1.0
 * @category models
 */
export interface Read {
  readonly source: Source
  readonly decoded: SettingsFile.Decoded
  /** the file's text as read */
  readonly text: string
}

/**
 * Where to look.
 *
 * @since 0.1.0
 * @category models
 */
export interface Locations {
  /** absolute workspace root */
  readonly cwd: string
  /** the harness home (`$EFFECT_HARNESS_HOME`, else `~/.effect-harness`) */
  readonly home: string
  /** the user's home directory (for `~/.claude`) */
  readonly userHome: string
  /** `--settings FILE` */
  readonly extra?: string | undefined
}

/**
 * The project-local file where "always allow for this project" answers are written.
 *
 * @since 0.1.0
 * @category utils
 */
export const projectLocalFile = (cwd: string): string => `${cwd}/.effect-harness/settings.local.json`

/**
 * The files of {@link Locations}, in merge order.
 *
 * @since 0.1.0
 * @category utils
 */
export const sources = (at: Locations): ReadonlyArray<Source> => {
  const project = (rel: string, dialect: SettingsFile.Dialect): Source => ({
    path: `${at.cwd}/${rel}`,
    display: rel,
    dialect,
    project: true
  })
  return [
    { path: `${at.userHome}/.claude/settings.json`, display: "~/.claude/settings.json", dialect: "claude" },
    { path: `${at.home}/settings.json`, display: `${at.home}/settings.json`, dialect: "harness" },
    project(".claude/settings.json", "claude"),
    project(".claude/settings.local.json", "claude"),
    project(".codex/hooks.json", "codex"),
    project(".effect-harness/settings.json", "harness"),
    project(".effect-harness/settings.local.json", "harness"),
    ...(at.extra === undefined ? [] : [{ path: at.extra, display: at.extra, dialect: "harness" as const }])
  ]
}

/**
 * Merges decoded files (pure), in order.
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge = (
  files: ReadonlyArray<{ readonly source: Source; readonly decoded: SettingsFile.Decoded }>
): Loaded => {
  const hooks: Array<HookEntry> = []
  const rules: Array<RuleEntry> = []
  const warnings: Array<string> = []
  let defaultMode: SettingsFile.PermissionMode | undefined
  let stopHookLimit: number | undefined
  const defaults: { -readonly [K in keyof Defaults]: Defaults[K] } = {}
  for (const { decoded, source } of files) {
    warnings.push(...decoded.warnings)
    const s = decoded.settings
    for (const [event, groups] of Object.entries(s.hooks ?? {})) {
      groups.forEach((group, g) =>
        group.hooks.forEach((handler, h) => {
          if (handler.type !== "command" || handler.command === undefined || handler.command.trim() === "") return
          hooks.push({
            event,
            matcher: group.matcher,
            command: handler.command,
            timeout: handler.timeout,
            onFailure: handler.onFailure ?? "continue",
            dialect: source.dialect,
            file: source.display,
            id: `${source.display}#${event}[${g}].hooks[${h}]`,
            ...(source.project === true ? { project: true } : {})
          })
        })
      )
    }
    for (const kind of ["deny", "ask", "allow"] as const) {
      for (const text of s.permissions?.[kind] ?? []) rules.push({ kind, text, origin: source.display })
    }
    if (s.permissions?.defaultMode !== undefined) defaultMode = s.permissions.defaultMode
    if (s.stopHookLimit !== undefined) stopHookLimit = s.stopHookLimit
    if (s.provider !== undefined) defaults.provider = s.provider
    if (s.model !== undefined) defaults.model = s.model
    if (s.store !== undefined) defaults.store = s.store
    if (s.colour !== undefined) defaults.colour = s.colour
    if (s.resume !== undefined) defaults.resume = { ...defaults.resume, ...s.resume }
  }
  return { files: files.map((f) => f.source.display), hooks, rules, defaultMode, stopHookLimit, defaults, warnings }
}

/**
 * Reads and decodes every file that exists, in merge order. A file that exists but cannot be read
 * or decoded fails with a one-line {@link SettingsFile.SettingsError}; `--settings FILE` must exist.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (
  at: Locations
): Effect.Effect<ReadonlyArray<Read>, SettingsFile.SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const out: Array<Read> = []
    for (const source of sources(at)) {
      const exists = yield* fs.exists(source.path).pipe(Effect.orElseSucceed(() => false))
      if (!exists) {
        if (source.path === at.extra) {
          return yield* new SettingsFile.SettingsError({ file: source.display, message: `${source.display}: no such settings file` })
        }
        continue
      }
      const text = yield* fs.readFileString(source.path).pipe(
        Effect.mapError((e) =>
          new SettingsFile.SettingsError({ file: source.display, message: `${source.display}: cannot read (${e.message})` })
        )
      )
      const decoded = SettingsFile.decode(source.display, text, source.dialect)
      if (Result.isFailure(decoded)) return yield* decoded.failure
      out.push({ source, decoded: decoded.success, text })
    }
    return out
  })

/**
 * Reads and merges every file that exists, as written (no workspace-trust filtering: for the CLI
 * defaults `provider`, `model`, `store`, `colour`, which grant nothing).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (
  at: Locations
): Effect.Effect<Loaded, SettingsFile.SettingsError, FileSystem.FileSystem> => Effect.map(read(at), merge)

/**
 * The default {@link Locations} for a workspace: harness home from `$EFFECT_HARNESS_HOME` (else
 * `~/.effect-harness`), user home from `$HOME` (else the OS home directory).
 *
 * @since 0.1.0
 * @category constructors
 */
export const locations = (cwd: string, extra?: string): Effect.Effect<Locations, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const env = (name: string) => Config.option(Config.String(name)).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    const userHome = Option.getOrElse(Option.filter(yield* env("HOME"), (h) => h !== ""), () => NodeOs.homedir())
    const harnessHome = Option.filter(yield* env("EFFECT_HARNESS_HOME"), (h) => h !== "")
    return {
      cwd,
      userHome,
      home: Option.isSome(harnessHome) ? path.resolve(harnessHome.value) : path.join(userHome, ".effect-harness"),
      extra: extra === undefined ? undefined : path.resolve(cwd, extra)
    }
  })
