/**
 * The tool interception points (T-2, §8.11, H-3, DEC-2), built on the `Interception` primitives:
 *
 * | point | mode | may |
 * |---|---|---|
 * | `pre-execute` | waterfall, terminal `Allow` | `Allow` / `Deny{reason}` / `Ask{reason?}` |
 * | `guard` | every guard in order | only deny (L-37: final authority, cannot grant) |
 * | `execute` | waterfall around dispatch | observe/replace the outcome; change only the signal |
 * | `post-execute` | waterfall, terminal `Accept{}` | `Accept{content?, additionalContexts?}` / `Block{feedback, additionalContexts?}` |
 * | `result` | contained notification | observe the final, immutable result |
 *
 * Registration is scoped and may be agent-scoped (`{agentId}`), see `Interception`. Decision
 * unions are closed; a value that is not one of them is treated as a failing listener.
 *
 * Decisions where the spec is silent (DEC-10):
 * - A guard returning anything but a `Deny` passes (it cannot grant); a failing guard yields a
 *   final error result like a failing pre-execute listener (fail closed).
 * - Guards run after a pre-execute `Allow` or `Ask` (before the approval prompt, so the user is
 *   never asked about a call policy would deny anyway), never after a `Deny`.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { CallId, ContentBlock } from "../Llm/ContentBlock.js"
import type { Json } from "../Llm/Json.js"
import type { AgentControl } from "./AgentControl.js"
import type { HookContext } from "./HookContext.js"
import * as Interception from "./Interception.js"
import type { StepSignal } from "./StepSignal.js"
import type * as Tool from "./Tool.js"

/**
 * What every tool point sees about a call.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallInfo {
  readonly callId: CallId
  readonly name: string
  /** stable per call across a crash and a resume (DEC-16) */
  readonly idempotencyKey: string
  /** the parsed, frozen arguments (L-13); never rewritten (T-2) */
  readonly arguments: Json
  readonly agent: AgentControl
  readonly turn: number
  readonly step: number
  /** the step's abort signal */
  readonly signal: StepSignal
}

/**
 * The pre-execute decision (H-3).
 *
 * @since 0.1.0
 * @category models
 */
export type PreExecuteDecision = Data.TaggedEnum<{
  Allow: {}
  Deny: { readonly reason: string }
  Ask: { readonly reason?: string }
}>

/**
 * Constructors and matchers of {@link PreExecuteDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const PreExecuteDecision = Data.taggedEnum<PreExecuteDecision>()

/**
 * A guard's denial.
 *
 * @since 0.1.0
 * @category models
 */
export type Denial = Data.TaggedEnum.Value<PreExecuteDecision, "Deny">

/**
 * A guard: returns a {@link Denial} to deny, anything else to pass.
 *
 * unknown-error: user callback. Any failure becomes an `Interception.HookFailure` of the guard point.
 *
 * @since 0.1.0
 * @category models
 */
export type Guard = (input: CallInfo) => Effect.Effect<Denial | void, unknown>

/**
 * What an execute wrapper sees; `next({...input, signal})` may change only the signal.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteInput extends CallInfo {
  /** the visible tool, `None` when unknown or hidden */
  readonly tool: Option.Option<Tool.Tool<never>>
}

/**
 * The post-execute decision (H-3).
 *
 * @since 0.1.0
 * @category models
 */
export type PostExecuteDecision = Data.TaggedEnum<{
  Accept: { readonly content?: ReadonlyArray<ContentBlock>; readonly additionalContexts?: ReadonlyArray<HookContext> }
  Block: { readonly feedback: ReadonlyArray<ContentBlock>; readonly additionalContexts?: ReadonlyArray<HookContext> }
}>

/**
 * Constructors and matchers of {@link PostExecuteDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const PostExecuteDecision = Data.taggedEnum<PostExecuteDecision>()

/**
 * What post-execute sees: the call and the outcome so far (frozen).
 *
 * @since 0.1.0
 * @category models
 */
export interface PostExecuteInput extends CallInfo {
  readonly result: Tool.ToolExecutionResult
}

/**
 * What the result notification sees: the final result, exactly as it will be logged (frozen).
 *
 * @since 0.1.0
 * @category models
 */
export interface ResultInput extends CallInfo {
  readonly result: Tool.ToolExecutionResult
}

/**
 * The five tool points.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolHooks {
  readonly preExecute: Interception.Waterfall<CallInfo, PreExecuteDecision>
  readonly guard: Interception.Waterfall<CallInfo, Denial | undefined>
  readonly execute: Interception.Waterfall<ExecuteInput, Tool.ToolExecutionResult>
  readonly postExecute: Interception.Waterfall<PostExecuteInput, PostExecuteDecision>
  readonly result: Interception.Notify<ResultInput>
}

/**
 * Fresh points with no listeners.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ToolHooks> = Effect.all({
  preExecute: Interception.waterfall<CallInfo, PreExecuteDecision>("tool/pre-execute"),
  guard: Interception.waterfall<CallInfo, Denial | undefined>("tool/guard"),
  execute: Interception.waterfall<ExecuteInput, Tool.ToolExecutionResult>("tool/execute"),
  postExecute: Interception.waterfall<PostExecuteInput, PostExecuteDecision>("tool/post-execute"),
  result: Interception.notify<ResultInput>("tool/result")
})

/**
 * `true` for a `Deny` decision value (runtime check of a closed union).
 *
 * @since 0.1.0
 * @category guards
 */
export const isDenial = (u: unknown): u is Denial =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "Deny" &&
  typeof (u as { reason?: unknown }).reason === "string"

/**
 * Registers a pre-execute middleware for the scope.
 *
 * @since 0.1.0
 * @category registration
 */
export const onPreExecute = (
  hooks: ToolHooks,
  middleware: Interception.Middleware<CallInfo, PreExecuteDecision>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, Scope.Scope> => hooks.preExecute.register(middleware, options)

/**
 * Registers a guard for the scope. A guard cannot skip later guards nor grant: it either denies
 * or passes (L-37).
 *
 * @since 0.1.0
 * @category registration
 */
export const addGuard = (
  hooks: ToolHooks,
  guard: Guard,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, Scope.Scope> =>
  hooks.guard.register(
    (input, next) =>
      Effect.flatMap(Effect.suspend(() => guard(input)), (verdict) =>
        isDenial(verdict) ? Effect.succeed(verdict) : next()),
    options
  )

/**
 * Registers an execute wrapper (around dispatch) for the scope.
 *
 * @since 0.1.0
 * @category registration
 */
export const onExecute = (
  hooks: ToolHooks,
  wrapper: Interception.Middleware<ExecuteInput, Tool.ToolExecutionResult>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, Scope.Scope> => hooks.execute.register(wrapper, options)

/**
 * Registers a post-execute middleware for the scope. A context-only listener should delegate
 * first and add its contexts to the downstream decision (H-5).
 *
 * @since 0.1.0
 * @category registration
 */
export const onPostExecute = (
  hooks: ToolHooks,
  middleware: Interception.Middleware<PostExecuteInput, PostExecuteDecision>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, Scope.Scope> => hooks.postExecute.register(middleware, options)

/**
 * Registers a result observer for the scope (contained).
 *
 * @since 0.1.0
 * @category registration
 */
export const onResult = (
  hooks: ToolHooks,
  listener: Interception.Listener<ResultInput>,
  options?: Interception.RegisterOptions
): Effect.Effect<void, never, Scope.Scope> => hooks.result.register(listener, options)
