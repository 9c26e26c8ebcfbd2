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
 * it.scoped("echoes", () =>
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
import type * as Scope from "effect/Scope"
import * as Scripted from "../Adapter/Scripted.js"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import * as ContentBlocks from "../Llm/ContentBlock.js"
import * as Llm from "../Llm/Llm.js"
import type { GenerateOptions, Message } from "../Llm/Message.js"
import type { RegistryError } from "../Llm/LlmError.js"
import type { SessionError } from "../Session/SessionError.js"
import type { SessionEvent, TurnEndReason } from "../Session/SessionEvent.js"
import type * as SessionPersistence from "../Session/SessionPersistence.js"
import * as SessionStore from "../Session/SessionStore.js"
import * as Agent from "./Agent.js"
import type { AgentError } from "./AgentControl.js"
import * as Hooks from "./Hooks.js"
import * as Sessions from "./internal/Sessions.js"
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
export interface Options<Tools extends ReadonlyArray<Tool.Any>> {
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
  /** the persistence backend under the session store (default: in memory) */
  readonly persistence?: Layer.Layer<SessionPersistence.SessionPersistence>
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
  | Sessions.Provided

/**
 * The test layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
  options: Options<Tools>
): Layer.Layer<
  Services,
  RegistryError | ToolRuntime.ToolConfigError | ToolRegistry.DuplicateToolError,
  Tool.Requirements<Tools[number]>
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
      ? Sessions.layerMemory
      : SessionStore.layer.pipe(Layer.provide(options.persistence))
  )
  const scripted = Scripted.layerLlm(options.script, options.provider === undefined ? {} : { provider: options.provider })
  return Layer.provideMerge(Layer.merge(Agent.layer, scripted), base)
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
    return {
      agent: a,
      prompt: (content) =>
        Effect.zipRight(
          a.send(typeof content === "string" ? [ContentBlocks.text(content)] : content),
          a.whenIdle
        ),
      events,
      types: Effect.map(events, (es) => es.map((e) => e.type)),
      turnEnds: Effect.map(events, (es) => es.flatMap((e) => (e.type === "turn/end" ? [e.data.reason] : []))),
      history: a.session.deriveMessages,
      texts: Effect.map(events, (es) =>
        es.flatMap((e) => (e.type === "assistant/message" ? [ContentBlocks.flattenText(e.data.content)] : []))),
      requests: recorder.requests
    }
  })
