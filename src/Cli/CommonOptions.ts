/**
 * Options shared by `harness run` and `harness chat`, and how they turn into a {@link Setup} and a
 * session choice.
 *
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ModelCatalog from "../Llm/ModelCatalog.js"
import * as NodePath from "node:path"
import type * as Agent from "../Loop/Agent.js"
import * as SessionStore from "../Session/SessionStore.js"
import { CliError } from "./CliError.js"
import { mcpConfigOption } from "./commands/Mcp.js"
import { ExitCode } from "./ExitCode.js"
import * as ProviderChoice from "./ProviderChoice.js"
import type * as Sandbox from "./tools/internal/Sandbox.js"
import * as SettingsFile from "./settings/SettingsFile.js"

/**
 * The shared options.
 *
 * @since 0.1.0
 * @category options
 */
export const options = {
  provider: Options.choice("provider", ProviderChoice.providers).pipe(
    Options.withDescription("model provider (default: from the API key in the environment, else the offline demo)"),
    Options.optional
  ),
  model: Options.text("model").pipe(Options.withDescription("model id"), Options.optional),
  baseUrl: Options.text("base-url").pipe(
    Options.withDescription("provider base URL, overrides the default (required by openai-compatible and azure)"),
    Options.optional
  ),
  script: Options.text("script").pipe(
    Options.withDescription("JSON script for --provider scripted (see Adapter/Scripted)"),
    Options.optional
  ),
  resume: Options.text("resume").pipe(Options.withDescription("resume the session with this id"), Options.optional),
  continue: Options.boolean("continue").pipe(
    Options.withAlias("c"),
    Options.withDescription("continue the most recent session of this directory")
  ),
  cwd: Options.text("cwd").pipe(Options.withDescription("workspace root (default: current directory)"), Options.optional),
  store: Options.choice("store", ["jsonl", "sqlite"] as const).pipe(
    Options.withDescription("session storage backend"),
    Options.withDefault("jsonl" as const)
  ),
  maxSteps: Options.integer("max-steps").pipe(
    Options.withDescription("end a turn after this many model steps (a runaway tool loop stops; the next prompt continues)"),
    Options.optional
  ),
  contextWindow: Options.integer("context-window").pipe(
    Options.withDescription("the model's context window in tokens (overrides the built-in model catalog)"),
    Options.optional
  ),
  yes: Options.boolean("yes").pipe(
    Options.withAlias("y"),
    Options.withDescription("answer yes to every approval question (deny rules and plan mode still apply)")
  ),
  mcpConfig: mcpConfigOption,
  noSandbox: Options.boolean("no-sandbox").pipe(
    Options.withDescription("run bash commands without the bubblewrap sandbox (see docs/security.md)")
  ),
  allowNetwork: Options.boolean("allow-network").pipe(
    Options.withDescription("let sandboxed bash commands use the network")
  ),
  verbose: Options.boolean("verbose").pipe(
    Options.withDescription("detailed diagnostics on stderr (timestamps, annotations, full causes, debug lines)")
  ),
  permissionMode: Options.choice("permission-mode", SettingsFile.permissionModes).pipe(
    Options.withDescription("default | acceptEdits | plan (read-only tools only) | bypassPermissions"),
    Options.optional
  ),
  settings: Options.text("settings").pipe(
    Options.withDescription("an extra settings file (hooks, permissions), read after the others"),
    Options.optional
  ),
  noHooks: Options.boolean("no-hooks").pipe(Options.withDescription("run no command hooks from the settings files"))
}

/**
 * The parsed shared options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Common {
  readonly provider: Option.Option<ProviderChoice.ProviderName>
  readonly model: Option.Option<string>
  readonly baseUrl: Option.Option<string>
  readonly script: Option.Option<string>
  readonly resume: Option.Option<string>
  readonly continue: boolean
  readonly cwd: Option.Option<string>
  readonly store: "jsonl" | "sqlite"
  readonly maxSteps: Option.Option<number>
  readonly contextWindow: Option.Option<number>
  readonly yes: boolean
  readonly mcpConfig?: ReadonlyArray<string>
  readonly noSandbox?: boolean
  readonly allowNetwork?: boolean
  readonly verbose: boolean
  readonly permissionMode: Option.Option<SettingsFile.PermissionMode>
  readonly settings: Option.Option<string>
  readonly noHooks: boolean
}

/**
 * The settings-related part of a {@link HarnessLayer.Setup} from the shared options.
 *
 * @since 0.1.0
 * @category utils
 */
export const settingsOf = (common: Common): {
  readonly permissionMode: SettingsFile.PermissionMode | undefined
  readonly settingsFile: string | undefined
  readonly noHooks: boolean
} => ({
  permissionMode: Option.getOrUndefined(common.permissionMode),
  settingsFile: Option.getOrUndefined(common.settings),
  noHooks: common.noHooks
})

/**
 * The bash sandbox policy of the flags (`--no-sandbox`, `--allow-network`).
 *
 * @since 0.1.0
 * @category utils
 */
export const sandboxOf = (common: Common): Sandbox.Policy => ({
  enabled: common.noSandbox !== true,
  allowNetwork: common.allowNetwork === true
})

/**
 * The agent options the shared flags set: compaction always on (K-15; `--context-window`
 * overrides the catalog) and the per-turn step budget (`--max-steps`).
 *
 * @since 0.1.0
 * @category utils
 */
export const agentLimits = (common: Common): {
  readonly compaction: { readonly contextWindow?: number }
  readonly maxSteps?: number
} => ({
  compaction: Option.match(common.contextWindow, { onNone: () => ({}), onSome: (contextWindow) => ({ contextWindow }) }),
  ...Option.match(common.maxSteps, { onNone: () => ({}), onSome: (maxSteps) => ({ maxSteps }) })
})

/**
 * The absolute workspace root.
 *
 * @since 0.1.0
 * @category utils
 */
export const cwdOf = (common: Common): string => NodePath.resolve(Option.getOrElse(common.cwd, () => process.cwd()))

/**
 * The session the agent runs over: `--resume <id>`, `--continue` (latest stored session whose
 * header cwd is this workspace; a new one when there is none), else a new session.
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionChoice = (
  common: Common,
  cwd: string
): Effect.Effect<Agent.SessionChoice, CliError, SessionStore.SessionStore> =>
  Effect.gen(function*() {
    if (Option.isSome(common.resume)) {
      if (common.continue) {
        return yield* new CliError({ message: "use either --resume or --continue, not both", exitCode: ExitCode.Usage })
      }
      return { _tag: "Resume", id: common.resume.value } as const
    }
    if (common.continue) {
      const store = yield* SessionStore.SessionStore
      const stored = yield* store.stored().pipe(
        Effect.mapError((e) => new CliError({ message: `cannot list sessions: ${e.message}`, exitCode: ExitCode.Session }))
      )
      const latest = stored
        .filter((s) => s.header.cwd === cwd)
        .sort((a, b) => b.updatedAt - a.updatedAt)[0]
      if (latest !== undefined) return { _tag: "Resume", id: latest.header.id } as const
    }
    return { _tag: "New", cwd } as const
  })

/**
 * Turns a session error at agent creation into a CLI error.
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionFailure = (error: { readonly message: string; readonly code?: string }): CliError =>
  new CliError({
    message: error.code === "SESSION_NOT_FOUND" ? `session not found: ${error.message}` : error.message,
    exitCode: ExitCode.Session
  })

/**
 * The model facts the status line uses (K-15): the built-in catalog entry, with the window of
 * `--context-window` when given.
 *
 * @since 0.1.0
 * @category utils
 */
export const modelFacts = (common: Common, provider: string, model: string): ModelCatalog.ModelFacts => {
  const found = ModelCatalog.builtIn.find((e) => e.provider === provider && e.model === model)
  const facts: ModelCatalog.ModelFacts = found ?? {
    contextWindow: ModelCatalog.DEFAULT_CONTEXT_WINDOW,
    maxOutputTokens: ModelCatalog.DEFAULT_MAX_OUTPUT_TOKENS
  }
  return Option.match(common.contextWindow, { onNone: () => facts, onSome: (contextWindow) => ({ ...facts, contextWindow }) })
}
