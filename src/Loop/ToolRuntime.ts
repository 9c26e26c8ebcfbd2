/**
 * The tool runtime service: the global tool layer (T-1), the tool interception points (T-2), the
 * parallel cap `maxParallelToolCalls` (L-14) and the optional approval service (T-3). One per
 * program (or per embedding); every agent's scheduler runs against it.
 *
 * Built by {@link layer}: `maxParallelToolCalls` defaults to 10 and must be a positive integer,
 * else the layer fails with a {@link ToolConfigError} (`INVALID_CONFIG`); duplicate global names
 * fail with `DuplicateToolError`. The requirements of the global tools' bodies surface as the
 * layer's requirements. An `Approval` service present when the layer is built is captured.
 *
 * @example
 * ```ts
 * const Tools = ToolRuntime.layer({ tools: [echo, read], maxParallelToolCalls: 4 })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Approval from "./Approval.js"
import type * as Interception from "./Interception.js"
import type * as Tool from "./Tool.js"
import * as ToolHooks from "./ToolHooks.js"
import * as ToolRegistry from "./ToolRegistry.js"

/**
 * Invalid tool runtime configuration.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolConfigError extends Schema.TaggedError<ToolConfigError>()("ToolConfigError", {
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "INVALID_CONFIG" as const
}

/**
 * The service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly globals: ToolRegistry.Registry
  readonly hooks: ToolHooks.ToolHooks
  readonly maxParallelToolCalls: number
  readonly approval: Option.Option<Approval.Service>
}

/**
 * The tool runtime tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ToolRuntime extends Context.Service<ToolRuntime, Service>()("effect-harness/Loop/ToolRuntime") {}

/**
 * Options of {@link make} / {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends ReadonlyArray<Tool.Any>> {
  /** the global tools */
  readonly tools?: Tools
  /** cap of the rolling parallel pool (default 10; positive integer; 1 = serial) */
  readonly maxParallelToolCalls?: number
}

/**
 * The default parallel cap.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_PARALLEL_TOOL_CALLS = 10

/**
 * Builds the service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
  options: Options<Tools> = {}
): Effect.Effect<Service, ToolConfigError | ToolRegistry.DuplicateToolError, Tool.Requirements<Tools[number]>> =>
  Effect.gen(function*() {
    const max = options.maxParallelToolCalls ?? DEFAULT_MAX_PARALLEL_TOOL_CALLS
    if (!Number.isSafeInteger(max) || max < 1) {
      return yield* new ToolConfigError({
        message: `maxParallelToolCalls must be a positive integer, got ${String(max)}`
      })
    }
    const noTools: ReadonlyArray<Tool.Tool<never>> = []
    const globals = yield* ToolRegistry.make(options.tools ?? noTools)
    const hooks = yield* ToolHooks.make
    const approval = yield* Effect.serviceOption(Approval.Approval)
    return ToolRuntime.of({ globals, hooks, maxParallelToolCalls: max, approval })
  })

/**
 * The runtime as a layer.
 * Built afresh on every `provide` (`Layer.fresh`): Effect 4 reuses a layer an enclosing `provide` already
 * built, and two agent worlds must never share registered tools or tool points.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
  options: Options<Tools> = {}
): Layer.Layer<ToolRuntime, ToolConfigError | ToolRegistry.DuplicateToolError, Tool.Requirements<Tools[number]>> =>
  Layer.fresh(Layer.effect(ToolRuntime, make(options)))

/**
 * A runtime with no global tools, the default cap and no approval service (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefault: Layer.Layer<ToolRuntime> = Layer.orDie(layer())

/**
 * A view for one agent over the globals plus optional agent-scoped tools and restrictions.
 *
 * @since 0.1.0
 * @category accessors
 */
export const view = (options: {
  readonly scoped?: ToolRegistry.Registry
  readonly restrictions?: ToolRegistry.Restriction | ReadonlyArray<ToolRegistry.Restriction>
} = {}): Effect.Effect<ToolRegistry.View, never, ToolRuntime> =>
  Effect.map(ToolRuntime, (rt) => ToolRegistry.view({ ...options, global: rt.globals }))

/**
 * Registers a global tool for the lifetime of the scope.
 *
 * @since 0.1.0
 * @category registration
 */
export const registerTool = <R>(
  tool: Tool.Tool<R>
): Effect.Effect<void, ToolRegistry.DuplicateToolError, ToolRuntime | R | Scope.Scope> =>
  Effect.flatMap(ToolRuntime, (rt) => ToolRegistry.register(rt.globals, tool))

/**
 * Registers a pre-execute middleware (scoped; `{agentId}` for one agent).
 *
 * @since 0.1.0
 * @category registration
 */
export const onPreExecute = (
  middleware: Interception.Middleware<ToolHooks.CallInfo, ToolHooks.PreExecuteDecision>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, ToolRuntime | Scope.Scope> =>
  Effect.flatMap(ToolRuntime, (rt) => ToolHooks.onPreExecute(rt.hooks, middleware, options))

/**
 * Registers a guard (scoped).
 *
 * @since 0.1.0
 * @category registration
 */
export const addGuard = (
  guard: ToolHooks.Guard,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, ToolRuntime | Scope.Scope> =>
  Effect.flatMap(ToolRuntime, (rt) => ToolHooks.addGuard(rt.hooks, guard, options))

/**
 * Registers an execute wrapper (scoped).
 *
 * @since 0.1.0
 * @category registration
 */
export const onExecute = (
  wrapper: Interception.Middleware<ToolHooks.ExecuteInput, Tool.ToolExecutionResult>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, ToolRuntime | Scope.Scope> =>
  Effect.flatMap(ToolRuntime, (rt) => ToolHooks.onExecute(rt.hooks, wrapper, options))

/**
 * Registers a post-execute middleware (scoped).
 *
 * @since 0.1.0
 * @category registration
 */
export const onPostExecute = (
  middleware: Interception.Middleware<ToolHooks.PostExecuteInput, ToolHooks.PostExecuteDecision>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, ToolRuntime | Scope.Scope> =>
  Effect.flatMap(ToolRuntime, (rt) => ToolHooks.onPostExecute(rt.hooks, middleware, options))

/**
 * Registers a result observer (scoped, contained).
 *
 * @since 0.1.0
 * @category registration
 */
export const onResult = (
  listener: Interception.Listener<ToolHooks.ResultInput>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, ToolRuntime | Scope.Scope> =>
  Effect.flatMap(ToolRuntime, (rt) => ToolHooks.onResult(rt.hooks, listener, options))
