/**
 * One MCP server as a scoped resource over the official SDK's `Client`.
 *
 * - {@link make} needs a `Scope`: closing it closes the client (a stdio server's process group is
 *   ended, see `internal/StdioTransport`; an HTTP session is terminated by the SDK's `close`).
 * - The connection is made on first use ({@link Connection.connect}, {@link Connection.listTools},
 *   {@link Connection.callTool}) and bounded by `connectTimeoutMs`: a server that never answers
 *   `initialize` fails with `MCP_TIMEOUT` and its child is killed.
 * - Transports: stdio; streamable HTTP (`type: "http"`), falling back to the deprecated HTTP+SSE
 *   transport when the streamable endpoint answers 4xx (not 401/403) as the SDK's
 *   backwards-compatibility guide does; HTTP+SSE directly for `type: "sse"`. Header values stay
 *   `Redacted` until they are handed to the transport.
 * - Calls carry a deadline (`callTimeoutMs`, per call overridable): on expiry the SDK sends
 *   `notifications/cancelled` and the call fails with `MCP_TIMEOUT`. Interrupting a call aborts
 *   the SDK request, which sends `notifications/cancelled` to the server (DEC-1).
 * - A server that goes away (a crash, a closed stream) fails the calls in flight with
 *   `MCP_CONNECT_FAILED` and is restarted on its next use, at most `maxRestarts` times; after
 *   that it is reported down. A restart marks the tool list as changed (the new process may offer
 *   other tools).
 * - `notifications/tools/list_changed` sets a flag the tool layer takes at a step boundary
 *   ({@link Connection.takeToolsChanged}).
 *
 * SDK callbacks (close, notifications) are queued with `Queue.offerUnsafe` and folded into the
 * state the next time it is consulted, so all state lives in one `SynchronizedRef`.
 *
 * @since 0.1.0
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  type CallToolResult,
  ErrorCode,
  McpError as SdkMcpError,
  PaginatedResultSchema,
  type Tool as SdkTool,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as SynchronizedRef from "effect/SynchronizedRef"
import * as BoundedFetch from "./internal/BoundedFetch.js"
import { GroupStdioTransport } from "./internal/StdioTransport.js"
import type * as McpConfig from "./McpConfig.js"
import { type McpError, McpConnectError, McpProtocolError, McpServerError, McpTimeoutError } from "./McpError.js"
import * as ToolListing from "./ToolListing.js"

/**
 * A tool as the server lists it (the SDK's type).
 *
 * @since 0.1.0
 * @category models
 */
export type ServerTool = SdkTool

/**
 * A tool call's result as the server sent it (the SDK's type).
 *
 * @since 0.1.0
 * @category models
 */
export type ServerResult = CallToolResult

/**
 * Connection options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the environment a stdio server inherits (the configured `env` is added on top) */
  readonly baseEnv: Readonly<Record<string, string | undefined>>
  /** the working directory of stdio servers without their own `cwd` */
  readonly cwd: string
  /** `initialize` deadline (default {@link DEFAULT_CONNECT_TIMEOUT_MS}) */
  readonly connectTimeoutMs?: number
  /** per-call deadline (default {@link DEFAULT_CALL_TIMEOUT_MS}) */
  readonly callTimeoutMs?: number
  /** restarts after a crash before the server is reported down (default 2) */
  readonly maxRestarts?: number
  /** the client's name and version sent in `initialize` */
  readonly clientInfo: { readonly name: string; readonly version: string }
  /** wait between closing stdin, SIGTERM and SIGKILL of a stdio server (default 1000 ms) */
  readonly killGraceMs?: number
}

/**
 * Default `initialize` deadline (Claude Code's `MCP_TIMEOUT` default).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000

/**
 * Default per-call deadline.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CALL_TIMEOUT_MS = 300_000

/**
 * What a connection reports about itself.
 *
 * @since 0.1.0
 * @category models
 */
export type Status =
  | { readonly _tag: "Idle" }
  | {
    readonly _tag: "Connected"
    readonly serverName: string
    readonly serverVersion: string
    /** 1 for the first process/session, +1 per restart */
    readonly generation: number
    readonly pid?: number
  }
  | { readonly _tag: "Crashed"; readonly message: string; readonly restarts: number }
  | { readonly _tag: "Failed"; readonly error: McpError }
  | { readonly _tag: "Down"; readonly message: string }

/**
 * One server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly name: string
  readonly kind: "stdio" | "http" | "sse"
  readonly status: Effect.Effect<Status>
  /** connects now if not connected (restarting a crashed server) */
  readonly connect: Effect.Effect<void, McpError>
  /** every tool the server lists (all pages); a malformed definition is an entry of its own */
  readonly listTools: Effect.Effect<ReadonlyArray<ToolListing.ListedTool>, McpError>
  /** calls a tool; interruption sends `notifications/cancelled` */
  readonly callTool: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    options?: { readonly timeoutMs?: number; readonly meta?: Readonly<Record<string, string>> }
  ) => Effect.Effect<ServerResult, McpError>
  /** `true` once per `tools/list_changed` (or restart) since the last take */
  readonly takeToolsChanged: Effect.Effect<boolean>
  /** how many `tools/list_changed` notifications arrived so far (diagnostics) */
  readonly listChangedCount: Effect.Effect<number>
}

type Event = { readonly _tag: "Closed"; readonly generation: number } | { readonly _tag: "ToolsChanged" }

type State =
  | { readonly _tag: "Idle"; readonly generation: number; readonly restarts: number }
  | {
    readonly _tag: "Connected"
    readonly generation: number
    readonly restarts: number
    readonly client: Client
    readonly transport: Transport
    readonly scope: Scope.Closeable
  }
  | { readonly _tag: "Crashed"; readonly generation: number; readonly restarts: number; readonly message: string }
  | { readonly _tag: "Failed"; readonly generation: number; readonly restarts: number; readonly error: McpError }
  | { readonly _tag: "Down"; readonly generation: number; readonly restarts: number; readonly message: string }

const messageOf = (e: unknown): string => {
  const m = e instanceof Error ? e.message : String(e)
  const line = m.split("\n")[0] ?? ""
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

/**
 * Maps an SDK failure to a typed error.
 *
 * @since 0.1.0
 * @category errors
 */
export const fromSdkError = (server: string, e: unknown, what: string): McpError => {
  if (e instanceof SdkMcpError) {
    if (e.code === ErrorCode.RequestTimeout) {
      return new McpTimeoutError({ server, message: `MCP server "${server}" did not answer ${what} in time`, cause: e })
    }
    if (e.code === ErrorCode.ConnectionClosed) {
      return new McpConnectError({ server, message: `MCP server "${server}" closed the connection during ${what}`, cause: e })
    }
    return new McpServerError({ server, message: `MCP server "${server}" failed ${what}: ${messageOf(e)}`, cause: e })
  }
  if (e instanceof StreamableHTTPError) {
    return new McpConnectError({ server, message: `MCP server "${server}": HTTP error during ${what}: ${messageOf(e)}`, cause: e })
  }
  return new McpProtocolError({ server, message: `MCP server "${server}": ${what} failed: ${messageOf(e)}`, cause: e })
}

const unwrap = (m: Readonly<Record<string, Redacted.Redacted<string>>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(m)) out[k] = Redacted.value(v)
  return out
}

const kindOf = (resolved: McpConfig.Resolved): Connection["kind"] =>
  resolved._tag === "Stdio" ? "stdio" : resolved._tag === "Http" ? "http" : "sse"

/**
 * The server as a scoped connection (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  resolved: McpConfig.Resolved,
  options: Options
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const name = resolved.name
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS
    const maxRestarts = options.maxRestarts ?? 2
    const events = yield* Queue.unbounded<Event>()
    const state = yield* SynchronizedRef.make<State>({ _tag: "Idle", generation: 0, restarts: 0 })
    const changed = yield* SynchronizedRef.make(false)
    const notifications = yield* SynchronizedRef.make(0)

    const closeScope = (scope: Scope.Closeable) => Scope.close(scope, Exit.void)

    // close everything still open when the owner's scope ends
    yield* Effect.addFinalizer(() =>
      SynchronizedRef.updateEffect(state, (s) =>
        s._tag === "Connected"
          ? Effect.as(closeScope(s.scope), { _tag: "Down", generation: s.generation, restarts: s.restarts, message: "closed" } as State)
          : Effect.succeed(s))
    )

    const fold = (s: State): Effect.Effect<State> =>
      Effect.gen(function*() {
        // `clear` returns what is queued without waiting (`takeAll` would wait for a first event)
        const pending = yield* Queue.clear(events)
        let next = s
        for (const event of pending) {
          if (event._tag === "ToolsChanged") {
            yield* SynchronizedRef.set(changed, true)
            yield* SynchronizedRef.update(notifications, (n) => n + 1)
          } else if (next._tag === "Connected" && next.generation === event.generation) {
            const stderr = next.transport instanceof GroupStdioTransport ? lastLine(next.transport.stderr) : ""
            yield* closeScope(next.scope)
            next = {
              _tag: "Crashed",
              generation: next.generation,
              restarts: next.restarts,
              message: `MCP server "${name}" stopped${stderr === "" ? "" : ` (${stderr})`}`
            }
          }
        }
        return next
      })

    const transportFor = (sse: boolean): Transport => {
      switch (resolved._tag) {
        case "Stdio":
          return new GroupStdioTransport({
            command: resolved.command,
            args: resolved.args,
            env: definedOnly({ ...options.baseEnv, ...unwrap(resolved.env) }),
            cwd: resolved.cwd ?? options.cwd,
            graceMs: options.killGraceMs ?? 1000
          })
        case "Http":
        case "Sse": {
          const url = new URL(resolved.url)
          const requestInit = { headers: unwrap(resolved.headers) }
          // every message bounded like the stdio transport's (issue 26)
          const fetch = BoundedFetch.make()
          return sse || resolved._tag === "Sse"
            ? new SSEClientTransport(url, { requestInit, fetch })
            : new StreamableHTTPClientTransport(url, { requestInit, fetch })
        }
      }
    }

    const attempt = (generation: number, sse: boolean) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const transport = transportFor(sse)
        const client = new Client({ name: options.clientInfo.name, version: options.clientInfo.version }, { capabilities: {} })
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          Queue.offerUnsafe(events, { _tag: "ToolsChanged" })
        })
        client.onclose = () => {
          Queue.offerUnsafe(events, { _tag: "Closed", generation })
        }
        // an error on the transport (a bad line, a dropped SSE stream) is not fatal by itself;
        // a fatal one also closes the transport, which `onclose` reports
        client.onerror = () => {}
        yield* Scope.addFinalizer(
          scope,
          Effect.tryPromise(() => client.close()).pipe(
            Effect.catch((e) => Effect.logDebug(`closing MCP server "${name}": ${messageOf(e)}`))
          )
        )
        const connected = yield* Effect.tryPromise({
          try: (signal) => client.connect(transport, { signal, timeout: connectTimeoutMs + 1000 }),
          catch: (e) => e
        }).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(connectTimeoutMs),
            orElse: () =>
              Effect.fail(
                new McpTimeoutError({
                  server: name,
                  message: `MCP server "${name}" did not answer initialize within ${connectTimeoutMs} ms`
                })
              )
          }),
          // interrupted while connecting (Ctrl-C at startup): the child must not outlive us
          Effect.onInterrupt(() => closeScope(scope)),
          Effect.result
        )
        if (Result.isFailure(connected)) {
          yield* closeScope(scope)
          return { _tag: "Failure" as const, error: connected.failure, transport }
        }
        return { _tag: "Success" as const, client, transport, scope }
      })

    const connectNew = (s: State): Effect.Effect<State> =>
      Effect.gen(function*() {
        const generation = s.generation + 1
        let result = yield* attempt(generation, false)
        if (
          result._tag === "Failure" && resolved._tag === "Http" && result.error instanceof StreamableHTTPError &&
          result.error.code !== undefined && result.error.code >= 400 && result.error.code < 500 &&
          result.error.code !== 401 && result.error.code !== 403
        ) {
          result = yield* attempt(generation, true)
        }
        if (result._tag === "Failure") {
          const error = result.error
          const stderr = result.transport instanceof GroupStdioTransport ? lastLine(result.transport.stderr) : ""
          const typed: McpError = error instanceof McpTimeoutError ||
              error instanceof McpConnectError || error instanceof McpServerError || error instanceof McpProtocolError
            ? error
            : new McpConnectError({
              server: name,
              message: `cannot start MCP server "${name}": ${messageOf(error)}${stderr === "" ? "" : ` (${stderr})`}`,
              cause: error
            })
          return { _tag: "Failed", generation, restarts: s.restarts, error: typed }
        }
        if (generation > 1) yield* SynchronizedRef.set(changed, true)
        return {
          _tag: "Connected",
          generation,
          restarts: s.restarts,
          client: result.client,
          transport: result.transport,
          scope: result.scope
        }
      })

    /** the connected client, connecting or restarting as the state allows */
    const ensure: Effect.Effect<Client, McpError> = SynchronizedRef.modifyEffect(state, (s0) =>
      Effect.gen(function*() {
        const s = yield* fold(s0)
        switch (s._tag) {
          case "Connected":
            return [Option.some(s.client), s] as const
          case "Down":
            return [Option.none(), s] as const
          case "Failed":
            return [Option.none(), s] as const
          case "Idle":
            return [Option.none(), yield* connectNew(s)] as const
          case "Crashed": {
            if (s.restarts >= maxRestarts) {
              return [Option.none(), {
                _tag: "Down",
                generation: s.generation,
                restarts: s.restarts,
                message: `${s.message}; it was restarted ${s.restarts} times and is now reported down`
              } as State] as const
            }
            return [Option.none(), yield* connectNew({ ...s, restarts: s.restarts + 1 })] as const
          }
        }
      })).pipe(
        Effect.flatMap((client) =>
          Option.isSome(client) ? Effect.succeed(client.value) : Effect.flatMap(SynchronizedRef.get(state), (s) =>
            s._tag === "Connected"
              ? Effect.succeed(s.client)
              : Effect.fail(
                s._tag === "Failed"
                  ? s.error
                  : new McpConnectError({
                    server: name,
                    message: s._tag === "Down" || s._tag === "Crashed" ? s.message : `MCP server "${name}" is not connected`
                  })
              ))
        )
      )

    const status: Effect.Effect<Status> = SynchronizedRef.modifyEffect(state, (s0) =>
      Effect.map(fold(s0), (s): readonly [Status, State] => {
        switch (s._tag) {
          case "Idle":
            return [{ _tag: "Idle" }, s]
          case "Connected": {
            const info = s.client.getServerVersion()
            const pid = s.transport instanceof GroupStdioTransport ? s.transport.pid : undefined
            return [{
              _tag: "Connected",
              serverName: info?.name ?? name,
              serverVersion: info?.version ?? "",
              generation: s.generation,
              ...(pid === undefined ? {} : { pid })
            }, s]
          }
          case "Crashed":
            return [{ _tag: "Crashed", message: s.message, restarts: s.restarts }, s]
          case "Failed":
            return [{ _tag: "Failed", error: s.error }, s]
          case "Down":
            return [{ _tag: "Down", message: s.message }, s]
        }
      }))

    // each tool checked alone (`ToolListing`): one malformed definition does not fail the listing
    const listTools: Effect.Effect<ReadonlyArray<ToolListing.ListedTool>, McpError> = Effect.flatMap(ensure, (client) =>
      Effect.gen(function*() {
        const out: Array<ToolListing.ListedTool> = []
        let cursor: string | undefined
        for (let page = 0; page < 100; page++) {
          const raw = yield* Effect.tryPromise({
            try: (signal) =>
              client.request(
                { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
                PaginatedResultSchema,
                { signal, timeout: callTimeoutMs }
              ),
            catch: (e) => fromSdkError(name, e, "tools/list")
          })
          const result = ToolListing.parsePage(raw)
          if (result === undefined) {
            return yield* new McpProtocolError({ server: name, message: "its tools/list answer has no tools array" })
          }
          out.push(...result.tools)
          cursor = result.nextCursor
          if (cursor === undefined) break
        }
        return out
      }))

    const callTool: Connection["callTool"] = (tool, args, callOptions) =>
      Effect.flatMap(ensure, (client) =>
        Effect.tryPromise({
          try: (signal) =>
            client.callTool({
              name: tool,
              arguments: { ...args },
              ...(callOptions?.meta === undefined ? {} : { _meta: { ...callOptions.meta } })
            }, undefined, {
              signal,
              timeout: callOptions?.timeoutMs ?? callTimeoutMs
            }),
          catch: (e) => fromSdkError(name, e, `the call of "${tool}"`)
        }).pipe(Effect.map((result) => result as ServerResult)))

    const takeToolsChanged: Effect.Effect<boolean> = Effect.andThen(
      SynchronizedRef.updateEffect(state, fold),
      SynchronizedRef.getAndSet(changed, false)
    )

    const listChangedCount: Effect.Effect<number> = Effect.andThen(
      SynchronizedRef.updateEffect(state, fold),
      SynchronizedRef.get(notifications)
    )

    return {
      name,
      kind: kindOf(resolved),
      listChangedCount,
      status,
      connect: Effect.asVoid(ensure),
      listTools,
      callTool,
      takeToolsChanged
    }
  })

const lastLine = (text: string): string => {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "")
  const last = lines[lines.length - 1] ?? ""
  return last.length > 200 ? `${last.slice(0, 200)}…` : last
}

const definedOnly = (env: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  return out
}
