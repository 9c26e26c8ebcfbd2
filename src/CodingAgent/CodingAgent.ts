/**
 * The coding agent the `harness` CLI runs, as one Layer: the built-in tools (`read`, `write`, `edit`, `ls`,
 * `glob`, `grep`, `bash` in its sandbox) confined to the workspace, the settings files' permission rules and
 * modes with approval, the Claude-Code-compatible command hooks, the workspace's MCP servers, workspace
 * context (AGENTS.md / CLAUDE.md) and compaction, over a durable session store.
 *
 * ```ts
 * const agentLayer = CodingAgent.layer({ adapter: OpenAiCompatible.layerConfig("deepseek"), model: "deepseek-chat", cwd })
 * const answer = yield* Effect.flatMap(CodingAgent.make(), (agent) => agent.prompt("What does src/index.ts export?"))
 * ```
 *
 * Swapping the model is one line (`adapter: Scripted.layer(script)` for a scripted, keyless one). The host's
 * concerns are options with headless defaults: `approval` (`"deny"`: nobody is there to ask, so a call that
 * needs a person is refused with a reason the model reads), `prompt` (answers approval questions),
 * `workspaceTrust` (`"skip"`: the workspace's own hooks, grants and MCP servers are left out until approved)
 * and `notice` (one line to the user; default a warning log, `Tools/Notice`).
 *
 * Before anything is built, the workspace is checked (`Workspace/HomeWorkspace`: not `/`, not containing the
 * home directory) and its own configuration is approved or left out (`Workspace/WorkspaceTrust`). The build is
 * `Layer.fresh`: the stateful services here (the adapter registry, the hooks, the session store, the tool
 * runtime, the agent factory) are never shared with another agent layer provided around or beside this one.
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as CheckpointInstall from "../Checkpoint/Install.js"
import * as Hooks from "../Hooks/Bridge.js"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as Llm from "../Llm/Llm.js"
import type * as LlmAdapter from "../Llm/LlmAdapter.js"
import type { RegistryError } from "../Llm/LlmError.js"
import * as Agent from "../Loop/Agent.js"
import * as LoopApproval from "../Loop/Approval.js"
import type { AgentError } from "../Loop/AgentControl.js"
import * as LoopHooks from "../Loop/Hooks.js"
import * as SystemPrompt from "../Loop/SystemPrompt.js"
import type * as ToolRegistry from "../Loop/ToolRegistry.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import type * as McpConfig from "../Mcp/McpConfig.js"
import * as WorkspaceServers from "../Mcp/WorkspaceServers.js"
import * as Approval from "../Policy/Approval.js"
import * as Permissions from "../Policy/Permissions.js"
import * as DataDir from "../Session/persistence/DataDir.js"
import * as Jsonl from "../Session/persistence/Jsonl.js"
import type * as SessionPersistence from "../Session/SessionPersistence.js"
import * as SessionStore from "../Session/SessionStore.js"
import * as BuiltinTools from "../Tools/BuiltinTools.js"
import type * as Sandbox from "../Tools/Sandbox.js"
import * as Notice from "../Tools/Notice.js"
import type * as ToolError from "../Tools/ToolError.js"
import * as Workspace from "../Tools/Workspace.js"
import * as AgentSessions from "../Workspace/AgentSessions.js"
import * as HomeWorkspace from "../Workspace/HomeWorkspace.js"
import * as Settings from "../Workspace/Settings.js"
import type * as SettingsFile from "../Workspace/SettingsFile.js"
import * as WorkspaceContext from "../Workspace/WorkspaceContext.js"
import * as WorkspaceTrust from "../Workspace/WorkspaceTrust.js"

/**
 * What the coding agent is made of. Only `adapter`, `model` and `cwd` are required.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<AE = never, PE = never> {
  /** the model adapter, e.g. `OpenAiCompatible.layerConfig("deepseek")`, `Anthropic.layer(…)`, `Scripted.layer(script)` */
  readonly adapter: Layer.Layer<LlmAdapter.Adapter, AE>
  /** the default model of {@link make} */
  readonly model: string
  /** the default provider route of {@link make} (default: the adapter's first provider) */
  readonly provider?: string | undefined
  /** absolute workspace root: the tools are confined to it, its settings and context files are read */
  readonly cwd: string
  /** the session store's backend (default JSONL under the per-user data directory) */
  readonly persistence?: Layer.Layer<SessionPersistence.SessionPersistence, PE> | undefined
  /** how a call that needs a person is resolved: `auto` allows, `ask` asks `prompt`, `deny` refuses (default) */
  readonly approval?: Approval.Mode | undefined
  /** answers approval questions when `approval` is `"ask"` */
  readonly prompt?: Approval.Prompt | undefined
  /** answers approval questions itself, in place of `prompt` (e.g. an editor over ACP) */
  readonly approver?: LoopApproval.Service["ask"] | undefined
  /** the terminal width approval questions are wrapped to (default 80) */
  readonly promptWidth?: (() => number) | undefined
  /** the bash sandbox policy (default: sandboxed, no network) */
  readonly sandbox?: Sandbox.Policy | undefined
  /** MCP configuration files besides the workspace's `.mcp.json` (trusted) */
  readonly mcpConfig?: ReadonlyArray<string> | undefined
  /** the permission mode (else the settings' `defaultMode`, else `default`) */
  readonly permissionMode?: SettingsFile.PermissionMode | undefined
  /** one more settings file, read last */
  readonly settingsFile?: string | undefined
  /** leave the settings' command hooks out */
  readonly noHooks?: boolean | undefined
  /** permission rules added to the settings' rules (e.g. origin `cli`) */
  readonly rules?: ReadonlyArray<Settings.RuleEntry> | undefined
  /** how the workspace's own configuration is approved (default `skip`: left out unless approved before) */
  readonly workspaceTrust?: WorkspaceTrust.Mode | undefined
  /** asks the start-up questions (workspace configuration, a home workspace) when `workspaceTrust` is `ask` */
  readonly consentPrompt?: WorkspaceTrust.Ask | undefined
  /** accept a workspace that is `/` or contains the home directory */
  readonly allowHomeWorkspace?: boolean | undefined
  /** paths the rewind journal never records (e.g. a session store inside the workspace) */
  readonly checkpointExclude?: ReadonlyArray<string> | undefined
  /** says one line to the user (default: a warning log) */
  readonly notice?: Notice.Say | undefined
  /** says one line about an MCP server (default: `notice`) */
  readonly mcpNotice?: Notice.Say | undefined
}

/**
 * Why the coding agent could not be built (besides the adapter's and the backend's own errors).
 *
 * @since 0.1.0
 * @category errors
 */
export type BuildError =
  | HomeWorkspaceError
  | SettingsFile.SettingsError
  | Config.ConfigError
  | McpConfig.McpConfigError
  | RegistryError
  | ToolError.BuiltinToolError
  | ToolRegistry.DuplicateToolError
  | ToolRuntime.ToolConfigError

type HomeWorkspaceError = HomeWorkspace.HomeWorkspaceError

/**
 * A coding agent over one session: the loop's {@link Agent.Agent} and `prompt`, which sends a text and waits
 * for the turn to settle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handle {
  readonly agent: Agent.Agent
  /** sends the prompt, waits until the agent is idle and returns the text of the last assistant message */
  readonly prompt: (content: string | ReadonlyArray<ContentBlock.ContentBlock>) => Effect.Effect<string, AgentError>
}

/**
 * Makes agents with the layer's route and workspace.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly provider: string
  readonly model: string
  readonly cwd: string
  /** an agent over a new session in the workspace (or `options.session`), with the default route unless overridden */
  readonly make: (options?: Agent.AgentOptions) => Effect.Effect<Handle, Agent.CreateError, Scope.Scope>
}

/**
 * The coding agent tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class CodingAgent extends Context.Service<CodingAgent, Service>()("effect-harness/CodingAgent") {}

/**
 * Everything the layer provides: the agent maker, and the loop's services for hosts that use them directly.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | CodingAgent
  | Agent.AgentFactory
  | SessionStore.SessionStore
  | Llm.Llm
  | ToolRuntime.ToolRuntime
  | NodeServices.NodeServices

/**
 * An agent from the {@link CodingAgent} in context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const make = (options?: Agent.AgentOptions): Effect.Effect<Handle, Agent.CreateError, CodingAgent | Scope.Scope> =>
  Effect.flatMap(CodingAgent, (service) => service.make(options))

const lastText = (agent: Agent.Agent, from: number) =>
  Effect.map(Effect.orElseSucceed(agent.session.events, () => []), (events) => {
    const messages = events.slice(from).flatMap((e) => e.type === "assistant/message" ? [e.data.content] : [])
    const last = messages[messages.length - 1]
    return last === undefined ? "" : ContentBlock.flattenText(last)
  })

const handleOf = (agent: Agent.Agent): Handle => ({
  agent,
  prompt: (content) =>
    Effect.gen(function*() {
      const from = (yield* Effect.orElseSucceed(agent.session.events, () => [])).length
      yield* agent.send(typeof content === "string" ? [ContentBlock.text(content)] : content)
      yield* agent.whenIdle
      return yield* lastText(agent, from)
    })
})

interface Loaded {
  readonly settings: Settings.Loaded
  readonly trusted: boolean
  readonly onProjectWrite: Effect.Effect<void, never, FileSystem.FileSystem>
  readonly home: string
}

/** The workspace check, the settings files and the workspace's approval (before anything is built). */
const load = <AE, PE>(options: Options<AE, PE>, notice: Notice.Say) =>
  Effect.gen(function*() {
    const ask = options.workspaceTrust === "ask" ? options.consentPrompt : undefined
    yield* HomeWorkspace.check({ cwd: options.cwd, allow: options.allowHomeWorkspace === true, ask })
    const at = yield* Settings.locations(options.cwd, options.settingsFile)
    const files = yield* Settings.read(at)
    const home = yield* DataDir.harnessHome
    const review = yield* WorkspaceTrust.review(at, files)
    const trusted = yield* WorkspaceTrust.decide({ home, review, mode: options.workspaceTrust ?? "skip", ask, notice })
    const applied = WorkspaceTrust.apply(files, trusted)
    const loaded = Settings.merge(applied.files)
    const settings: Settings.Loaded = {
      ...loaded,
      rules: [...loaded.rules, ...(options.rules ?? [])],
      warnings: [...loaded.warnings, ...applied.warnings]
    }
    for (const w of settings.warnings) yield* notice(w)
    return {
      settings,
      trusted,
      // the user's own "always for this project" answer keeps an approved workspace approved
      onProjectWrite: trusted ? WorkspaceTrust.rerecord(at, home, notice) : Effect.void,
      home
    } satisfies Loaded
  })

/** The agent maker over the factory, with the default route. */
const service = (options: Options<unknown, unknown>) =>
  Layer.effect(
    CodingAgent,
    Effect.gen(function*() {
      const factory = yield* Agent.AgentFactory
      const llm = yield* Llm.Llm
      const provider = options.provider ?? (yield* llm.listProviders)[0]?.id ?? "unknown"
      return CodingAgent.of({
        provider,
        model: options.model,
        cwd: options.cwd,
        make: (agentOptions) =>
          Effect.map(
            factory.make({
              provider,
              model: options.model,
              session: { _tag: "New", cwd: options.cwd },
              ...agentOptions
            }),
            handleOf
          )
      })
    })
  )

/** The services over the loaded settings. */
const compose = <AE, PE>(options: Options<AE, PE>, loaded: Loaded, notice: Notice.Say) => {
  const persistence: Layer.Layer<SessionPersistence.SessionPersistence, PE | Config.ConfigError> = options.persistence ??
    Jsonl.layer()
  const store = SessionStore.layer.pipe(Layer.provideMerge(persistence))
  const llm = Llm.registerAdapter.pipe(Layer.provide(options.adapter), Layer.provideMerge(Llm.layer))
  const permissions = Permissions.layer({
    cwd: options.cwd,
    settings: loaded.settings,
    mode: options.permissionMode,
    approval: options.approval ?? "deny",
    onProjectWrite: loaded.onProjectWrite,
    // a hard ask (protected configuration, an unknowable command) needs a person at a prompt
    canAsk: options.prompt !== undefined || options.approver !== undefined
  })
  const approval = options.approver !== undefined
    ? LoopApproval.layer(options.approver)
    : options.prompt === undefined
    ? Layer.empty
    : Approval.layer(options.prompt, options.promptWidth === undefined ? {} : { width: options.promptWidth }).pipe(
      Layer.provide(permissions)
    )
  const tools = ToolRuntime.layer({}).pipe(Layer.provide(approval))
  const permissionMode = options.permissionMode ?? loaded.settings.defaultMode ?? "default"
  const plugins = Layer.mergeAll(
    BuiltinTools.layer(options.sandbox === undefined ? {} : { sandbox: options.sandbox }).pipe(
      Layer.provide(Permissions.readFilter.pipe(Layer.provide(permissions))),
      // every workspace change of write, edit and bash is journaled for rewind (issue 33)
      Layer.provide(CheckpointInstall.layer({
        root: options.cwd,
        home: loaded.home,
        exclude: options.checkpointExclude ?? []
      }, notice))
    ),
    // the bridge first: its pre-execute hands a hook's updatedInput to the permission rules
    Layer.effectDiscard(Effect.andThen(
      options.noHooks === true ? Effect.void : Hooks.install({ cwd: options.cwd, settings: loaded.settings, permissionMode }),
      Permissions.install
    )).pipe(Layer.provide(Layer.merge(AgentSessions.layer, permissions))),
    WorkspaceContext.layer({ maxBytes: WorkspaceContext.DEFAULT_MAX_BYTES, cwd: options.cwd }),
    WorkspaceServers.layer({
      cwd: options.cwd,
      explicitFiles: options.mcpConfig ?? [],
      approval: options.approval ?? "deny",
      workspaceTrusted: loaded.trusted,
      notice: options.mcpNotice ?? options.notice ?? Notice.Notice.defaultValue()
    })
  )
  const base = Layer.mergeAll(tools, LoopHooks.layer, SystemPrompt.layer, store, llm)
  const factory = Agent.layer.pipe(Layer.provideMerge(Layer.provideMerge(plugins, base)))
  return service(options).pipe(Layer.provideMerge(factory), Layer.provide(Workspace.layer(options.cwd)))
}

/**
 * The coding agent as a Layer (see the module doc).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <AE = never, PE = never>(options: Options<AE, PE>): Layer.Layer<Services, BuildError | AE | PE> => {
  const notice = options.notice ?? Notice.Notice.defaultValue()
  return Layer.fresh(Layer.unwrap(Effect.map(load(options, notice), (loaded) => compose(options, loaded, notice)))).pipe(
    Layer.provide(Notice.layer(notice)),
    Layer.provideMerge(NodeServices.layer)
  )
}
