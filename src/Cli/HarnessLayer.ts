/**
 * The CLI's composition root: the ONE place that chooses concrete Layers. From a resolved
 * {@link Setup} it builds everything an agent needs: the `Llm` service with the chosen adapter
 * registered, the session store over the chosen durable backend (JSONL by default, SQLite on
 * request), the tool runtime with the built-in tools, the settings files (permission rules and
 * command hooks, `settings/`, `hooks/`), the approval prompt and the workspace context plugin, and
 * the agent factory.
 *
 * Before any of it is built, the workspace is checked (`settings/HomeWorkspace`: not `/`, not
 * containing the home directory) and its own configuration is approved or left out
 * (`settings/WorkspaceTrust`), so no project hook, grant or MCP server takes effect unasked.
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import type * as FileSystem from "effect/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CheckpointInstall from "../Checkpoint/Install.js"
import * as Anthropic from "../Adapter/Anthropic.js"
import * as OpenAiCompatible from "../Adapter/OpenAiCompatible.js"
import * as Scripted from "../Adapter/Scripted.js"
import * as Llm from "../Llm/Llm.js"
import type { LlmAdapter } from "../Llm/LlmAdapter.js"
import * as Agent from "../Loop/Agent.js"
import * as Hooks from "../Loop/Hooks.js"
import * as SystemPrompt from "../Loop/SystemPrompt.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as DataDir from "../Session/persistence/DataDir.js"
import * as Jsonl from "../Session/persistence/Jsonl.js"
import * as Sqlite from "../Session/persistence/Sqlite.js"
import * as SessionStore from "../Session/SessionStore.js"
import { CliError } from "./CliError.js"
import * as DemoModel from "./DemoModel.js"
import * as McpCli from "./commands/Mcp.js"
import { ExitCode } from "./ExitCode.js"
import * as ProviderChoice from "./ProviderChoice.js"
import * as ScriptErrors from "./ScriptErrors.js"
import * as Bridge from "./hooks/Bridge.js"
import * as AgentSessions from "./settings/AgentSessions.js"
import * as HomeWorkspace from "./settings/HomeWorkspace.js"
import * as Permissions from "./settings/Permissions.js"
import * as Settings from "./settings/Settings.js"
import type * as SettingsFile from "./settings/SettingsFile.js"
import * as WorkspaceTrust from "./settings/WorkspaceTrust.js"
import * as TerminalText from "./TerminalText.js"
import * as Approval from "./tools/Approval.js"
import * as BuiltinTools from "./tools/index.js"
import type * as Sandbox from "./tools/internal/Sandbox.js"
import * as Workspace from "./tools/Workspace.js"
import * as WorkspaceContext from "./WorkspaceContext.js"

/**
 * Everything the composition depends on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Setup {
  readonly choice: ProviderChoice.Choice
  /** absolute workspace root */
  readonly cwd: string
  readonly store: "jsonl" | "sqlite"
  /** sessions root (JSONL) or database file (SQLite); default per-user data directory */
  readonly storePath?: string | undefined
  readonly approval: Approval.Mode
  /** answers `ask` decisions when `approval` is `"ask"` */
  readonly prompt?: Approval.Prompt | undefined
  /** the bash sandbox policy (default: sandboxed, no network) */
  readonly sandbox?: Sandbox.Policy | undefined
  /** typewriter delay of the offline demo (none in tests) */
  readonly demoChunkDelay?: Duration.Input | undefined
  /** MCP configuration files named with `--mcp-config` (the workspace's `.mcp.json` is always read) */
  readonly mcpConfig?: ReadonlyArray<string> | undefined
  /** `--permission-mode` (else the settings' `defaultMode`, else `default`) */
  readonly permissionMode?: SettingsFile.PermissionMode | undefined
  /** `--settings FILE` */
  readonly settingsFile?: string | undefined
  /** `--no-hooks` */
  readonly noHooks?: boolean | undefined
  /** `--allowed-tools` / `--disallowed-tools` rules (origin `cli`), added to the settings' rules */
  readonly cliRules?: ReadonlyArray<Settings.RuleEntry> | undefined
  /** how the workspace's own configuration is approved (default `skip`) */
  readonly workspaceTrust?: WorkspaceTrust.Mode | undefined
  /** asks the start-up questions (workspace configuration, a home workspace) in an interactive session */
  readonly consentPrompt?: WorkspaceTrust.Ask | undefined
  /** `--allow-home-workspace` */
  readonly allowHomeWorkspace?: boolean | undefined
}

/**
 * The services the CLI commands use.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | Agent.AgentFactory
  | SessionStore.SessionStore
  | Llm.Llm
  | ToolRuntime.ToolRuntime
  | NodeServices.NodeServices

const usage = (message: string) => new CliError({ message, exitCode: ExitCode.Usage })

/**
 * Maps the error of building a layer (Effect 4 has no `Layer.mapError`); the layer's own
 * memoization is kept (it is built through the same memo map).
 *
 * @since 0.1.0
 * @category utils
 */
export const mapLayerError = <E, E2>(f: (e: E) => E2) => <A, R>(self: Layer.Layer<A, E, R>): Layer.Layer<A, E2, R> =>
  Layer.fromBuild((memoMap, scope) => Effect.mapError(Layer.buildWithMemoMap(self, memoMap, scope), f))

const adapterOf = (choice: ProviderChoice.Choice, setup: Setup) =>
  Effect.gen(function*() {
    switch (choice._tag) {
      case "Scripted": {
        if (choice.scriptFile === undefined) {
          return (yield* Scripted.make(DemoModel.script(), {
            provider: DemoModel.provider,
            name: "Offline demo",
            model: choice.model,
            ...(setup.demoChunkDelay === undefined ? {} : { chunkDelay: setup.demoChunkDelay })
          })).adapter
        }
        const file = choice.scriptFile
        const text = choice.scriptText
        // the text read once by ProviderChoice (a pipe cannot be read again); without it, the
        // loader reads the file and says why it cannot
        const loaded = yield* (text === undefined ? Scripted.load(file) : Scripted.fromJson(text)).pipe(
          Effect.catchTag("ScriptError", (e) =>
            Effect.flatMap(
              text === undefined ? ScriptErrors.fromFile(file) : Effect.succeed(ScriptErrors.describe(file, text)),
              (line) => Effect.fail(usage(line ?? e.message))
            )),
          Effect.mapError((e) => e._tag === "CliError" ? e : usage(`cannot read script ${file}: ${e.message}`))
        )
        return (yield* Scripted.make(loaded.script, { ...loaded.options, provider: DemoModel.provider })).adapter
      }
      case "Remote": {
        const apiKey = choice.apiKey
        const made: Effect.Effect<LlmAdapter, unknown, never> = choice.provider === "anthropic"
          ? apiKey === undefined
            ? Effect.fail("ANTHROPIC_API_KEY is not set")
            : Anthropic.make({ apiKey, baseUrl: choice.baseUrl })
          // no client provided: the adapter uses its own undici client (DefaultHttpClient)
          : OpenAiCompatible.make(ProviderChoice.adapterOptions(choice))
        return yield* Effect.mapError(made, (e) => usage(`invalid provider configuration: ${String(e)}`))
      }
    }
  })

/**
 * The provider route the agent must use for a choice.
 *
 * @since 0.1.0
 * @category utils
 */
export const routeOf = (choice: ProviderChoice.Choice): string =>
  choice._tag === "Scripted" ? DemoModel.provider : choice.route

/**
 * Builds the whole harness for a setup. The build is `Layer.fresh`: Effect 4 memoizes layers
 * across nested `Effect.provide` calls, and the stateful services here (the adapter registry, the
 * hooks, the session store and its backend, the tool runtime, the agent factory) must never be
 * shared with another harness provided around or beside this one.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (setup: Setup): Layer.Layer<Services, CliError> =>
  Layer.fresh(Layer.unwrap(Effect.gen(function*() {
    const notice = (line: string) =>
      Effect.sync(() => void process.stderr.write(TerminalText.forStream(process.stderr)(`effect-harness: ${line}\n`)))
    const ask = setup.workspaceTrust === "ask" ? setup.consentPrompt : undefined
    yield* HomeWorkspace.check({ cwd: setup.cwd, allow: setup.allowHomeWorkspace === true, ask })
    const at = yield* Settings.locations(setup.cwd, setup.settingsFile)
    const files = yield* Settings.read(at).pipe(Effect.mapError((e) => usage(`invalid settings: ${e.message}`)))
    const home = yield* DataDir.harnessHome.pipe(Effect.mapError((e) => usage(`cannot find the harness home: ${e.message}`)))
    const review = yield* WorkspaceTrust.review(at, files)
    const trusted = yield* WorkspaceTrust.decide({ home, review, mode: setup.workspaceTrust ?? "skip", ask, notice })
    const applied = WorkspaceTrust.apply(files, trusted)
    const loaded = Settings.merge(applied.files)
    const settings: Settings.Loaded = {
      ...loaded,
      rules: [...loaded.rules, ...(setup.cliRules ?? [])],
      warnings: [...loaded.warnings, ...applied.warnings]
    }
    for (const w of settings.warnings) yield* notice(w)
    return compose(setup, settings, {
      trusted,
      // the user's own "always for this project" answer keeps an approved workspace approved
      onProjectWrite: trusted ? WorkspaceTrust.rerecord(at, home, notice) : Effect.void,
      home,
      notice
    })
  })).pipe(Layer.provideMerge(NodeServices.layer)))

const terminalWidth = (): number => {
  const columns = process.stderr.columns
  return columns !== undefined && columns > 0 ? columns : 80
}

const compose = (
  setup: Setup,
  settings: Settings.Loaded,
  workspace: {
    readonly trusted: boolean
    readonly onProjectWrite: Effect.Effect<void, never, FileSystem.FileSystem>
    readonly home: string
    readonly notice: (line: string) => Effect.Effect<void>
  }
) => {
  const persistence = setup.store === "sqlite"
    ? Sqlite.layer(setup.storePath === undefined ? {} : { filename: setup.storePath })
    : Jsonl.layer(setup.storePath === undefined ? {} : { root: setup.storePath })
  const store = SessionStore.layer.pipe(
    Layer.provideMerge(persistence.pipe(mapLayerError((e) =>
      new CliError({
        message: `cannot open the session store: ${e.message}`,
        exitCode: e._tag === "SessionError" ? ExitCode.Session : ExitCode.Usage
      })
    )))
  )
  const llm = Layer.effectDiscard(
    Effect.gen(function*() {
      const adapter = yield* adapterOf(setup.choice, setup)
      yield* Llm.register(adapter.providers, adapter).pipe(Effect.mapError((e) => usage(e.message)))
    })
  ).pipe(Layer.provideMerge(Llm.layer))
  const permissionMode = setup.permissionMode ?? settings.defaultMode ?? "default"
  const permissions = Permissions.layer({
    cwd: setup.cwd,
    settings,
    mode: setup.permissionMode,
    approval: setup.approval,
    onProjectWrite: workspace.onProjectWrite,
    // a hard ask (protected configuration, an unknowable command) needs a person at a prompt
    canAsk: setup.prompt !== undefined
  })
  const approvalService = setup.prompt === undefined
    ? Layer.empty
    : Approval.layer(setup.prompt, { width: terminalWidth }).pipe(Layer.provide(permissions))
  const workspaceLayer = Workspace.layer(setup.cwd).pipe(
    mapLayerError((e) => usage(`invalid workspace ${setup.cwd}: ${e.message}`))
  )
  const tools = ToolRuntime.layer({}).pipe(
    mapLayerError((e) => usage(e.message)),
    Layer.provide(approvalService)
  )
  const plugins = Layer.mergeAll(
    BuiltinTools.layer(setup.sandbox === undefined ? {} : { sandbox: setup.sandbox }).pipe(
      mapLayerError((e) => usage(e.message)),
      Layer.provide(Permissions.readFilter.pipe(Layer.provide(permissions))),
      // every workspace change of write, edit and bash is journaled for rewind (issue 33)
      Layer.provide(CheckpointInstall.layer({
        root: setup.cwd,
        home: workspace.home,
        exclude: setup.storePath === undefined ? [] : [setup.storePath]
      }, workspace.notice))
    ),
    // the bridge first: its pre-execute hands a hook's updatedInput to the permission rules
    Layer.effectDiscard(Effect.andThen(
      setup.noHooks === true ? Effect.void : Bridge.install({ cwd: setup.cwd, settings, permissionMode }),
      Permissions.install
    )).pipe(Layer.provide(Layer.merge(AgentSessions.layer, permissions))),
    WorkspaceContext.layer({ maxBytes: WorkspaceContext.DEFAULT_MAX_BYTES, cwd: setup.cwd }),
    McpCli.layer({
      cwd: setup.cwd,
      explicitFiles: setup.mcpConfig ?? [],
      approval: setup.approval,
      workspaceTrusted: workspace.trusted
    })
  )
  const base = Layer.mergeAll(tools, Hooks.layer, SystemPrompt.layer, store, llm)
  const factory = Agent.layer.pipe(Layer.provideMerge(Layer.provideMerge(plugins, base)))
  return factory.pipe(Layer.provide(workspaceLayer))
}
