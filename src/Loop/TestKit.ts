/**
 * A test kit for users of the library: drive an agent deterministically in `@effect/vitest`
 * against the keyless scripted adapter and an in-memory session store, over the real Layers
 * (real `Llm` routing, real `Session`, real `SessionStore`, real tool scheduler).
 *
 * ```ts
 * import { it } from "@effect/vitest"
 * import * as Scripted from "effect-harness/Adapter/Scripted"
 * import * as TestKit from "effect-harness/Loop/TestKit"
 *
 * it.effect("echoes", () =>
 *   Effect.gen(function*() {
 *     const t = yield* TestKit.agent()
 *     yield* t.prompt("hi")
 *     expect(yield* t.texts).toEqual(["hello there"])
 *   }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("hello there")] }))))
 * ```
 *
 * The agent's default route is `provider: "scripted"`, `model: "test"`, matching the scripted
 * adapter the layer registers. `layer` uses the system prompt service without the harness
 * identity section (requests carry no `system` unless the test adds sections); pass
 * `identity: true` for the production default.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Result from "effect/Result"
import * as Scripted from "../Adapter/Scripted.js"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import * as ContentBlocks from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import * as Llm from "../Llm/Llm.js"
import type { GenerateOptions, Message } from "../Llm/Message.js"
import type { RegistryError } from "../Llm/LlmError.js"
import * as Reconstruct from "../Session/Reconstruct.js"
import type { Session } from "../Session/Session.js"
import type { SessionError } from "../Session/SessionError.js"
import type { SessionEvent, TurnEndReason } from "../Session/SessionEvent.js"
import type * as SessionPersistence from "../Session/SessionPersistence.js"
import * as SessionStore from "../Session/SessionStore.js"
import * as Agent from "./Agent.js"
import type { AgentError } from "./AgentControl.js"
import * as Hooks from "./Hooks.js"
import * as SystemPrompt from "./SystemPrompt.js"
import type * as Tool from "./Tool.js"
import type * as ToolRegistry from "./ToolRegistry.js"
import * as ToolRuntime from "./ToolRuntime.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends ReadonlyArray<Tool.Any>, PE = never, PR = never> {
  /** one scripted response per model call */
  readonly script: Scripted.Script
  /** global tools (agents may add their own) */
  readonly tools?: Tools
  /** the runtime's parallel cap */
  readonly maxParallelToolCalls?: number
  /** register the harness identity section (default false) */
  readonly identity?: boolean
  /** the scripted adapter's route (default `"scripted"`) */
  readonly provider?: string
  /** the persistence backend under the session store (default: in memory), e.g. `Jsonl.layer({ dir })` */
  readonly persistence?: Layer.Layer<SessionPersistence.SessionPersistence, PE, PR>
}

/**
 * Everything an agent needs, with the scripted adapter and an in-memory store.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | Agent.AgentFactory
  | Llm.Llm
  | Hooks.LoopHooks
  | SystemPrompt.SystemPrompt
  | ToolRuntime.ToolRuntime
  | Scripted.Recorder
  | SessionStore.SessionStore

/**
 * The test layer: one scripted world (adapter, hooks, system prompt, tool runtime, store, factory), built afresh
 * on every `provide`, even inside another test layer's.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <const Tools extends ReadonlyArray<Tool.Any> = readonly [], PE = never, PR = never>(
  options: Options<Tools, PE, PR>
): Layer.Layer<
  Services,
  RegistryError | ToolRuntime.ToolConfigError | ToolRegistry.DuplicateToolError | PE,
  Tool.Requirements<Tools[number]> | PR
> => {
  const base = Layer.mergeAll(
    Llm.layer,
    Hooks.layer,
    options.identity === true ? SystemPrompt.layer : SystemPrompt.layerEmpty,
    ToolRuntime.layer({
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      ...(options.maxParallelToolCalls === undefined ? {} : { maxParallelToolCalls: options.maxParallelToolCalls })
    }),
    options.persistence === undefined
      ? SessionStore.layerMemory
      : SessionStore.layer.pipe(Layer.provide(options.persistence))
  )
  const scripted = Scripted.layerLlm(options.script, options.provider === undefined ? {} : { provider: options.provider })
  // fresh: Effect 4 reuses a layer an enclosing `provide` already built (module-level layers such as `Hooks.layer`
  // and `Agent.layer` are the same values in every call), so a test layer provided inside another would share its
  // hooks, store and factory; each test layer is its own world
  return Layer.fresh(Layer.provideMerge(Layer.merge(Agent.layer, scripted), base))
}

/**
 * An agent plus helpers for assertions.
 *
 * @since 0.1.0
 * @category models
 */
export interface TestAgent {
  readonly agent: Agent.Agent
  /** send a prompt (text or blocks) and wait until the agent is idle */
  readonly prompt: (content: string | ReadonlyArray<ContentBlock>) => Effect.Effect<void, AgentError>
  /** every logged event */
  readonly events: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>
  /** the event types, in log order */
  readonly types: Effect.Effect<ReadonlyArray<string>, SessionError>
  /** the end reason of every turn, in order */
  readonly turnEnds: Effect.Effect<ReadonlyArray<TurnEndReason>, SessionError>
  /** the model history (`deriveMessages`) */
  readonly history: Effect.Effect<ReadonlyArray<Message>>
  /** the text of every assistant message, in order */
  readonly texts: Effect.Effect<ReadonlyArray<string>, SessionError>
  /** every request the scripted adapter received */
  readonly requests: Effect.Effect<ReadonlyArray<GenerateOptions>>
  /** the first event of this agent's log matching `predicate`, waiting for it when not logged yet */
  readonly waitFor: WaitFor
  /**
   * Fails with {@link ReconstructionMismatch} unless every request this agent sent equals, in
   * order, a request rebuilt from its log alone (what the model saw is what the log says).
   */
  readonly checkRequests: Effect.Effect<void, ReconstructionMismatch | SessionError>
}

/**
 * Waits for the first event matching a predicate (a refinement narrows the result).
 *
 * @since 0.1.0
 * @category models
 */
export interface WaitFor {
  <E extends SessionEvent>(predicate: (event: SessionEvent) => event is E): Effect.Effect<E, SessionError>
  (predicate: (event: SessionEvent) => boolean): Effect.Effect<SessionEvent, SessionError>
}

/**
 * The first event of `session` matching `predicate`: an already logged one, else the next one
 * committed (the subscription is taken before the log is read, so none is missed).
 *
 * @since 0.1.0
 * @category testing
 */
export function waitForEvent<E extends SessionEvent>(
  session: Session,
  predicate: (event: SessionEvent) => event is E
): Effect.Effect<E, SessionError>
export function waitForEvent(
  session: Session,
  predicate: (event: SessionEvent) => boolean
): Effect.Effect<SessionEvent, SessionError>
export function waitForEvent(
  session: Session,
  predicate: (event: SessionEvent) => boolean
): Effect.Effect<SessionEvent, SessionError> {
  return waitForEventTraced(session, predicate)
}

const waitForEventTraced = Effect.fn("TestKit.waitForEvent")(function*(
  session: Session,
  predicate: (event: SessionEvent) => boolean
) {
  return yield* Effect.scoped(Effect.gen(function*() {
    const changes = yield* session.subscribe
    const logged = yield* session.events
    const found = logged.find(predicate)
    if (found !== undefined) return found
    for (;;) {
      const event = yield* PubSub.take(changes)
      if (event.seq >= logged.length && predicate(event)) return event
    }
  }))
})

/**
 * A request the model received that no request rebuilt from the log equals.
 *
 * @since 0.1.0
 * @category errors
 */
export class ReconstructionMismatch extends Schema.TaggedError<ReconstructionMismatch>()("ReconstructionMismatch", {
  message: Schema.String,
  /** the request, canonical JSON (without `sessionId`) */
  request: Schema.String,
  /** every request rebuilt from the log, canonical JSON */
  rebuilt: Schema.Array(Schema.String)
}) {}

const canonicalRequest = (request: GenerateOptions): string => {
  const { sessionId: _routing, ...rest } = request
  return Result.match(Json.copyJson(rest), { onFailure: (e) => `<not JSON: ${e.message}>`, onSuccess: Json.canonical })
}

/**
 * Checks that `requests` (those of `sessionId`; the rest are ignored) equal, in order, requests
 * rebuilt from `events` alone by `Reconstruct.reconstruct` (a retried attempt may equal the same
 * step's request again). `undefined` when they do.
 *
 * @since 0.1.0
 * @category testing
 */
export const reconstructionMismatch = (
  sessionId: string,
  events: ReadonlyArray<SessionEvent>,
  requests: ReadonlyArray<GenerateOptions>
): ReconstructionMismatch | undefined => {
  const rebuilt = Reconstruct.reconstruct(events).flatMap((s) => (s.request === undefined ? [] : [canonicalRequest(s.request)]))
  let at = 0
  for (const request of requests) {
    if (request.sessionId !== sessionId) continue
    const wanted = canonicalRequest(request)
    const k = rebuilt.indexOf(wanted, at)
    if (k < 0) {
      return new ReconstructionMismatch({
        message: `a request of session ${sessionId} is not what its log rebuilds`,
        request: wanted,
        rebuilt
      })
    }
    at = k
  }
  return undefined
}

/**
 * Creates an agent (default route `scripted` / `test`) with helpers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const agent = <const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
  options: Agent.AgentOptions<Tools> = {}
): Effect.Effect<
  TestAgent,
  Agent.CreateError,
  Agent.AgentFactory | Scripted.Recorder | Scope.Scope | Tool.Requirements<Tools[number]>
> =>
  Effect.gen(function*() {
    const recorder = yield* Scripted.Recorder
    const a = yield* Agent.make({ provider: "scripted", model: "test", ...options })
    const events = a.session.events
    function waitFor<E extends SessionEvent>(predicate: (event: SessionEvent) => event is E): Effect.Effect<E, SessionError>
    function waitFor(predicate: (event: SessionEvent) => boolean): Effect.Effect<SessionEvent, SessionError>
    function waitFor(predicate: (event: SessionEvent) => boolean): Effect.Effect<SessionEvent, SessionError> {
      return waitForEvent(a.session, predicate)
    }
    return {
      agent: a,
      prompt: (content) =>
        Effect.andThen(
          a.send(typeof content === "string" ? [ContentBlocks.text(content)] : content),
          a.whenIdle
        ),
      events,
      types: Effect.map(events, (es) => es.map((e) => e.type)),
      turnEnds: Effect.map(events, (es) => es.flatMap((e) => (e.type === "turn/end" ? [e.data.reason] : []))),
      history: a.session.deriveMessages,
      texts: Effect.map(events, (es) =>
        es.flatMap((e) => (e.type === "assistant/message" ? [ContentBlocks.flattenText(e.data.content)] : []))),
      requests: recorder.requests,
      waitFor,
      checkRequests: Effect.flatMap(Effect.zip(events, recorder.requests), ([es, requests]) => {
        const mismatch = reconstructionMismatch(a.id, es, requests)
        return mismatch === undefined ? Effect.void : Effect.fail(mismatch)
      })
    }
  })
