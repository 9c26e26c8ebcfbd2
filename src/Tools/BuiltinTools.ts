/**
 * The built-in tools of the coding agent: `read`, `write`, `edit`, `ls`, `glob`, `grep`, `bash`.
 *
 * The tools' bodies need the {@link Workspace.Workspace} they are confined to plus the platform
 * `FileSystem` and `Path`; registering them (with {@link register} or {@link layer}) captures
 * those services, so the CLI provides `Workspace.layer(root)` and `NodeServices.layer` once.
 *
 * @example
 * ```ts
 * const Tools = Layer.mergeAll(
 *   BuiltinTools.layer(),                       // registers the seven tools globally
 *   Layer.effectDiscard(Approval.register(Approval.modeFor({ yes, interactive })))
 * ).pipe(
 *   Layer.provideMerge(ToolRuntime.layer().pipe(Layer.provide(Approval.layer(prompt)))),
 *   Layer.provide(Workspace.layer(cwd)),
 *   Layer.provide(NodeServices.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Checkpointed from "../Checkpoint/Checkpointed.js"
import type * as Tool from "../Loop/Tool.js"
import type * as ToolRegistry from "../Loop/ToolRegistry.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as Bash from "./Bash.js"
import * as Edit from "./Edit.js"
import * as Glob from "./Glob.js"
import * as Grep from "./Grep.js"
import * as Sandbox from "./Sandbox.js"
import * as Scrub from "./internal/Scrub.js"
import * as Ls from "./Ls.js"
import * as Notice from "./Notice.js"
import * as Read from "./Read.js"
import type * as Workspace from "./Workspace.js"
import * as Write from "./Write.js"

export * as Bash from "./Bash.js"
export * as Edit from "./Edit.js"
export * as Glob from "./Glob.js"
export * as Grep from "./Grep.js"
export * as Ls from "./Ls.js"
export * as Read from "./Read.js"
export * as ToolError from "./ToolError.js"
export * as Workspace from "./Workspace.js"
export * as Write from "./Write.js"

/**
 * What the built-in tools' bodies need.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Workspace.Workspace | FileSystem.FileSystem | Path.Path

/**
 * Options of {@link tools}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** tunables of `bash` (timeouts, output cap, kill grace) */
  readonly bash?: Bash.Options
  /** the sandbox policy of `bash` (overrides the one in `bash`) */
  readonly sandbox?: Sandbox.Policy
}

const bashOptions = (options: Options): Bash.Options | undefined =>
  options.sandbox === undefined ? options.bash : { ...(options.bash ?? Bash.defaultOptions), sandbox: options.sandbox }

/**
 * The seven built-in tools, in a stable order, each with its output scrubbed of configured
 * secrets (see `internal/Scrub`).
 *
 * @since 0.1.0
 * @category tools
 */
export const tools = (options: Options = {}): ReadonlyArray<Tool.Tool<Requirements>> => {
  const bash = bashOptions(options)
  return [
    Read.tool,
    Write.tool,
    Edit.tool,
    Ls.tool,
    Glob.tool,
    Grep.tool,
    bash === undefined ? Bash.tool : Bash.makeTool(bash)
  ].map(Scrub.wrap).map(Checkpointed.wrapBuiltin)
}

/**
 * The tool names.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<string> = ["read", "write", "edit", "ls", "glob", "grep", "bash"]

/**
 * Registers every built-in tool in the global layer of the tool runtime for the scope. When the
 * bash sandbox is asked for but unavailable here (probed once), says so once (`Notice`).
 *
 * @since 0.1.0
 * @category registration
 */
export const register = (
  options: Options = {}
): Effect.Effect<void, ToolRegistry.DuplicateToolError, ToolRuntime.ToolRuntime | Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const line = Sandbox.fallbackNotice((bashOptions(options) ?? Bash.defaultOptions).sandbox)
    if (line !== undefined) yield* (yield* Notice.Notice)(line)
    yield* Effect.forEach(tools(options), (tool) => ToolRuntime.registerTool(tool), { discard: true })
  })

/**
 * {@link register} as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, ToolRegistry.DuplicateToolError, ToolRuntime.ToolRuntime | Requirements> =>
  Layer.effectDiscard(register(options))
