/**
 * Consent for the workspace's configuration (issue 26). A cloned repository's own files
 * (`.claude/settings.json`, `.claude/settings.local.json`, `.codex/hooks.json`,
 * `.effect-harness/settings.json`, `.effect-harness/settings.local.json`, `.mcp.json`) may name
 * commands that run outside the sandbox (hooks, MCP servers) and grant permissions (allow rules,
 * `defaultMode`). Until the user approves that workspace's configuration:
 * - its hooks are not installed, its allow rules and `defaultMode` are not applied, its MCP servers
 *   are not started (deny and ask rules only restrict: they always apply);
 * - an interactive session asks once, before anything runs, showing every hook command (event,
 *   matcher), MCP server command, allow rule and mode ({@link question});
 * - otherwise one stderr line says what was skipped and names `--trust-workspace`.
 * `--yes` never implies the approval; `--trust-workspace` approves and records it.
 *
 * An approval is recorded in `<harness home>/trusted-workspaces.json` (private, see
 * `Session/persistence/PrivateFile`) under the workspace's real path with a {@link Review}
 * fingerprint: sha256 of the project files' contents and of the workspace files their commands
 * name (`Mcp/WorkspaceScripts`). Any change asks again.
 *
 * [DECISION] `defaultMode: "bypassPermissions"` from a workspace file is ignored with a warning
 * even when approved: only the user's own settings or `--permission-mode` can set it.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import * as McpConfig from "../Mcp/McpConfig.js"
import * as McpSetup from "../Mcp/McpSetup.js"
import * as WorkspaceScripts from "../Mcp/WorkspaceScripts.js"
import * as PrivateFile from "../Session/persistence/PrivateFile.js"
import * as TerminalText from "../Tools/TerminalText.js"
import * as Settings from "./Settings.js"
import type * as SettingsFile from "./SettingsFile.js"

/**
 * The file, under the harness home, that remembers approved workspaces.
 *
 * @since 0.1.0
 * @category constants
 */
export const TRUST_FILE = "trusted-workspaces.json"

/**
 * The flag that approves (and records) the workspace's configuration.
 *
 * @since 0.1.0
 * @category constants
 */
export const FLAG = "--trust-workspace"

/**
 * How an unapproved configuration is treated: `flag` (`--trust-workspace`) approves and records
 * it, `ask` asks the user, `skip` leaves it out with one line.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "flag" | "ask" | "skip"

/**
 * Asks one yes/no question: `true` yes, `false` no, `undefined` no answer.
 *
 * @since 0.1.0
 * @category models
 */
export type Ask = (question: string) => Effect.Effect<boolean | undefined, unknown>

/**
 * What the workspace's configuration would run and grant, and its fingerprint.
 *
 * @since 0.1.0
 * @category models
 */
export interface Review {
  /** the workspace's real path (the key of the record) */
  readonly root: string
  readonly hooks: ReadonlyArray<Settings.HookEntry>
  readonly allow: ReadonlyArray<{ readonly file: string; readonly rule: string }>
  readonly modes: ReadonlyArray<{ readonly file: string; readonly mode: SettingsFile.PermissionMode }>
  readonly servers: ReadonlyArray<{ readonly name: string; readonly command: string }>
  /** the workspace files the hook and server commands name */
  readonly scripts: ReadonlyArray<WorkspaceScripts.Named>
  readonly fingerprint: string
}

const BYPASS = "bypassPermissions"

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * The workspace-relative project files, in merge order (settings files, then `.mcp.json`).
 *
 * @since 0.1.0
 * @category utils
 */
export const projectFiles = (at: Settings.Locations): ReadonlyArray<string> => [
  ...Settings.sources(at).filter((s) => s.project === true).map((s) => s.display),
  McpSetup.PROJECT_FILE
]

/**
 * What the workspace's configuration would run and grant, or `None` when it asks for nothing
 * (no hooks, no allow rules, no mode, no MCP servers).
 *
 * @since 0.1.0
 * @category constructors
 */
export const review = (
  at: Settings.Locations,
  files: ReadonlyArray<Settings.Read>
): Effect.Effect<Option.Option<Review>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const project = files.filter((f) => f.source.project === true)
    const hooks = Settings.merge(project).hooks
    const allow = project.flatMap((f) => (f.decoded.settings.permissions?.allow ?? []).map((rule) => ({ file: f.source.display, rule })))
    const modes = project.flatMap((f) => {
      const mode = f.decoded.settings.permissions?.defaultMode
      return mode === undefined || mode === BYPASS ? [] : [{ file: f.source.display, mode }]
    })
    const entries = yield* McpSetup.projectEntries(at.cwd)
    const servers = entries.map((e) => ({ name: e.name, command: McpConfig.describe(e.config) }))
    if (hooks.length === 0 && allow.length === 0 && modes.length === 0 && servers.length === 0) return Option.none()
    const paths = new Set<string>()
    for (const h of hooks) for (const p of WorkspaceScripts.namedPaths(WorkspaceScripts.shellWords(h.command, at.cwd), at.cwd)) paths.add(p)
    for (const e of entries) for (const p of McpSetup.namedScripts(at.cwd, e)) paths.add(p)
    const scripts = yield* WorkspaceScripts.digest(at.cwd, [...paths].sort())
    const hash = createHash("sha256")
    for (const rel of projectFiles(at)) {
      const text = yield* fs.readFileString(NodePath.join(at.cwd, rel)).pipe(Effect.option)
      hash.update(rel).update("\0").update(Option.getOrElse(text, () => "\u0000absent")).update("\0")
    }
    hash.update(WorkspaceScripts.combined(scripts))
    const root = yield* fs.realPath(at.cwd).pipe(Effect.orElseSucceed(() => at.cwd))
    return Option.some({ root, hooks, allow, modes, servers, scripts, fingerprint: hash.digest("hex") })
  })

/**
 * The approval question: everything the configuration would run and grant, control characters
 * made inert (pure).
 *
 * @since 0.1.0
 * @category utils
 */
export const question = (r: Review): string => {
  const n = TerminalText.neutralize
  const lines = [`The workspace ${n(r.root)} has its own configuration that runs commands outside the sandbox or grants permissions:`]
  for (const h of r.hooks) {
    lines.push(`  hook ${n(h.event)}${h.matcher === undefined ? "" : ` (matcher ${n(h.matcher)})`} from ${h.file}: ${n(h.command)}`)
  }
  for (const s of r.servers) lines.push(`  MCP server "${n(s.name)}" from ${McpSetup.PROJECT_FILE}: ${n(s.command)}`)
  for (const a of r.allow) lines.push(`  allow rule ${n(a.rule)} from ${a.file}`)
  for (const m of r.modes) lines.push(`  permission mode ${m.mode} from ${m.file}`)
  if (r.scripts.length > 0) lines.push(`  (the approval also covers the contents of: ${r.scripts.map((s) => n(s.path)).join(", ")})`)
  lines.push("Trust this workspace's configuration (remembered until it changes)?")
  return lines.join("\n")
}

/**
 * The one line printed when the configuration is left out (pure).
 *
 * @since 0.1.0
 * @category utils
 */
export const skippedLine = (r: Review): string => {
  const parts = [
    ...(r.hooks.length === 0 ? [] : [plural(r.hooks.length, "hook")]),
    ...(r.servers.length === 0 ? [] : [plural(r.servers.length, "MCP server")]),
    ...(r.allow.length === 0 ? [] : [plural(r.allow.length, "allow rule")]),
    ...(r.modes.length === 0 ? [] : [`permission mode ${r.modes[r.modes.length - 1]!.mode}`])
  ]
  return `this workspace's configuration is not approved, so it was skipped (${parts.join(", ")}); ` +
    `run in a terminal to review it, or pass ${FLAG}`
}

interface Stored {
  readonly workspaces: Readonly<Record<string, { readonly fingerprint: string; readonly approvedAt: string }>>
}

const readStore = (file: string, notice: (line: string) => Effect.Effect<void>): Effect.Effect<Stored> =>
  PrivateFile.read(file).pipe(
    Effect.map((text): Stored => {
      if (Option.isNone(text)) return { workspaces: {} }
      try {
        const parsed: unknown = JSON.parse(text.value)
        if (typeof parsed === "object" && parsed !== null && "workspaces" in parsed && typeof parsed.workspaces === "object" && parsed.workspaces !== null) {
          return parsed as Stored
        }
      } catch {
        // a malformed file trusts nothing (and is rewritten on the next approval)
      }
      return { workspaces: {} }
    }),
    Effect.catch((e) => Effect.as(notice(`${e.message}; workspace approvals stored there are ignored`), { workspaces: {} }))
  )

/**
 * Whether the review's fingerprint is recorded for its workspace.
 *
 * @since 0.1.0
 * @category utils
 */
export const isRecorded = (home: string, r: Review, notice: (line: string) => Effect.Effect<void>): Effect.Effect<boolean> =>
  Effect.map(readStore(NodePath.join(home, TRUST_FILE), notice), (s) => s.workspaces[r.root]?.fingerprint === r.fingerprint)

/**
 * Records the review's fingerprint as approved for its workspace.
 *
 * @since 0.1.0
 * @category utils
 */
export const record = (
  home: string,
  r: Review,
  notice: (line: string) => Effect.Effect<void>
): Effect.Effect<void, PrivateFile.PrivateFileError> =>
  Effect.gen(function*() {
    const file = NodePath.join(home, TRUST_FILE)
    const stored = yield* readStore(file, notice)
    const next: Stored = {
      workspaces: { ...stored.workspaces, [r.root]: { fingerprint: r.fingerprint, approvedAt: new Date().toISOString() } }
    }
    yield* PrivateFile.write(file, `${JSON.stringify(next, null, 2)}\n`)
  })

/**
 * Options of {@link decide}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecideOptions {
  readonly home: string
  readonly review: Option.Option<Review>
  readonly mode: Mode
  /** required for `ask` (without it, `ask` behaves as `skip`) */
  readonly ask?: Ask | undefined
  readonly notice: (line: string) => Effect.Effect<void>
}

/**
 * Whether the workspace's configuration may be used in this run: nothing to approve, a recorded
 * approval of the same fingerprint, `--trust-workspace`, or a "yes" now (the last two are
 * recorded; a failure to record is reported and the approval holds for this run).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decide = (options: DecideOptions): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    if (Option.isNone(options.review)) return true
    const r = options.review.value
    if (yield* isRecorded(options.home, r, options.notice)) return true
    const approved = options.mode === "flag"
      ? true
      : options.mode === "ask" && options.ask !== undefined
      ? (yield* options.ask(question(r)).pipe(Effect.orElseSucceed(() => undefined))) === true
      : false
    if (!approved) {
      yield* options.notice(skippedLine(r))
      return false
    }
    yield* record(options.home, r, options.notice).pipe(
      Effect.catch((e) => options.notice(`the workspace approval was not saved (${e.message}); it holds for this run only`))
    )
    return true
  })

/**
 * The files as they apply (pure): a workspace file's `defaultMode: "bypassPermissions"` is dropped
 * (with a warning when the workspace is approved); when the workspace is not approved, its hooks,
 * allow rules and mode are dropped too (deny and ask rules stay).
 *
 * @since 0.1.0
 * @category utils
 */
export const apply = (
  files: ReadonlyArray<Settings.Read>,
  trusted: boolean
): { readonly files: ReadonlyArray<Settings.Read>; readonly warnings: ReadonlyArray<string> } => {
  const warnings: Array<string> = []
  const out = files.map((f): Settings.Read => {
    if (f.source.project !== true) return f
    const s = f.decoded.settings
    const mode = s.permissions?.defaultMode
    // unapproved: everything is left out already, and the skipped line said so
    if (mode === BYPASS && trusted) {
      warnings.push(`${f.source.display}: "defaultMode": "${BYPASS}" is ignored (only your own settings or --permission-mode can set it)`)
    }
    const { allow: _allow, defaultMode: _mode, ...restricting } = s.permissions ?? {}
    const keptMode = trusted && mode !== undefined && mode !== BYPASS ? { defaultMode: mode } : {}
    const keptAllow = trusted && _allow !== undefined ? { allow: _allow } : {}
    const { hooks: _hooks, permissions: _permissions, ...rest } = s
    const settings: SettingsFile.Settings = {
      ...rest,
      ...(trusted && _hooks !== undefined ? { hooks: _hooks } : {}),
      ...(s.permissions === undefined ? {} : { permissions: { ...restricting, ...keptAllow, ...keptMode } })
    }
    return { ...f, decoded: { ...f.decoded, settings } }
  })
  return { files: out, warnings }
}

/**
 * After the harness wrote a project settings file for the user ("always allow for this
 * project"): records the new fingerprint, so the user's own answer does not trigger a question.
 * Call it only when the workspace was approved before the write.
 *
 * @since 0.1.0
 * @category constructors
 */
export const rerecord = (
  at: Settings.Locations,
  home: string,
  notice: (line: string) => Effect.Effect<void>
): Effect.Effect<void, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const files = yield* Settings.read(at).pipe(Effect.orElseSucceed((): ReadonlyArray<Settings.Read> => []))
    const r = yield* review(at, files)
    if (Option.isNone(r)) return
    yield* record(home, r.value, notice).pipe(
      Effect.catch((e) => notice(`the workspace approval was not updated (${e.message})`))
    )
  })
