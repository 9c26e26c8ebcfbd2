/**
 * `harness mcp list` / `harness mcp tools <server>` (the servers an agent runs are `Mcp/WorkspaceServers`).
 *
 * Servers come from `<workspace>/.mcp.json` (approved once per workspace and server, see
 * `Mcp/McpSetup`) and from `--mcp-config FILE` (trusted). In `run` and `chat`, project servers
 * start only when the workspace's configuration is approved (`Workspace/WorkspaceTrust`, which
 * lists them in its question); that approval is stored per server too, so `mcp list` / `mcp
 * tools` start them without `--trust-workspace` until the server's command or the scripts it names change. Deadlines come from the environment as in Claude Code:
 * `MCP_TIMEOUT` (connect, ms, default 30000) and `MCP_TOOL_TIMEOUT` (per call, ms, default
 * 300000). A stdio server inherits only a safe part of the environment (the SDK's default list
 * plus locale and temp-dir variables), never the provider API keys; the rest goes in its `env`. Every diagnostic goes to stderr; `mcp list` and `mcp tools` answer on stdout.
 *
 * `mcp list` connects only the servers that may run (it never asks, and never starts an
 * unapproved project server) and prints one line per configured server: name, transport, status,
 * tool count or reason. `mcp tools <server>` prints one line per tool: the loop name and the
 * description's first line, then the skipped tools with their reasons.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodePath from "node:path"
import * as Hooks from "../../Loop/Hooks.js"
import * as ToolRuntimes from "../../Loop/ToolRuntime.js"
import * as Mcp from "../../Mcp/Mcp.js"
import * as McpSetup from "../../Mcp/McpSetup.js"
import * as ToolListing from "../../Mcp/ToolListing.js"
import * as WorkspaceServers from "../../Mcp/WorkspaceServers.js"
import { CliError } from "../CliError.js"
import * as CommandDoc from "../CommandDoc.js"
import { ExitCode } from "../ExitCode.js"
import * as Output from "../Output.js"

/**
 * The `--mcp-config` option (repeatable).
 *
 * @since 0.1.0
 * @category options
 */
export const mcpConfigOption = Flag.String("mcp-config").pipe(
  Flag.withDescription("load MCP servers from this JSON file (Claude Code's .mcp.json format; repeatable)"),
  Flag.atLeast(0)
)

const stderr = (line: string) => Effect.sync(() => Output.terminalSinks.stderr(`${line}\n`))

const usage = (message: string) => new CliError({ message, exitCode: ExitCode.Usage })

const cwdOption = Flag.String("cwd").pipe(
  Flag.withDescription("workspace root (default: current directory)"),
  Flag.optional
)
// the workspace's consent flag, never `--yes` (issue 26): starting a repository's servers runs its code
const trustOption = CommandDoc.boolean("trust-workspace").pipe(
  Flag.withDescription("include the workspace's own servers that are not approved yet (starts them for this inspection)")
)

const out = (line: string) => Effect.sync(() => Output.terminalSinks.stdout(`${line}\n`))

const inspect = <A>(
  args: { readonly cwd: Option.Option<string>; readonly mcpConfig: ReadonlyArray<string>; readonly trustWorkspace: boolean },
  only: string | undefined,
  body: (p: McpSetup.Plan, mcp: Mcp.Service) => Effect.Effect<A, CliError>
) =>
  Effect.gen(function*() {
    const setup = {
      cwd: NodePath.resolve(Option.getOrElse(args.cwd, () => process.cwd())),
      explicitFiles: args.mcpConfig,
      approval: "deny" as const,
      workspaceTrusted: false,
      notice: stderr
    }
    const all = yield* WorkspaceServers.plan(setup, args.trustWorkspace ? "yes" : "skip").pipe(
      Effect.mapError((e) => usage(e._tag === "McpConfigError" ? e.message : `cannot find the harness home: ${e.message}`))
    )
    const p = only === undefined ? all : { ...all, servers: all.servers.filter((s) => s.entry.name === only) }
    if (only !== undefined && p.servers.length === 0) {
      return yield* new CliError({ message: `no MCP server named "${only}" is configured`, exitCode: ExitCode.Usage })
    }
    const layer = WorkspaceServers.serversLayer(p, setup).pipe(
      Layer.provide(Layer.merge(ToolRuntimes.layerDefault, Hooks.layer))
    )
    return yield* Effect.flatMap(Mcp.McpServers, (mcp) => body(p, mcp)).pipe(Effect.provide(layer))
  })

const pad = (rows: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<string> => {
  const widths: Array<number> = []
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  "))
}

const kindOf = (entry: { readonly config: { readonly type?: string } }): string =>
  entry.config.type === "http" || entry.config.type === "sse" ? entry.config.type : "stdio"

const list = Command.make(
  "list",
  { cwd: cwdOption, mcpConfig: mcpConfigOption, trustWorkspace: trustOption },
  (args) =>
    inspect(args, undefined, (p, mcp) =>
      Effect.gen(function*() {
        if (p.servers.length === 0) return yield* out("no MCP servers configured")
        const offered = yield* mcp.offered
        const rows = p.servers.map((s): ReadonlyArray<string> => {
          const kind = kindOf(s.entry)
          if (s._tag === "Skipped") return [s.entry.name, kind, "skipped", s.reason]
          const o = offered.find((x) => x.name === s.entry.name)
          if (o === undefined) return [s.entry.name, kind, "unknown", ""]
          return o.status === "connected"
            ? [o.name, kind, "connected", `${o.tools.length} tool${o.tools.length === 1 ? "" : "s"}`]
            : [o.name, kind, o.status, o.error ?? ""]
        })
        for (const line of pad(rows)) yield* out(line)
      }))
).pipe(Command.withDescription("list the configured MCP servers with their status and tool count"))

const tools = Command.make(
  "tools",
  {
    cwd: cwdOption,
    mcpConfig: mcpConfigOption,
    trustWorkspace: trustOption,
    server: Argument.String("server").pipe(Argument.withDescription("the server's name in the configuration"))
  },
  (args) =>
    inspect(args, args.server, (p, mcp) =>
      Effect.gen(function*() {
        const planned = p.servers[0]
        if (planned === undefined || planned._tag === "Skipped") {
          return yield* new CliError({
            message: `MCP server "${args.server}" is skipped: ${planned?._tag === "Skipped" ? planned.reason : "unknown"}`,
            exitCode: ExitCode.Usage
          })
        }
        const o = (yield* mcp.offered).find((x) => x.name === args.server)
        if (o === undefined || o.status !== "connected") {
          return yield* new CliError({
            message: o?.error ?? `MCP server "${args.server}" is not connected`,
            exitCode: ExitCode.Internal
          })
        }
        const connection = mcp.connections.find((c) => c.name === args.server)
        const listing = connection === undefined ? [] : yield* connection.listTools.pipe(
          Effect.mapError((e) => new CliError({ message: e.message, exitCode: ExitCode.Internal }))
        )
        const rows = o.tools.map((t): ReadonlyArray<string> => {
          const description = ToolListing.valid(listing).find((l) => l.name === t.tool)?.description ?? ""
          return [t.name, description.split("\n")[0] ?? ""]
        })
        for (const line of pad(rows)) yield* out(line)
        for (const s of o.skipped ?? []) yield* out(`(skipped) ${s.tool}: ${s.reason}`)
      }))
).pipe(Command.withDescription("list the tools an MCP server offers, as the model sees their names"))

/**
 * The `mcp` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("mcp").pipe(
  Command.withDescription("inspect MCP servers (.mcp.json, --mcp-config)"),
  Command.withSubcommands([list, tools])
)
