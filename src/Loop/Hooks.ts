/**
 * The loop interception points of §8.11 (H-1..H-5) as one service, {@link LoopHooks}, built from
 * the {@link Interception} primitives (DEC-2). Embedders register listeners in a `Scope`
 * (closing it unregisters) and may scope a listener to one agent (`{agentId}`, L-36).
 *
 * | Point | Mode | Output |
 * |---|---|---|
 * | `sessionStart` | notify | – (may `inject`) |
 * | `promptSubmit` | waterfall | {@link PromptDecision} `Allow{content?, additionalContexts?}` \| `Block{reason}` |
 * | `preStep`, `postStep` | serial | – (may append to the log) |
 * | `sessionPrefix` | waterfall | the request-only prefix messages (L-35) |
 * | `request` | waterfall | the call config (config only) |
 * | `stepResult` | waterfall | the assistant message (may rewrite) |
 * | `requestError` | waterfall | {@link RequestErrorDecision} `Retry` \| `Fail` |
 * | `turnContinuation` | waterfall | {@link ContinuationDecision} `Stop` \| `Continue{reason?}` |
 * | `turnStop` | serial, monotonic | {@link TurnStopDecision} `Stop` \| `Pass` (or nothing) |
 * | `preCompact` | waterfall | {@link PreCompactDecision} `Proceed{instructions}` \| `Veto{reason}` (K-14) |
 * | `postCompact` | serial | – (sees the summary; may `inject`) (K-14) |
 * | `status`, `queued`, `error`, `created`, `disposed` | notify | – |
 *
 * Decisions taken where the spec is silent (DEC-10):
 * - `turnStop` runs every listener in order even after one said stop (U-3: any stop is final; a
 *   later listener cannot undo it, L-37); a failing listener fails the turn.
 * - the defaults (the terminal of each waterfall) are: prompt `Allow{}`, prefix = the seed,
 *   request = the seed config, step-result = the message, request-error `Fail`, continuation =
 *   the loop's default decision (L-23).
 * - every input carries the agent as a {@link HookAgent} (its verbs, session and options), so a
 *   listener can `inject`/`steer`/`cancel` the agent it runs for.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import type { LlmCallConfig, Message, MessageSource } from "../Llm/Message.js"
import type { Session } from "../Session/Session.js"
import type { TurnEndReason } from "../Session/SessionEvent.js"
import type { AgentControl } from "./AgentControl.js"
import type { HookContext } from "./HookContext.js"
import * as Interception from "./Interception.js"
import type { StepSignal } from "./StepSignal.js"

/**
 * The agent as listeners see it: its verbs, its session and its routing options.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookAgent extends AgentControl {
  readonly session: Session
  readonly options: { readonly provider?: string; readonly model?: string }
}

/**
 * Agent status (L-6).
 *
 * @since 0.1.0
 * @category models
 */
export type Status = "idle" | "running" | "disposed"

// ---------------------------------------------------------------------------------------------
// Decisions (closed unions, H-3)

/**
 * The prompt-submit decision (H-3): allow (optionally replacing the content and adding contexts
 * that land right after the prompt, H-4) or block with a reason.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptDecision = Data.TaggedEnum<{
  Allow: {
    readonly content?: ReadonlyArray<ContentBlock>
    readonly additionalContexts?: ReadonlyArray<HookContext>
  }
  Block: { readonly reason: string }
}>

/**
 * Constructors and matchers of {@link PromptDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const PromptDecision = Data.taggedEnum<PromptDecision>()

/**
 * The request-error decision (L-20): retry with a new numbered step, or fail the turn.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestErrorDecision = Data.TaggedEnum<{ Retry: {}; Fail: {} }>

/**
 * Constructors and matchers of {@link RequestErrorDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const RequestErrorDecision = Data.taggedEnum<RequestErrorDecision>()

/**
 * A continuation reason: queued as steering before the next step (L-24; no meta).
 *
 * @since 0.1.0
 * @category models
 */
export interface ContinuationReason {
  readonly content: ReadonlyArray<ContentBlock>
  readonly source: MessageSource
}

/**
 * The turn-continuation decision (L-24). `End{reason}` ends the turn now with that end reason
 * (e.g. a command hook's `continue:false`, HB-7), skipping `turn-stop`; an abort still wins (L-27).
 *
 * @since 0.1.0
 * @category models
 */
export type ContinuationDecision = Data.TaggedEnum<{
  Stop: {}
  Continue: { readonly reason?: ContinuationReason }
  End: { readonly reason: TurnEndReason }
}>

/**
 * Constructors and matchers of {@link ContinuationDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ContinuationDecision = Data.taggedEnum<ContinuationDecision>()

/**
 * The turn-stop vote (L-26): `Stop` makes stopping final; `Pass` (or returning nothing) abstains.
 *
 * @since 0.1.0
 * @category models
 */
export type TurnStopDecision = Data.TaggedEnum<{ Stop: {}; Pass: {} }>

/**
 * Constructors and matchers of {@link TurnStopDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const TurnStopDecision = Data.taggedEnum<TurnStopDecision>()

/**
 * The pre-compact decision (K-14): proceed (with the summary instructions to use) or veto. A veto
 * stops an automatic compaction (threshold, overflow); a manual one ignores it.
 *
 * @since 0.1.0
 * @category models
 */
export type PreCompactDecision = Data.TaggedEnum<{
  Proceed: { readonly instructions: ReadonlyArray<string> }
  Veto: { readonly reason: string }
}>

/**
 * Constructors and matchers of {@link PreCompactDecision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const PreCompactDecision = Data.taggedEnum<PreCompactDecision>()

// ---------------------------------------------------------------------------------------------
// Inputs

/**
 * `pre-compact` input (K-14): why and how full; `instructions` = the extra summary instructions
 * so far (a manual compaction's own, then what earlier listeners added).
 *
 * @since 0.1.0
 * @category models
 */
export interface PreCompactInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly trigger: "threshold" | "overflow" | "manual"
  readonly pressureTokens: number
  readonly contextWindow: number
  readonly instructions: ReadonlyArray<string>
}

/**
 * `post-compact` input (K-14): the outcome; `summary` is the text that entered the surface (absent
 * when only the cheap pass ran or the compaction failed).
 *
 * @since 0.1.0
 * @category models
 */
export interface PostCompactInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly trigger: "threshold" | "overflow" | "manual"
  readonly summary: string | undefined
  readonly pressureBefore: number
  readonly pressureAfter: number
  readonly error: { readonly code: string; readonly message: string } | undefined
}

/**
 * `session-start` input (L-7): `startup` for fresh and forked creates, `resume` after a load.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionStartInput {
  readonly agent: HookAgent
  readonly source: "startup" | "resume"
}

/**
 * `prompt-submit` input: one queued prompt of the turn's batch (L-11.2).
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptSubmitInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly content: ReadonlyArray<ContentBlock>
  readonly source: MessageSource
}

/**
 * `pre-step` / `post-step` input (L-12.6, L-12.14). The signal may already be aborted in post-step.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly step: number
  readonly signal: StepSignal
}

/**
 * `session-prefix` input (L-35): `prefix` is the frozen downstream seed (empty at the start).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionPrefixInput {
  readonly agent: HookAgent
  readonly prefix: ReadonlyArray<Message>
  readonly signal: StepSignal
}

/**
 * `request` input (L-12.8): the frozen config seed.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly step: number
  readonly config: LlmCallConfig
}

/**
 * `step-result` input (L-12.11, L-12.12): the assembled assistant message (a detached copy).
 *
 * @since 0.1.0
 * @category models
 */
export interface StepResultInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly step: number
  readonly message: Message
}

/**
 * A model-request failure as offered to `request-error` (L-20).
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestFailure {
  readonly message: string
  readonly code?: string
  /** the original error value (a `ProviderError`, or the in-band finish reason) */
  readonly cause: unknown
}

/**
 * `request-error` input (L-20): `attempt` counts consecutive prior retries (0-based).
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestErrorInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly step: number
  readonly error: RequestFailure
  readonly attempt: number
  readonly signal: StepSignal
}

/**
 * `turn-continuation` input (L-24): the loop's default decision (L-23).
 *
 * @since 0.1.0
 * @category models
 */
export interface ContinuationInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly step: number
  readonly default: ContinuationDecision
}

/**
 * `turn-stop` input (L-26).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnStopInput {
  readonly agent: HookAgent
  readonly turn: number
}

/**
 * `status` notification (L-6).
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusInput {
  readonly agent: HookAgent
  readonly status: Status
}

/**
 * `queued` notification (L-1, L-2).
 *
 * @since 0.1.0
 * @category models
 */
export interface QueuedInput {
  readonly agent: HookAgent
  readonly content: ReadonlyArray<ContentBlock>
  readonly source: MessageSource
  readonly steering: boolean
}

/**
 * An agent error (L-10, L-11.5, L-20.6, D-7): reported live, never as an event. `step` is 0
 * before the first step (and for flush failures).
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentFailure {
  readonly turn?: number
  readonly step: number
  readonly message: string
  readonly code?: string
  readonly cause?: unknown
}

/**
 * `error` notification.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorInput {
  readonly agent: HookAgent
  readonly error: AgentFailure
}

/**
 * `created` / `disposed` notification.
 *
 * @since 0.1.0
 * @category models
 */
export interface LifecycleInput {
  readonly agent: HookAgent
}

// ---------------------------------------------------------------------------------------------
// The monotonic turn-stop point

/**
 * A turn-stop listener: `Stop` is final; `Pass` or nothing abstains.
 *
 * unknown-error: user callback. Any failure becomes an `Interception.HookFailure` of `turn-stop`.
 *
 * @since 0.1.0
 * @category models
 */
export type TurnStopListener = (input: TurnStopInput) => Effect.Effect<TurnStopDecision | void, unknown>

/**
 * The serial, monotonic `turn-stop` point (L-26, L-37): every listener runs in order; the result
 * is `true` when any voted `Stop`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnStopPoint {
  readonly name: string
  readonly register: (
    listener: TurnStopListener,
    options?: Interception.RegisterOptions
  ) => Effect.Effect<void, never, Scope.Scope>
  readonly run: (agentId: string | undefined, input: TurnStopInput) => Effect.Effect<boolean, Interception.HookFailure>
}

interface TurnStopRun {
  readonly input: TurnStopInput
  readonly stopped: Ref.Ref<boolean>
}

const turnStopPoint: Effect.Effect<TurnStopPoint> = Effect.map(
  Interception.serial<TurnStopRun>("turn-stop"),
  (serial) => ({
    name: serial.name,
    register: (listener, options) =>
      serial.register(
        (run) =>
          Effect.flatMap(Effect.suspend(() => listener(run.input)), (decision) =>
            decision !== undefined && decision._tag === "Stop" ? Ref.set(run.stopped, true) : Effect.void),
        options
      ),
    run: (agentId, input) =>
      Effect.flatMap(
        Ref.make(false),
        (stopped) => Effect.andThen(serial.run(agentId, { input, stopped }), Ref.get(stopped))
      )
  })
)

// ---------------------------------------------------------------------------------------------
// The service

/**
 * Every loop interception point.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly sessionStart: Interception.Notify<SessionStartInput>
  readonly promptSubmit: Interception.Waterfall<PromptSubmitInput, PromptDecision>
  readonly preStep: Interception.Serial<StepInput>
  readonly postStep: Interception.Serial<StepInput>
  readonly sessionPrefix: Interception.Waterfall<SessionPrefixInput, ReadonlyArray<Message>>
  readonly request: Interception.Waterfall<RequestInput, LlmCallConfig>
  readonly stepResult: Interception.Waterfall<StepResultInput, Message>
  readonly requestError: Interception.Waterfall<RequestErrorInput, RequestErrorDecision>
  readonly turnContinuation: Interception.Waterfall<ContinuationInput, ContinuationDecision>
  readonly turnStop: TurnStopPoint
  readonly preCompact: Interception.Waterfall<PreCompactInput, PreCompactDecision>
  readonly postCompact: Interception.Serial<PostCompactInput>
  readonly status: Interception.Notify<StatusInput>
  readonly queued: Interception.Notify<QueuedInput>
  readonly error: Interception.Notify<ErrorInput>
  readonly created: Interception.Notify<LifecycleInput>
  readonly disposed: Interception.Notify<LifecycleInput>
}

/**
 * The loop interception points service.
 *
 * @since 0.1.0
 * @category tags
 */
export class LoopHooks extends Context.Service<LoopHooks, Service>()("effect-harness/Loop/LoopHooks") {}

/**
 * Creates a fresh set of points (no listeners).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service> = Effect.all({
  sessionStart: Interception.notify<SessionStartInput>("session-start"),
  promptSubmit: Interception.waterfall<PromptSubmitInput, PromptDecision>("prompt-submit"),
  preStep: Interception.serial<StepInput>("pre-step"),
  postStep: Interception.serial<StepInput>("post-step"),
  sessionPrefix: Interception.waterfall<SessionPrefixInput, ReadonlyArray<Message>>("session-prefix"),
  request: Interception.waterfall<RequestInput, LlmCallConfig>("request"),
  stepResult: Interception.waterfall<StepResultInput, Message>("step-result"),
  requestError: Interception.waterfall<RequestErrorInput, RequestErrorDecision>("request-error"),
  turnContinuation: Interception.waterfall<ContinuationInput, ContinuationDecision>("turn-continuation"),
  turnStop: turnStopPoint,
  preCompact: Interception.waterfall<PreCompactInput, PreCompactDecision>("pre-compact"),
  postCompact: Interception.serial<PostCompactInput>("post-compact"),
  status: Interception.notify<StatusInput>("status"),
  queued: Interception.notify<QueuedInput>("queued"),
  error: Interception.notify<ErrorInput>("error"),
  created: Interception.notify<LifecycleInput>("created"),
  disposed: Interception.notify<LifecycleInput>("disposed")
})

/**
 * The points as a Layer (one set per layer build).
 * Built afresh on every `provide` (`Layer.fresh`): Effect 4 reuses a layer an enclosing `provide` already
 * built, and two agent worlds must never share registrations.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<LoopHooks> = Layer.fresh(Layer.effect(LoopHooks, make))
