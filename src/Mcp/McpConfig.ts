/**
 * MCP server configuration in Claude Code's `.mcp.json` format:
 *
 * ```json
 * { "mcpServers": {
 *     "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": { "K": "${K}" } },
 *     "api": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${API_TOKEN}" } }
 * } }
 * ```
 *
 * A server is stdio (`command`, `args?`, `env?`, `cwd?`; `type` absent or `"stdio"`), streamable
 * HTTP (`type: "http"`, `url`, `headers?`) or the deprecated HTTP+SSE (`type: "sse"`, same
 * fields). Unknown keys of a server are ignored (other tools add their own), unknown `type`s and
 * wrong field types are errors naming the file and the server.
 *
 * `${VAR}` and `${VAR:-default}` are expanded as Claude Code does, in `command`, `args`, `env`,
 * `cwd`, `url` and `headers`, from the environment the caller passes (library code never reads
 * `process.env`). A variable that is unset and has no default makes that server unusable with a
 * one-line message naming the variables; the other servers are unaffected.
 *
 * Resolved header and env values are `Redacted`: they print as `<redacted>` and are unwrapped only
 * at the transport edge. {@link fingerprint} is computed on the unexpanded configuration, so an
 * approval survives a rotated token but not a changed command.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { createHash } from "node:crypto"
import * as Json from "../Llm/Json.js"

/**
 * A configuration file is unreadable or malformed.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpConfigError extends Schema.TaggedError<McpConfigError>()("McpConfigError", {
  file: Schema.String,
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "INVALID_CONFIG" as const
}

const StringMap = Schema.Record(Schema.String, Schema.String)

const NonEmpty = Schema.String.check(Schema.isMinLength(1))

/**
 * A stdio server as written in the file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StdioServer = Schema.Struct({
  type: Schema.optionalKey(Schema.Literal("stdio")),
  command: NonEmpty,
  args: Schema.optionalKey(Schema.Array(Schema.String)),
  env: Schema.optionalKey(StringMap),
  cwd: Schema.optionalKey(Schema.String)
})

/**
 * A remote server (streamable HTTP or HTTP+SSE) as written in the file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RemoteServer = Schema.Struct({
  type: Schema.Literals(["http", "sse"]),
  url: NonEmpty,
  headers: Schema.optionalKey(StringMap)
})

/**
 * One server entry as written.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServerConfig = Schema.Union([StdioServer, RemoteServer])

/**
 * @since 0.1.0
 * @category models
 */
export type ServerConfig = typeof ServerConfig.Type

/**
 * `true` for a remote (HTTP or SSE) server.
 *
 * @since 0.1.0
 * @category utils
 */
export const isRemote = (config: ServerConfig): config is typeof RemoteServer.Type =>
  config.type === "http" || config.type === "sse"

/**
 * The file: `{ "mcpServers": { name: ServerConfig } }` (other top-level keys are ignored).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConfigFile = Schema.Struct({
  mcpServers: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})

/**
 * Where a server was configured: the workspace's `.mcp.json` (needs approval) or a file the user
 * named explicitly (`--mcp-config`, trusted).
 *
 * @since 0.1.0
 * @category models
 */
export type Origin = "project" | "explicit"

/**
 * One configured server, unexpanded.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly name: string
  readonly origin: Origin
  readonly file: string
  readonly config: ServerConfig
}

/**
 * A server ready to connect: variables expanded, secrets redacted.
 *
 * @since 0.1.0
 * @category models
 */
export type Resolved =
  | {
    readonly _tag: "Stdio"
    readonly name: string
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, Redacted.Redacted<string>>>
    readonly cwd?: string
  }
  | {
    readonly _tag: "Http" | "Sse"
    readonly name: string
    readonly url: string
    readonly headers: Readonly<Record<string, Redacted.Redacted<string>>>
  }

const decodeFile = Schema.decodeUnknownResult(ConfigFile)
const decodeStdio = Schema.decodeUnknownResult(StdioServer, { onExcessProperty: "ignore" })
const decodeRemote = Schema.decodeUnknownResult(RemoteServer, { onExcessProperty: "ignore" })
const decodeAny = Schema.decodeUnknownResult(ServerConfig, { onExcessProperty: "ignore" })

/**
 * Decodes one server against the member its `type` selects (what the union would pick), so the
 * message speaks of that member only; an unknown `type` is decoded against both. Inputs are not
 * reported: header and env values may be secrets.
 */
const decodeServer = (raw: unknown): Result.Result<ServerConfig, Schema.SchemaError> => {
  const type = typeof raw === "object" && raw !== null && "type" in raw ? raw.type : undefined
  return type === "http" || type === "sse"
    ? decodeRemote(raw)
    : type === undefined || type === "stdio"
    ? decodeStdio(raw)
    : decodeAny(raw)
}

/** One line: every failure with the key it concerns. */
const describeIssue = (issue: SchemaIssue.Issue): string =>
  SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues.map((i) =>
    i.path === undefined || i.path.length === 0
      ? i.message
      : `"${i.path.map((k) => (typeof k === "object" ? String(k.key) : String(k))).join(".")}": ${i.message}`
  ).join("; ")

/**
 * Parses the text of a configuration file. Entries keep the file's order.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (text: string, file: string, origin: Origin): Result.Result<ReadonlyArray<Entry>, McpConfigError> => {
  const fail = (message: string) => Result.fail(new McpConfigError({ file, message: `${file}: ${message}` }))
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (e) {
    return fail(`not valid JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return fail("expected a JSON object")
  const top = decodeFile(raw)
  if (Result.isFailure(top)) return fail(`"mcpServers" must be an object`)
  const servers = top.success.mcpServers ?? {}
  const out: Array<Entry> = []
  for (const name of Object.keys(servers)) {
    if (name.trim() === "") return fail("a server has an empty name")
    const decoded = decodeServer(servers[name])
    if (Result.isFailure(decoded)) {
      const detail = describeIssue(decoded.failure.issue)
      return fail(`server "${name}" is invalid: ${detail.length > 300 ? `${detail.slice(0, 300)}…` : detail}`)
    }
    out.push({ name, origin, file, config: decoded.success })
  }
  return Result.succeed(out)
}

/**
 * Reads and parses a configuration file; `missingOk` turns a missing file into no entries.
 *
 * @since 0.1.0
 * @category parsing
 */
export const load = (
  file: string,
  origin: Origin,
  options: { readonly missingOk: boolean }
): Effect.Effect<ReadonlyArray<Entry>, McpConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.map((t): string | undefined => t),
      Effect.catch((e) =>
        e.reason._tag === "NotFound" && options.missingOk
          ? Effect.succeed(undefined)
          : Effect.fail(new McpConfigError({ file, message: `cannot read ${file}: ${e.message}` }))
      )
    )
    if (text === undefined) return []
    return yield* Effect.fromResult(parse(text, file, origin))
  })

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/**
 * Expands `${VAR}` and `${VAR:-default}` in one string; unset variables without a default are
 * added to `missing` and expand to "".
 *
 * @since 0.1.0
 * @category expansion
 */
export const expand = (
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  missing: Set<string>
): string =>
  text.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const value = env[name]
    if (value !== undefined && value !== "") return value
    if (fallback !== undefined) return fallback
    if (value === undefined) missing.add(name)
    return ""
  })

/**
 * Expands an entry's variables. Fails with a one-line message naming the missing variables.
 *
 * @since 0.1.0
 * @category expansion
 */
export const resolve = (
  entry: Entry,
  env: Readonly<Record<string, string | undefined>>
): Result.Result<Resolved, string> => {
  const missing = new Set<string>()
  const x = (s: string) => expand(s, env, missing)
  const secrets = (m: Readonly<Record<string, string>> | undefined) => {
    const out: Record<string, Redacted.Redacted<string>> = {}
    for (const [k, v] of Object.entries(m ?? {})) out[k] = Redacted.make(x(v))
    return out
  }
  const c = entry.config
  const resolved: Resolved = isRemote(c)
    ? { _tag: c.type === "http" ? "Http" : "Sse", name: entry.name, url: x(c.url), headers: secrets(c.headers) }
    : {
      _tag: "Stdio",
      name: entry.name,
      command: x(c.command),
      args: (c.args ?? []).map(x),
      env: secrets(c.env),
      ...(c.cwd === undefined ? {} : { cwd: x(c.cwd) })
    }
  if (missing.size > 0) {
    const names = [...missing].sort().join(", ")
    return Result.fail(`MCP server "${entry.name}" needs the environment variable${missing.size > 1 ? "s" : ""} ${names}`)
  }
  if (resolved._tag !== "Stdio") {
    try {
      const url = new URL(resolved.url)
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)")
    } catch {
      return Result.fail(`MCP server "${entry.name}" has an invalid url`)
    }
  }
  return Result.succeed(resolved)
}

/**
 * A stable fingerprint of an entry's unexpanded configuration (approval key).
 *
 * @since 0.1.0
 * @category utils
 */
export const fingerprint = (entry: Entry): string =>
  createHash("sha256").update(Json.canonical(entry.config)).digest("hex").slice(0, 16)

/**
 * A one-line description of where the server runs, without secrets (header values and env values
 * are never shown).
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (config: ServerConfig): string => {
  if (isRemote(config)) {
    const headers = Object.keys(config.headers ?? {})
    return `${config.type} ${config.url}${headers.length > 0 ? ` (headers: ${headers.map((h) => `${h}: <redacted>`).join(", ")})` : ""}`
  }
  const env = Object.keys(config.env ?? {})
  return `${[config.command, ...(config.args ?? [])].join(" ")}${env.length > 0 ? ` (env: ${env.join(", ")})` : ""}`
}

/**
 * Merges entries: a later entry with the same name replaces an earlier one (explicit files are
 * passed after the project file, so they win).
 *
 * @since 0.1.0
 * @category utils
 */
export const merge = (...groups: ReadonlyArray<ReadonlyArray<Entry>>): ReadonlyArray<Entry> => {
  const byName = new Map<string, Entry>()
  for (const group of groups) for (const e of group) byName.set(e.name, e)
  return [...byName.values()]
}
