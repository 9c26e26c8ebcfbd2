/**
 * Which configured servers a run may start: the workspace's `.mcp.json` plus files the user named
 * (`--mcp-config`), project approval, and variable expansion.
 *
 * - Servers from `<workspace>/.mcp.json` (origin `project`) come with the repository, so they run
 *   only with the user's approval, stored in `<harness home>/mcp-approvals.json` keyed by the
 *   workspace path, the server name and {@link approvalKey}: the fingerprint of its unexpanded
 *   configuration and of the workspace files its command names (`node ./srv.js`: a changed
 *   command or a rewritten `srv.js` asks again; a rotated token in the environment does not). A
 *   "no" is stored too and skips the server from then on. The file is private (`0600` in a `0700`
 *   directory) and read only when it is the user's and writable by nobody else
 *   (`Session/persistence/PrivateFile`); otherwise it is reported once and treated as empty.
 * - Servers from explicitly named files (origin `explicit`) are trusted: the user chose the file.
 *   They replace a project server of the same name.
 * - Trust modes: `"yes"` uses project servers for this run (with `record`, their approval is
 *   stored: the user approved the workspace's configuration, which listed them); `"ask"` asks;
 *   `"skip"` skips unapproved ones with a one-line notice saying how to approve; `"none"` skips
 *   every project server silently (the workspace's configuration is not approved and the caller
 *   has said so already).
 * - A server whose variables cannot be expanded is skipped with a one-line notice; so are all
 *   servers of a malformed project file (the agent still starts). A malformed explicit file fails.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as NodePath from "node:path"
import * as PrivateFile from "../Session/persistence/PrivateFile.js"
import * as McpConfig from "./McpConfig.js"
import * as WorkspaceScripts from "./WorkspaceScripts.js"

/**
 * The name of the project file at the workspace root.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROJECT_FILE = ".mcp.json"

/**
 * The approvals file name under the harness home.
 *
 * @since 0.1.0
 * @category constants
 */
export const APPROVALS_FILE = "mcp-approvals.json"

/**
 * How unapproved project servers are treated.
 *
 * @since 0.1.0
 * @category models
 */
export type Trust = "yes" | "ask" | "skip" | "none"

/**
 * Asks the user one yes/no question: `true` yes, `false` no, `undefined` cancelled.
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = (question: string) => Effect.Effect<boolean | undefined, unknown>

/**
 * Options of {@link load}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** absolute workspace root */
  readonly cwd: string
  /** files named with `--mcp-config` (trusted) */
  readonly explicitFiles: ReadonlyArray<string>
  /** the environment for `${VAR}` expansion */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly trust: Trust
  /** required for `trust: "ask"` */
  readonly prompt?: Prompt
  /** the harness home (approvals are stored there) */
  readonly home: string
  /** with `trust: "yes"`: store the approval of every project server used */
  readonly record?: boolean
}

/**
 * One configured server and what happens to it.
 *
 * @since 0.1.0
 * @category models
 */
export type Planned =
  | { readonly _tag: "Ready"; readonly entry: McpConfig.Entry; readonly resolved: McpConfig.Resolved }
  | { readonly _tag: "Skipped"; readonly entry: McpConfig.Entry; readonly reason: string }

/**
 * The result of {@link load}: every configured server in order, and the notices to print.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly servers: ReadonlyArray<Planned>
  readonly notices: ReadonlyArray<string>
}

/**
 * The servers ready to connect.
 *
 * @since 0.1.0
 * @category utils
 */
export const ready = (plan: Plan): ReadonlyArray<McpConfig.Resolved> =>
  plan.servers.flatMap((p) => (p._tag === "Ready" ? [p.resolved] : []))

type Decision = "approved" | "rejected"

interface Approvals {
  readonly projects: Readonly<Record<string, Readonly<Record<string, { readonly fingerprint: string; readonly decision: Decision }>>>>
}

const readApprovals = (file: string, notices: Array<string>): Effect.Effect<Approvals> =>
  PrivateFile.read(file).pipe(
    Effect.map((text): Approvals => {
      if (Option.isNone(text)) return { projects: {} }
      try {
        const parsed = JSON.parse(text.value) as unknown
        if (typeof parsed === "object" && parsed !== null && "projects" in parsed && typeof parsed.projects === "object") {
          return parsed as Approvals
        }
      } catch {
        // an unreadable approvals file asks again (and is rewritten on the next answer)
      }
      return { projects: {} }
    }),
    Effect.catch((e) =>
      Effect.as(Effect.sync(() => notices.push(`${e.message}; MCP approvals stored there are ignored`)), { projects: {} })
    )
  )

const writeApprovals = (file: string, approvals: Approvals): Effect.Effect<void, McpConfig.McpConfigError> =>
  PrivateFile.write(file, `${JSON.stringify(approvals, null, 2)}\n`).pipe(
    Effect.mapError((e) => new McpConfig.McpConfigError({ file, message: `cannot save MCP approvals: ${e.message}` }))
  )

/**
 * The workspace files a project server's command names (none for a remote server).
 *
 * @since 0.1.0
 * @category utils
 */
export const namedScripts = (cwd: string, entry: McpConfig.Entry): ReadonlyArray<string> => {
  const config = entry.config
  if (McpConfig.isRemote(config)) return []
  const base = config.cwd === undefined ? cwd : NodePath.resolve(cwd, config.cwd)
  return WorkspaceScripts.namedPaths([config.command, ...(config.args ?? [])], cwd, base)
}

/**
 * The approval key of a server: the fingerprint of its unexpanded configuration and of the
 * contents of the workspace files its command names.
 *
 * @since 0.1.0
 * @category utils
 */
export const approvalKey = (cwd: string, entry: McpConfig.Entry): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.map(WorkspaceScripts.digest(cwd, namedScripts(cwd, entry)), (named) =>
    named.length === 0 ? McpConfig.fingerprint(entry) : `${McpConfig.fingerprint(entry)}:${WorkspaceScripts.combined(named).slice(0, 16)}`)

/**
 * The servers of the workspace's `.mcp.json` (none when it is missing or malformed).
 *
 * @since 0.1.0
 * @category constructors
 */
export const projectEntries = (cwd: string): Effect.Effect<ReadonlyArray<McpConfig.Entry>, never, FileSystem.FileSystem> =>
  McpConfig.load(NodePath.join(cwd, PROJECT_FILE), "project", { missingOk: true }).pipe(
    Effect.orElseSucceed((): ReadonlyArray<McpConfig.Entry> => [])
  )

/**
 * Reads the configuration and decides, server by server, what may run (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (options: Options): Effect.Effect<Plan, McpConfig.McpConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const notices: Array<string> = []
    // a broken project file must not stop the agent: its servers are left out with one line
    const project = yield* McpConfig.load(NodePath.join(options.cwd, PROJECT_FILE), "project", { missingOk: true }).pipe(
      Effect.catch((e) => Effect.as(Effect.sync(() => notices.push(`${e.message}; its MCP servers are skipped`)), []))
    )
    const explicit = yield* Effect.forEach(
      options.explicitFiles,
      (f) => McpConfig.load(NodePath.resolve(options.cwd, f), "explicit", { missingOk: false })
    )
    const entries = McpConfig.merge(project, ...explicit)
    const approvalsFile = NodePath.join(options.home, APPROVALS_FILE)
    const hasProject = entries.some((e) => e.origin === "project")
    let approvals: Approvals = options.trust === "none" || !hasProject ? { projects: {} } : yield* readApprovals(approvalsFile, notices)
    const servers: Array<Planned> = []
    const skip = (entry: McpConfig.Entry, reason: string, notice: string | undefined) => {
      servers.push({ _tag: "Skipped", entry, reason })
      if (notice !== undefined) notices.push(notice)
    }
    const approve = (entry: McpConfig.Entry, print: string, decision: Decision) => {
      approvals = {
        projects: {
          ...approvals.projects,
          [options.cwd]: { ...approvals.projects[options.cwd], [entry.name]: { fingerprint: print, decision } }
        }
      }
      return writeApprovals(approvalsFile, approvals)
    }
    for (const entry of entries) {
      if (entry.origin === "project" && options.trust === "none") {
        servers.push({ _tag: "Skipped", entry, reason: "the workspace's configuration is not approved" })
        continue
      }
      if (entry.origin === "project" && options.trust === "yes" && options.record === true) {
        const print = yield* approvalKey(options.cwd, entry)
        const stored = approvals.projects[options.cwd]?.[entry.name]
        if (stored === undefined || stored.fingerprint !== print || stored.decision !== "approved") {
          yield* approve(entry, print, "approved")
        }
      }
      if (entry.origin === "project" && options.trust !== "yes") {
        const print = yield* approvalKey(options.cwd, entry)
        const stored = approvals.projects[options.cwd]?.[entry.name]
        const known = stored !== undefined && stored.fingerprint === print ? stored.decision : undefined
        if (known === "rejected") {
          skip(entry, "rejected by the user", `MCP server "${entry.name}" from ${PROJECT_FILE} was rejected earlier; skipped`)
          continue
        }
        if (known === undefined) {
          if (options.trust === "skip" || options.prompt === undefined) {
            skip(
              entry,
              "needs approval",
              `MCP server "${entry.name}" from ${PROJECT_FILE} is not approved yet; skipped (approve it in an interactive session, or pass --yes)`
            )
            continue
          }
          const answer = yield* options.prompt(
            `Start the MCP server "${entry.name}" from ${PROJECT_FILE}: ${McpConfig.describe(entry.config)}?`
          ).pipe(Effect.catch(() => Effect.succeed(undefined)))
          if (answer === undefined) {
            skip(entry, "not approved", `MCP server "${entry.name}" skipped (not approved)`)
            continue
          }
          yield* approve(entry, print, answer ? "approved" : "rejected")
          if (!answer) {
            skip(entry, "rejected by the user", undefined)
            continue
          }
        }
      }
      const resolved = McpConfig.resolve(entry, options.env)
      if (Result.isFailure(resolved)) {
        skip(entry, resolved.failure, `${resolved.failure}; skipped`)
        continue
      }
      servers.push({ _tag: "Ready", entry, resolved: resolved.success })
    }
    return { servers, notices }
  })
