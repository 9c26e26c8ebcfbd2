/**
 * The MCP client service: configured servers as scoped connections whose tools enter the loop
 * through the tool runtime's global registry, like any other tool.
 *
 * {@link layer} (scoped; closing it closes every server):
 * 1. connects every server in parallel, each bounded by its `initialize` deadline; a server that
 *    fails is reported with one line through `onNotice` and offers no tools; the agent starts
 *    anyway;
 * 2. lists each connected server's tools and registers them (`McpTools.fromListing`), reporting
 *    every skipped tool with one line;
 * 3. installs the approval policy (`McpApproval`, default ask);
 * 4. hooks the loop's step boundaries: at `prompt-submit` (before a turn's first step) and
 *    `post-step` (between steps) a server that sent `notifications/tools/list_changed` (or was
 *    restarted) is listed again and its registrations are swapped, so the tools of a step never
 *    change while it runs; at `pre-step` the agent's session gets an `mcp/tools` event whenever
 *    the offered servers and tools differ from what that session last logged (and once per loop
 *    instance). Together with the `request/header` snapshot (which holds every tool schema) this
 *    keeps a request with MCP tools reconstructable from the log alone.
 *
 * Decisions (DEC-10): connections are made when the layer is built (the model must see the tools
 * in its first request); a failed server is not retried during the session (reported down); a
 * crashed server is restarted on its next use (`McpConnection`); with several agents on one
 * runtime, a refresh at one agent's boundary is visible to the others at their next step.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Hooks from "../Loop/Hooks.js"
import * as ToolRegistry from "../Loop/ToolRegistry.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as McpApproval from "./McpApproval.js"
import type * as McpConfig from "./McpConfig.js"
import * as McpConnection from "./McpConnection.js"
import * as McpTools from "./McpTools.js"

/**
 * The `mcp/tools` event: which servers and tools were offered from this point of the log on.
 *
 * @since 0.1.0
 * @category models
 */
export interface OfferedEvent {
  readonly servers: ReadonlyArray<OfferedServer>
}

/**
 * One server in an {@link OfferedEvent} (and in {@link Service.offered}).
 *
 * @since 0.1.0
 * @category models
 */
export interface OfferedServer {
  readonly name: string
  readonly transport: "stdio" | "http" | "sse"
  readonly status: "connected" | "failed" | "down"
  /** server-reported name and version when connected */
  readonly server?: { readonly name: string; readonly version: string }
  /** the loop name and the server's name of every offered tool */
  readonly tools: ReadonlyArray<{ readonly name: string; readonly tool: string }>
  readonly skipped?: ReadonlyArray<McpTools.Skipped>
  readonly error?: string
}

declare module "../Session/SessionEvent.js" {
  interface SessionEventMap {
    readonly "mcp/tools": OfferedEvent
  }
}

/**
 * Layer options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends McpConnection.Options {
  /** servers to connect, in order (approved and expanded) */
  readonly servers: ReadonlyArray<McpConfig.Resolved>
  /** approval of MCP tool calls (default `"ask"`) */
  readonly approval?: McpApproval.Mode
  /** one-line diagnostics (server unavailable, tool skipped, list refreshed) */
  readonly onNotice?: (line: string) => Effect.Effect<void>
}

/**
 * The service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly connections: ReadonlyArray<McpConnection.Connection>
  /** what is offered now, per server in configuration order */
  readonly offered: Effect.Effect<ReadonlyArray<OfferedServer>>
  /** lists servers with pending list changes again and swaps their tools; `true` when any changed */
  readonly refresh: Effect.Effect<boolean>
}

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class McpServers extends Context.Service<McpServers, Service>()("effect-harness/Mcp/McpServers") {}

interface Registered {
  readonly scope: Scope.Closeable
  readonly offered: ReadonlyArray<McpTools.Offered>
  readonly skipped: ReadonlyArray<McpTools.Skipped>
}

/**
 * Builds the service (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Service, never, ToolRuntime.ToolRuntime | Hooks.LoopHooks | Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* ToolRuntime.ToolRuntime
    const hooks = yield* Hooks.LoopHooks
    const layerScope = yield* Effect.scope
    const notice = options.onNotice ?? ((line: string) => Effect.logWarning(line))
    const connections = yield* Effect.forEach(options.servers, (s) => McpConnection.make(s, options))
    const registered = yield* Ref.make(new Map<string, Registered>())
    const lock = yield* Semaphore.make(1)

    const reservedFor = (server: string) =>
      Effect.gen(function*() {
        const all = yield* ToolRegistry.tools(runtime.globals)
        const own = new Set(((yield* Ref.get(registered)).get(server)?.offered ?? []).map((o) => o.name))
        return new Set(all.map((t) => t.name).filter((n) => !own.has(n)))
      })

    /** (re)lists one server and swaps its registrations */
    const load = (connection: McpConnection.Connection, reason: "initial" | "changed") =>
      Effect.gen(function*() {
        const listing = yield* Effect.result(connection.listTools)
        if (Result.isFailure(listing)) {
          yield* notice(
            reason === "initial"
              ? `MCP server "${connection.name}" is unavailable: ${listing.failure.message}`
              : `MCP server "${connection.name}": cannot refresh its tools: ${listing.failure.message}`
          )
          return
        }
        const previous = (yield* Ref.get(registered)).get(connection.name)
        if (previous !== undefined) yield* Scope.close(previous.scope, Exit.void)
        const reserved = yield* reservedFor(connection.name)
        const built = McpTools.fromListing(connection, listing.success, reserved)
        const scope = yield* Scope.fork(layerScope, "sequential")
        const offered: Array<McpTools.Offered> = []
        const skipped: Array<McpTools.Skipped> = [...built.skipped]
        for (const o of built.offered) {
          const r = yield* Effect.result(Scope.provide(ToolRegistry.register(runtime.globals, o.loopTool), scope))
          if (Result.isFailure(r)) skipped.push({ tool: o.tool, reason: `its name ${o.name} is already taken` })
          else offered.push(o)
        }
        yield* Ref.update(registered, (m) => new Map(m).set(connection.name, { scope, offered, skipped }))
        const reported = new Set((previous?.skipped ?? []).map((s) => `${s.tool}\0${s.reason}`))
        for (const s of skipped) {
          if (!reported.has(`${s.tool}\0${s.reason}`)) {
            yield* notice(`MCP server "${connection.name}": tool "${s.tool}" skipped: ${s.reason}`)
          }
        }
        const names = (xs: ReadonlyArray<McpTools.Offered>) => xs.map((o) => o.name).join("\0")
        if (reason === "changed" && names(previous?.offered ?? []) !== names(offered)) {
          yield* notice(`MCP server "${connection.name}": tool list changed (${offered.length} tools offered)`)
        }
      })

    const refresh: Effect.Effect<boolean> = lock.withPermits(1)(
      Effect.reduce(connections, () => false, (any, c) =>
        Effect.flatMap(c.takeToolsChanged, (changed) =>
          changed ? Effect.as(load(c, "changed"), true) : Effect.succeed(any)))
    )

    const offered: Effect.Effect<ReadonlyArray<OfferedServer>> = Effect.gen(function*() {
      const reg = yield* Ref.get(registered)
      return yield* Effect.forEach(connections, (c) =>
        Effect.map(c.status, (status): OfferedServer => {
          const r = reg.get(c.name)
          const tools = (r?.offered ?? []).map((o) => ({ name: o.name, tool: o.tool }))
          const skipped = r?.skipped ?? []
          const base = { name: c.name, transport: c.kind, tools, ...(skipped.length > 0 ? { skipped } : {}) }
          switch (status._tag) {
            case "Connected":
              return { ...base, status: "connected", server: { name: status.serverName, version: status.serverVersion } }
            case "Failed":
              return { ...base, status: "failed", error: status.error.message }
            case "Down":
            case "Crashed":
              return { ...base, status: "down", error: status.message }
            case "Idle":
              return { ...base, status: "down", error: "not connected" }
          }
        }))
    })

    // 1-2. connect and list, in parallel
    yield* Effect.forEach(connections, (c) => load(c, "initial"), { concurrency: "unbounded", discard: true })
    // 3. approval
    yield* McpApproval.register(options.approval ?? "ask")
    // 4. step boundaries and logging
    yield* hooks.promptSubmit.register((input, next) => Effect.andThen(refresh, next(input)))
    yield* hooks.postStep.register(() => Effect.asVoid(refresh))
    const logged = yield* Ref.make(new Map<string, string>())
    yield* hooks.preStep.register((input) =>
      Effect.gen(function*() {
        if (connections.length === 0) return
        const servers = yield* offered
        // built the same way every time, so equal offers serialize equally
        const key = JSON.stringify(servers)
        const session = input.agent.session
        const last = (yield* Ref.get(logged)).get(`${input.agent.id}\0${session.id}`)
        if (last === key) return
        yield* session.append({ type: "mcp/tools", data: { servers } })
        yield* Ref.update(logged, (m) => new Map(m).set(`${input.agent.id}\0${session.id}`, key))
      })
    )
    return McpServers.of({ connections, offered, refresh })
  })

/**
 * The service as a scoped layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<McpServers, never, ToolRuntime.ToolRuntime | Hooks.LoopHooks> =>
  Layer.effect(McpServers, make(options))
