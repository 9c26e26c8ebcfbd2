/**
 * The MCP servers of a workspace, as a coding agent runs them: configuration from
 * `<workspace>/.mcp.json` (approved once per workspace and server, see {@link McpSetup}) and from explicit
 * files (trusted), approval, connection, and their tools in the tool runtime.
 *
 * Project servers start only when the workspace's configuration is approved (`workspaceTrusted`); that
 * approval is recorded per server. Deadlines come from the environment as in Claude Code: `MCP_TIMEOUT`
 * (connect, ms, default 30000) and `MCP_TOOL_TIMEOUT` (per call, ms, default 300000). A stdio server inherits
 * only a safe part of the environment (the SDK's default list plus locale and temp-dir variables), never the
 * provider API keys; the rest goes in its `env`. Notices (a server left out, unavailable) go to the host's
 * `notice`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/sdk/client/stdio.js"
import { identity } from "../Adapter/HttpEdge.js"
import type * as Hooks from "../Loop/Hooks.js"
import type * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as DataDir from "../Session/persistence/DataDir.js"
import * as Mcp from "./Mcp.js"
import type * as McpApproval from "./McpApproval.js"
import type * as McpConfig from "./McpConfig.js"
import * as McpSetup from "./McpSetup.js"

/**
 * What the servers of a workspace need from the host.
 *
 * @since 0.1.0
 * @category models
 */
export interface Setup {
  readonly cwd: string
  /** configuration files named by the host (`--mcp-config`); the workspace's `.mcp.json` is always read */
  readonly explicitFiles: ReadonlyArray<string>
  /** the tool approval mode (MCP calls) */
  readonly approval: McpApproval.Mode
  readonly prompt?: McpSetup.Prompt | undefined
  /** the workspace's configuration is approved: its `.mcp.json` servers may start */
  readonly workspaceTrusted: boolean
  /** says one line to the user (a server left out or unavailable) */
  readonly notice: (line: string) => Effect.Effect<void>
}

const envMs = (name: string): number | undefined => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return undefined
  const n = Number(raw)
  return Number.isFinite(n) && n > 0 ? n : undefined
}

/**
 * The environment a stdio server inherits: the SDK's safe default list (`HOME`, `LOGNAME`, `PATH`,
 * `SHELL`, `TERM`, `USER` on POSIX) plus locale and temp-dir variables; never the provider API keys.
 * Anything else a server needs goes in its `env` (with `${VAR}` expansion).
 */
const inheritedEnv = (): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const key of [...DEFAULT_INHERITED_ENV_VARS, "LANG", "LC_ALL", "TMPDIR", "TEMP", "TMP"]) {
    const value = process.env[key]
    if (value !== undefined && !value.startsWith("()")) out[key] = value
  }
  return out
}

/**
 * Reads and approves the configuration (`record`: remember the approval of the servers that may start).
 *
 * @since 0.1.0
 * @category constructors
 */
export const plan = (
  setup: Omit<Setup, "notice">,
  trust: McpSetup.Trust,
  record = false
): Effect.Effect<McpSetup.Plan, McpConfig.McpConfigError | Config.ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const home = yield* DataDir.harnessHome
    return yield* McpSetup.load({
      cwd: setup.cwd,
      home,
      env: process.env,
      explicitFiles: setup.explicitFiles,
      trust,
      record,
      ...(setup.prompt === undefined ? {} : { prompt: setup.prompt })
    })
  })

/**
 * The servers of a plan, connected, their tools registered.
 *
 * @since 0.1.0
 * @category layers
 */
export const serversLayer = (
  p: McpSetup.Plan,
  setup: Pick<Setup, "cwd" | "approval" | "notice">
): Layer.Layer<Mcp.McpServers, never, ToolRuntime.ToolRuntime | Hooks.LoopHooks> => {
  const connectTimeoutMs = envMs("MCP_TIMEOUT")
  const callTimeoutMs = envMs("MCP_TOOL_TIMEOUT")
  return Mcp.layer({
    servers: McpSetup.ready(p),
    baseEnv: inheritedEnv(),
    cwd: setup.cwd,
    clientInfo: { name: "effect-harness", version: identity.version },
    approval: setup.approval,
    onNotice: setup.notice,
    ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
    ...(callTimeoutMs === undefined ? {} : { callTimeoutMs })
  })
}

/**
 * The MCP servers of an agent's workspace: configuration, approval, connection, tools in the runtime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  setup: Setup
): Layer.Layer<
  Mcp.McpServers,
  McpConfig.McpConfigError | Config.ConfigError,
  ToolRuntime.ToolRuntime | Hooks.LoopHooks | FileSystem.FileSystem
> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const p = yield* plan(setup, setup.workspaceTrusted ? "yes" : "none", setup.workspaceTrusted)
      for (const n of p.notices) yield* setup.notice(n)
      return serversLayer(p, setup)
    })
  )
