/**
 * Which session belongs to which agent id, for listeners on the tool points (they see only the
 * agent's verbs). Filled from the loop's `created` notification, emptied on `disposed`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Hooks from "../Loop/Hooks.js"
import * as Notice from "../Tools/Notice.js"
import type { AppendInput } from "../Session/SessionEvent.js"

/**
 * The directory of live agents.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly get: (agentId: string) => Effect.Effect<Hooks.HookAgent | undefined>
  /** the host's notice channel, read when the directory was built (`Tools/Notice`) */
  readonly notice: Notice.Say
}

/**
 * The directory tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentSessions extends Context.Service<AgentSessions, Service>()("effect-harness/Workspace/AgentSessions") {}

/**
 * Appends an event to the agent's session; a failure is reported as a notice, never raised: the log
 * of a decision must not change the decision.
 *
 * @since 0.1.0
 * @category utils
 */
export const append = (sessions: Service, agentId: string, input: AppendInput): Effect.Effect<void> =>
  Effect.flatMap(sessions.get(agentId), (agent) =>
    agent === undefined
      ? Effect.void
      : agent.session.append(input).pipe(
        Effect.asVoid,
        Effect.catch((e) => sessions.notice(`cannot log ${input.type}: ${e.message}`))
      ))

/**
 * The directory, fed by the loop's lifecycle notifications for the layer's lifetime. `Layer.fresh`:
 * Effect 4 memoizes layers across `provide` calls, and a directory built on another harness's
 * hooks would never see this harness's agents.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AgentSessions, never, Hooks.LoopHooks> = Layer.fresh(Layer.effect(
  AgentSessions,
  Effect.gen(function*() {
    const hooks = yield* Hooks.LoopHooks
    const agents = yield* Ref.make(new Map<string, Hooks.HookAgent>())
    const notice = yield* Notice.Notice
    yield* hooks.created.register(({ agent }) => Ref.update(agents, (m) => new Map(m).set(agent.id, agent)))
    yield* hooks.disposed.register(({ agent }) =>
      Ref.update(agents, (m) => {
        const n = new Map(m)
        n.delete(agent.id)
        return n
      })
    )
    return { get: (id) => Effect.map(Ref.get(agents), (m) => m.get(id)), notice }
  })
))
