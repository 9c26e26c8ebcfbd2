/**
 * Options shared by `harness run` and `harness chat`, and how they turn into a {@link Setup} and a
 * session choice.
 *
 * @since 0.1.0
 */
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as ModelCatalog from "../Llm/ModelCatalog.js"
import * as NodePath from "node:path"
import type * as Agent from "../Loop/Agent.js"
import type { SessionError } from "../Session/SessionError.js"
import * as SessionStore from "../Session/SessionStore.js"
import { CliError } from "./CliError.js"
import * as CommandDoc from "./CommandDoc.js"
import { mcpConfigOption } from "./commands/Mcp.js"
import { ExitCode } from "./ExitCode.js"
import * as Persona from "./Persona.js"
import * as ProviderChoice from "./ProviderChoice.js"
import * as SessionIds from "./sessions/SessionIds.js"
import * as UserErrors from "./sessions/UserErrors.js"
import type * as Sandbox from "../Tools/Sandbox.js"
import * as PermissionRule from "../Policy/PermissionRule.js"
import type * as Settings from "../Workspace/Settings.js"
import type * as WorkspaceTrust from "../Workspace/WorkspaceTrust.js"
import type * as Approval from "../Policy/Approval.js"
import * as SettingsFile from "../Workspace/SettingsFile.js"

/**
 * The shared options.
 *
 * @since 0.1.0
 * @category options
 */
export const options = {
  provider: Flag.Literals("provider", ProviderChoice.providers).pipe(
    Flag.withDescription(
      "model provider (default: the settings' \"provider\", else from the API key in the environment, else the offline demo)"
    ),
    CommandDoc.fromSettings(Config.Literals(ProviderChoice.providers, "provider")),
    Flag.optional
  ),
  model: Flag.String("model").pipe(
    Flag.withDescription("model id (default: the settings' \"model\", else the provider's default; see harness models)"),
    CommandDoc.fromSettings(Config.NonEmptyString("model")),
    Flag.optional
  ),
  baseUrl: Flag.String("base-url").pipe(
    Flag.withDescription("provider base URL, overrides the default (required by openai-compatible and azure)"),
    Flag.optional
  ),
  apiKeyEnv: Flag.String("api-key-env").pipe(
    Flag.withDescription(
      "read the provider's API key from this environment variable (openai-compatible reads OPENAI_COMPATIBLE_API_KEY; OPENAI_API_KEY goes to api.openai.com only unless named here)"
    ),
    Flag.optional
  ),
  script: Flag.String("script").pipe(
    Flag.withDescription("JSON script for --provider scripted (see Adapter/Scripted)"),
    Flag.optional
  ),
  resume: Flag.String("resume").pipe(Flag.withDescription("resume the session with this id"), Flag.optional),
  continue: CommandDoc.boolean("continue").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("continue the most recent session of this directory")
  ),
  cwd: Flag.String("cwd").pipe(Flag.withDescription("workspace root (default: current directory)"), Flag.optional),
  store: Flag.Literals("store", ["jsonl", "sqlite"] as const).pipe(
    Flag.withDescription("session storage backend (default: the settings' \"store\", else jsonl)"),
    CommandDoc.fromSettings(Config.Literals(["jsonl", "sqlite"] as const, "store")),
    Flag.withDefault("jsonl" as const)
  ),
  systemPrompt: Flag.String("system-prompt").pipe(
    Flag.withDescription("replace the built-in coding persona with this text (project instructions still apply)"),
    Flag.optional
  ),
  appendSystemPrompt: Flag.String("append-system-prompt").pipe(
    Flag.withDescription("add this text at the end of the system prompt"),
    Flag.optional
  ),
  allowedTools: Flag.String("allowed-tools").pipe(
    Flag.withDescription(
      "permission rules to allow without asking, comma or space separated (e.g. \"Read,Bash(git status)\"); repeatable"
    ),
    Flag.atLeast(0)
  ),
  disallowedTools: Flag.String("disallowed-tools").pipe(
    Flag.withDescription("permission rules to deny (e.g. \"Bash,Edit(src/**)\"); repeatable; wins over every allow"),
    Flag.atLeast(0)
  ),
  maxSteps: Flag.Int("max-steps").pipe(
    Flag.withDescription("end a turn after this many model steps (a runaway tool loop stops; the next prompt continues)"),
    Flag.optional
  ),
  maxOutputBytes: Flag.Int("max-output-bytes").pipe(
    Flag.withDescription(
      "cut a model step that streams more than this many bytes (default 8388608, 8 MiB); the turn fails OUTPUT_LIMIT"
    ),
    Flag.optional
  ),
  contextWindow: Flag.Int("context-window").pipe(
    Flag.withDescription("the model's context window in tokens (overrides the built-in model catalog)"),
    Flag.optional
  ),
  cacheTtl: Flag.Literals("cache-ttl", ["5m", "1h"] as const).pipe(
    Flag.withDescription("Anthropic prompt-cache lifetime: 5m (default) or 1h (cache writes cost 2x input instead of 1.25x)"),
    Flag.optional
  ),
  yes: CommandDoc.boolean("yes").pipe(
    Flag.withAlias("y"),
    Flag.withDescription("answer yes to every approval question (deny rules and plan mode still apply)")
  ),
  mcpConfig: mcpConfigOption,
  noSandbox: CommandDoc.boolean("no-sandbox").pipe(
    Flag.withDescription("run bash commands without the bubblewrap sandbox (see docs/security.md)")
  ),
  allowNetwork: CommandDoc.boolean("allow-network").pipe(
    Flag.withDescription("let sandboxed bash commands use the network")
  ),
  verbose: CommandDoc.boolean("verbose").pipe(
    Flag.withDescription("detailed diagnostics on stderr (timestamps, annotations, full causes, debug lines)")
  ),
  permissionMode: Flag.Literals("permission-mode", SettingsFile.permissionModes).pipe(
    Flag.withDescription("default | acceptEdits | plan (read-only tools only) | bypassPermissions"),
    Flag.optional
  ),
  settings: Flag.String("settings").pipe(
    Flag.withDescription("an extra settings file (hooks, permissions), read after the others"),
    Flag.optional
  ),
  noHooks: CommandDoc.boolean("no-hooks").pipe(Flag.withDescription("run no command hooks from the settings files")),
  trustWorkspace: CommandDoc.boolean("trust-workspace").pipe(
    Flag.withDescription(
      "approve this workspace's own configuration (its hooks, allow rules, permission mode and .mcp.json servers) and remember it until it changes; --yes never does"
    )
  ),
  allowHomeWorkspace: CommandDoc.boolean("allow-home-workspace").pipe(
    Flag.withDescription("accept a workspace that is / or contains your home directory (refused otherwise)")
  )
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
  readonly apiKeyEnv?: Option.Option<string>
  readonly script: Option.Option<string>
  readonly resume: Option.Option<string>
  readonly continue: boolean
  readonly cwd: Option.Option<string>
  readonly store: "jsonl" | "sqlite"
  readonly systemPrompt?: Option.Option<string>
  readonly appendSystemPrompt?: Option.Option<string>
  readonly allowedTools?: ReadonlyArray<string>
  readonly disallowedTools?: ReadonlyArray<string>
  readonly maxSteps: Option.Option<number>
  readonly maxOutputBytes?: Option.Option<number>
  readonly contextWindow: Option.Option<number>
  readonly cacheTtl?: Option.Option<"5m" | "1h">
  readonly yes: boolean
  readonly mcpConfig?: ReadonlyArray<string>
  readonly noSandbox?: boolean
  readonly allowNetwork?: boolean
  readonly verbose: boolean
  readonly permissionMode: Option.Option<SettingsFile.PermissionMode>
  readonly settings: Option.Option<string>
  readonly noHooks: boolean
  readonly trustWorkspace?: boolean
  readonly allowHomeWorkspace?: boolean
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
  readonly cliRules: ReadonlyArray<Settings.RuleEntry>
  readonly allowHomeWorkspace: boolean
  readonly cacheTtl: "5m" | "1h" | undefined
} => ({
  permissionMode: Option.getOrUndefined(common.permissionMode),
  settingsFile: Option.getOrUndefined(common.settings),
  noHooks: common.noHooks,
  cliRules: cliRules(common),
  allowHomeWorkspace: common.allowHomeWorkspace === true,
  cacheTtl: Option.getOrUndefined(common.cacheTtl ?? Option.none())
})

/**
 * How the workspace's own configuration is approved in this session: `--trust-workspace`, else
 * asked when the session is interactive, else left out with one line (`--yes` plays no part).
 *
 * @since 0.1.0
 * @category utils
 */
export const workspaceTrustOf = (common: Common, interactive: boolean): WorkspaceTrust.Mode =>
  common.trustWorkspace === true ? "flag" : interactive ? "ask" : "skip"

/**
 * A yes/no question through an approval prompt (only an explicit yes counts).
 *
 * @since 0.1.0
 * @category utils
 */
export const yesNo = (prompt: Approval.Prompt): WorkspaceTrust.Ask => (question) =>
  Effect.map(prompt(question), (answer) => (answer === undefined ? undefined : answer === true))

/**
 * Splits a `--allowed-tools` / `--disallowed-tools` value into rules: on commas and whitespace
 * outside parentheses (so `Bash(git log:*)` stays one rule).
 *
 * @since 0.1.0
 * @category utils
 */
export const splitRules = (value: string): ReadonlyArray<string> => {
  const rules: Array<string> = []
  let depth = 0
  let current = ""
  for (const c of value) {
    if (c === "(") depth++
    else if (c === ")") depth = Math.max(0, depth - 1)
    if (depth === 0 && (c === "," || /\s/.test(c))) {
      if (current !== "") rules.push(current)
      current = ""
    } else {
      current += c
    }
  }
  if (current !== "") rules.push(current)
  return rules
}

/**
 * The permission rules of `--allowed-tools` (allow) and `--disallowed-tools` (deny), with origin
 * `cli`; they join the settings files' rules in the permission engine (deny wins, as always).
 *
 * @since 0.1.0
 * @category utils
 */
export const cliRules = (common: Common): ReadonlyArray<Settings.RuleEntry> => [
  ...(common.allowedTools ?? []).flatMap(splitRules).map((text) => ({ kind: "allow" as const, text, origin: "cli" })),
  ...(common.disallowedTools ?? []).flatMap(splitRules).map((text) => ({ kind: "deny" as const, text, origin: "cli" }))
]

/**
 * Checks the shared flags that @effect/cli cannot: every `--allowed-tools` / `--disallowed-tools`
 * rule parses, `--system-prompt` / `--append-system-prompt` are not blank when given.
 *
 * @since 0.1.0
 * @category utils
 */
export const validate = (common: Common): Effect.Effect<void, CliError> => {
  for (const rule of cliRules(common)) {
    if (PermissionRule.parse(rule.text) === undefined) {
      const flag = rule.kind === "allow" ? "--allowed-tools" : "--disallowed-tools"
      return Effect.fail(
        new CliError({ message: `error: ${flag}: "${rule.text}" is not a tool rule (e.g. Read, Bash(git status), Edit(src/**))`, exitCode: ExitCode.Usage })
      )
    }
  }
  if (common.appendSystemPrompt !== undefined && Option.isSome(common.appendSystemPrompt) && common.appendSystemPrompt.value.trim() === "") {
    return Effect.fail(new CliError({ message: "error: --append-system-prompt is empty", exitCode: ExitCode.Usage }))
  }
  return Effect.void
}

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
 * overrides the catalog), the per-turn step budget (`--max-steps`), the cap of one step's output
 * (`--max-output-bytes`) and the system prompt
 * (`--system-prompt` replaces the persona, `--append-system-prompt` adds a last section).
 *
 * The user's texts reach the prompt as variable values, never as templates, so a `{{` in them is
 * kept literally (L-33 does not re-scan substituted values).
 *
 * @since 0.1.0
 * @category utils
 */
export const agentLimits = (common: Common): {
  readonly compaction: { readonly contextWindow?: number }
  readonly maxSteps?: number
  readonly maxOutputBytes?: number
  readonly systemPrompt: Agent.SystemPromptOptions
} => ({
  compaction: Option.match(common.contextWindow, { onNone: () => ({}), onSome: (contextWindow) => ({ contextWindow }) }),
  ...Option.match(common.maxSteps, { onNone: () => ({}), onSome: (maxSteps) => ({ maxSteps }) }),
  ...Option.match(common.maxOutputBytes ?? Option.none(), {
    onNone: () => ({}),
    onSome: (maxOutputBytes) => ({ maxOutputBytes })
  }),
  systemPrompt: systemPromptOf(common)
})

/**
 * The system prompt options of the flags (the built-in persona unless `--system-prompt`).
 *
 * @since 0.1.0
 * @category utils
 */
export const systemPromptOf = (common: Common): Agent.SystemPromptOptions => {
  const replaced = Option.getOrUndefined(common.systemPrompt ?? Option.none())
  const appended = Option.getOrUndefined(common.appendSystemPrompt ?? Option.none())
  return {
    persona: replaced === undefined ? Persona.persona : replaced.trim() === "" ? "" : "{{cli_system_prompt}}",
    ...(appended === undefined ? {} : {
      sections: [{ name: "cli-append", order: 1_000, text: "{{cli_append_system_prompt}}" }]
    }),
    variables: {
      ...(replaced === undefined || replaced.trim() === "" ? {} : { cli_system_prompt: () => replaced }),
      ...(appended === undefined ? {} : { cli_append_system_prompt: () => appended })
    }
  }
}

/**
 * The absolute workspace root.
 *
 * @since 0.1.0
 * @category utils
 */
export const cwdOf = (common: Common): string => NodePath.resolve(Option.getOrElse(common.cwd, () => process.cwd()))

/**
 * The session the agent runs over: `--resume <id>` (any unique prefix of a stored id, see
 * `sessions/SessionIds`), `--continue` (latest stored session whose header cwd is this workspace;
 * a new one when there is none), else a new session with a `harness-session-<uuid>` id.
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionChoice = (
  common: Common,
  cwd: string
): Effect.Effect<Agent.SessionChoice, CliError, SessionStore.SessionStore> =>
  Effect.gen(function*() {
    if (Option.isSome(common.resume) && common.continue) {
      return yield* new CliError({ message: "error: use either --resume or --continue, not both", exitCode: ExitCode.Usage })
    }
    if (!common.continue && Option.isNone(common.resume)) return { _tag: "New", cwd, id: SessionIds.make() } as const
    const store = yield* SessionStore.SessionStore
    const stored = yield* store.stored().pipe(Effect.mapError(UserErrors.toCli))
    if (Option.isSome(common.resume)) {
      const matched = SessionIds.match(common.resume.value, stored.map((s) => s.header.id))
      if (Result.isFailure(matched)) return yield* new CliError({ message: `error: ${matched.failure}`, exitCode: ExitCode.Session })
      return { _tag: "Resume", id: matched.success } as const
    }
    const latest = stored
      .filter((s) => s.header.cwd === cwd)
      .sort((a, b) => b.updatedAt - a.updatedAt)[0]
    if (latest !== undefined) return { _tag: "Resume", id: latest.header.id } as const
    return { _tag: "New", cwd, id: SessionIds.make() } as const
  })

/**
 * Turns a session error at agent creation into a CLI error (one line in the user's words, exit 4).
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionFailure = (error: Pick<SessionError, "code" | "message" | "sessionId">): CliError =>
  UserErrors.toCli(error)

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
