/**
 * The CLI's composition root: the ONE place that chooses concrete Layers. From a resolved
 * {@link Setup} it builds the library's coding agent (`CodingAgent/CodingAgent`: tools, permission
 * rules, approval, command hooks, MCP, workspace context, compaction) with the chosen adapter (a
 * remote provider, a script file or the offline demo), the chosen durable backend (JSONL by default,
 * SQLite on request), the terminal's approval prompt, notices on stderr, and the CLI's exit codes
 * for whatever cannot be built.
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Anthropic from "../Adapter/Anthropic.js"
import * as OpenAiCompatible from "../Adapter/OpenAiCompatible.js"
import * as Scripted from "../Adapter/Scripted.js"
import * as CodingAgent from "../CodingAgent/CodingAgent.js"
import type * as Llm from "../Llm/Llm.js"
import * as LlmAdapter from "../Llm/LlmAdapter.js"
import type * as Agent from "../Loop/Agent.js"
import type * as ToolRuntime from "../Loop/ToolRuntime.js"
import type * as LoopApproval from "../Loop/Approval.js"
import type * as Approval from "../Policy/Approval.js"
import * as Jsonl from "../Session/persistence/Jsonl.js"
import * as Sqlite from "../Session/persistence/Sqlite.js"
import * as SessionStore from "../Session/SessionStore.js"
import * as TerminalText from "../Tools/TerminalText.js"
import type * as Settings from "../Workspace/Settings.js"
import { CliError } from "./CliError.js"
import * as DemoModel from "./DemoModel.js"
import { ExitCode } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as ProviderChoice from "./ProviderChoice.js"
import * as ScriptErrors from "./ScriptErrors.js"

/**
 * Everything the composition depends on: the provider choice and store, plus the coding agent's own options
 * as the flags set them (`--permission-mode`, `--settings`, `--no-hooks`, `--mcp-config`,
 * `--allow-home-workspace`, `--trust-workspace`, the sandbox flags; `prompt` and `consentPrompt` when a
 * person is at a terminal).
 *
 * @since 0.1.0
 * @category models
 */
export interface Setup extends
  Pick<
    CodingAgent.Options,
    | "prompt"
    | "sandbox"
    | "mcpConfig"
    | "permissionMode"
    | "settingsFile"
    | "noHooks"
    | "workspaceTrust"
    | "consentPrompt"
    | "allowHomeWorkspace"
  >
{
  readonly choice: ProviderChoice.Choice
  /** absolute workspace root */
  readonly cwd: string
  readonly store: "jsonl" | "sqlite"
  /** sessions root (JSONL) or database file (SQLite); default per-user data directory */
  readonly storePath?: string | undefined
  readonly approval: Approval.Mode
  /** typewriter delay of the offline demo (none in tests) */
  readonly demoChunkDelay?: Duration.Input | undefined
  /** `--allowed-tools` / `--disallowed-tools` rules (origin `cli`), added to the settings' rules */
  readonly cliRules?: ReadonlyArray<Settings.RuleEntry> | undefined
  /** answers `ask` decisions itself, in place of `prompt` (e.g. an editor over ACP, `harness acp`) */
  readonly approver?: LoopApproval.Service["ask"] | undefined
  /** `--cache-ttl`: the Anthropic prompt-cache TTL (default 5 minutes) */
  readonly cacheTtl?: "5m" | "1h" | undefined
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
        const made: Effect.Effect<LlmAdapter.LlmAdapter, unknown, never> = choice.provider === "anthropic"
          ? apiKey === undefined
            ? Effect.fail("ANTHROPIC_API_KEY is not set")
            : Anthropic.make({ apiKey, baseUrl: choice.baseUrl, promptCache: { ttl: setup.cacheTtl ?? "5m" } })
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

const notice = (line: string) =>
  Effect.sync(() => void process.stderr.write(TerminalText.forStream(process.stderr)(`effect-harness: ${line}\n`)))

const terminalWidth = (): number => {
  const columns = process.stderr.columns
  return columns !== undefined && columns > 0 ? columns : 80
}

const persistenceOf = (setup: Pick<Setup, "store" | "storePath">) =>
  (setup.store === "sqlite"
    ? Sqlite.layer(setup.storePath === undefined ? {} : { filename: setup.storePath })
    : Jsonl.layer(setup.storePath === undefined ? {} : { root: setup.storePath })).pipe(mapLayerError((e) =>
      new CliError({
        message: `cannot open the session store: ${e.message}`,
        exitCode: e._tag === "SessionError" ? ExitCode.Session : ExitCode.Usage
      })
    ))

/**
 * The session store over the setup's backend (JSONL or SQLite), alone: what a command reads a stored
 * session with before it builds the harness (DEC-16).
 *
 * @since 0.1.0
 * @category layers
 */
export const storeLayer = (setup: Pick<Setup, "store" | "storePath">) =>
  SessionStore.layer.pipe(Layer.provideMerge(persistenceOf(setup)))

/** The CLI's words for a coding agent that cannot be built. */
const buildFailure = (cwd: string) => (e: CodingAgent.BuildError | CliError): CliError => {
  switch (e._tag) {
    case "CliError":
      return e
    case "SettingsError":
      return usage(`invalid settings: ${e.message}`)
    case "ConfigError":
      return usage(`cannot find the harness home: ${e.message}`)
    case "BuiltinToolError":
      return usage(`invalid workspace ${cwd}: ${e.message}`)
    default:
      return usage(e.message)
  }
}

/**
 * Builds the whole harness for a setup: the library's coding agent (`CodingAgent.layer`) with the
 * chosen adapter and store, the terminal's approval prompt and notices on stderr. The build is
 * `Layer.fresh` (see `CodingAgent.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (setup: Setup): Layer.Layer<Services, CliError> =>
  CodingAgent.layer({
    adapter: Layer.effect(LlmAdapter.Adapter, adapterOf(setup.choice, setup)).pipe(Layer.provide(NodeServices.layer)),
    provider: routeOf(setup.choice),
    model: setup.choice.model,
    cwd: setup.cwd,
    persistence: persistenceOf(setup),
    approval: setup.approval,
    prompt: setup.prompt,
    approver: setup.approver,
    // a session store inside the workspace is never journaled for rewind
    checkpointExclude: setup.storePath === undefined ? [] : [setup.storePath],
    promptWidth: terminalWidth,
    sandbox: setup.sandbox,
    mcpConfig: setup.mcpConfig,
    permissionMode: setup.permissionMode,
    settingsFile: setup.settingsFile,
    noHooks: setup.noHooks,
    rules: setup.cliRules,
    workspaceTrust: setup.workspaceTrust,
    consentPrompt: setup.consentPrompt,
    allowHomeWorkspace: setup.allowHomeWorkspace,
    notice,
    // the MCP client's lines name their server and carry no prefix
    mcpNotice: (line) => Effect.sync(() => Output.terminalSinks.stderr(`${line}\n`))
  }).pipe(mapLayerError(buildFailure(setup.cwd)))
