/**
 * Which configured servers a run may start: the workspace's `.mcp.json` plus files the user named
 * (`--mcp-config`), project approval, and variable expansion.
 *
 * - Servers from `<workspace>/.mcp.json` (origin `project`) come with the repository, so they run
 *   only with the user's approval, asked once per workspace and server and stored in
 *   `<harness home>/mcp-approvals.json` keyed by the workspace path, the server name and the
 *   fingerprint of its unexpanded configuration (a changed command asks again; a rotated token in
 *   the environment does not). A "no" is stored too and skips the server from then on.
 * - Servers from explicitly named files (origin `explicit`) are trusted: the user chose the file.
 *   They replace a project server of the same name.
 * - Trust modes: `"yes"` (`--yes`) uses unapproved project servers for this run without storing
 *   anything; `"ask"` (interactive) asks; `"skip"` (non-interactive) skips them with a one-line
 *   notice saying how to approve.
 * - A server whose variables cannot be expanded is skipped with a one-line notice; so are all
 *   servers of a malformed project file (the agent still starts). A malformed explicit file fails.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as NodePath from "node:path"
import * as McpConfig from "./McpConfig.js"

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
export type Trust = "yes" | "ask" | "skip"

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

const readApprovals = (file: string): Effect.Effect<Approvals, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.either(fs.readFileString(file))
    if (Either.isLeft(text)) return { projects: {} }
    try {
      const parsed = JSON.parse(text.right) as unknown
      if (typeof parsed === "object" && parsed !== null && "projects" in parsed && typeof parsed.projects === "object") {
        return parsed as Approvals
      }
    } catch {
      // an unreadable approvals file asks again (and is rewritten on the next answer)
    }
    return { projects: {} }
  })

const writeApprovals = (file: string, approvals: Approvals): Effect.Effect<void, McpConfig.McpConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const tmp = `${file}.${process.pid}.tmp`
    yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true })
    yield* fs.writeFileString(tmp, `${JSON.stringify(approvals, null, 2)}\n`)
    yield* fs.rename(tmp, file)
  }).pipe(Effect.mapError((e) => new McpConfig.McpConfigError({ file, message: `cannot save MCP approvals to ${file}: ${e.message}` })))

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
      Effect.catchAll((e) => Effect.as(Effect.sync(() => notices.push(`${e.message}; its MCP servers are skipped`)), []))
    )
    const explicit = yield* Effect.forEach(
      options.explicitFiles,
      (f) => McpConfig.load(NodePath.resolve(options.cwd, f), "explicit", { missingOk: false })
    )
    const entries = McpConfig.merge(project, ...explicit)
    const approvalsFile = NodePath.join(options.home, APPROVALS_FILE)
    let approvals = yield* readApprovals(approvalsFile)
    const servers: Array<Planned> = []
    const skip = (entry: McpConfig.Entry, reason: string, notice: string | undefined) => {
      servers.push({ _tag: "Skipped", entry, reason })
      if (notice !== undefined) notices.push(notice)
    }
    for (const entry of entries) {
      if (entry.origin === "project" && options.trust !== "yes") {
        const print = McpConfig.fingerprint(entry)
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
          ).pipe(Effect.catchAll(() => Effect.succeed(undefined)))
          if (answer === undefined) {
            skip(entry, "not approved", `MCP server "${entry.name}" skipped (not approved)`)
            continue
          }
          const decision: Decision = answer ? "approved" : "rejected"
          approvals = {
            projects: {
              ...approvals.projects,
              [options.cwd]: { ...approvals.projects[options.cwd], [entry.name]: { fingerprint: print, decision } }
            }
          }
          yield* writeApprovals(approvalsFile, approvals)
          if (!answer) {
            skip(entry, "rejected by the user", undefined)
            continue
          }
        }
      }
      const resolved = McpConfig.resolve(entry, options.env)
      if (Either.isLeft(resolved)) {
        skip(entry, resolved.left, `${resolved.left}; skipped`)
        continue
      }
      servers.push({ _tag: "Ready", entry, resolved: resolved.right })
    }
    return { servers, notices }
  })
