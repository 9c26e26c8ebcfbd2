/**
 * The approval service of an ACP agent: a registry routing each approval request (T-3) to the ACP
 * session of the agent that asks. The harness's approval layer is built once, before any ACP
 * session exists, from {@link Approvals.ask}; each ACP session registers its asker for its agent id
 * for as long as the session lives (scoped). A request of an agent without a session is
 * `unavailable` (a denial the model can read).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type * as LoopApproval from "../Loop/Approval.js"

/**
 * Answers the requests of one agent.
 *
 * @since 0.1.0
 * @category models
 */
export type Asker = LoopApproval.Service["ask"]

/**
 * The registry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Approvals {
  /** the `Loop/Approval` service's `ask`: routes to the asker registered for `request.agentId` */
  readonly ask: LoopApproval.Service["ask"]
  /** registers `asker` for `agentId` for the scope */
  readonly register: (agentId: string, asker: Asker) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * Creates an empty registry.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Approvals> = Effect.map(
  Ref.make<ReadonlyMap<string, Asker>>(new Map()),
  (askers): Approvals => ({
    ask: (request) =>
      Effect.flatMap(Ref.get(askers), (map) => {
        const asker = map.get(request.agentId)
        return asker === undefined ? Effect.succeed("unavailable" as const) : asker(request)
      }),
    register: (agentId, asker) =>
      Effect.acquireRelease(
        Ref.update(askers, (map) => new Map([...map, [agentId, asker]])),
        () =>
          Ref.update(askers, (map) => {
            const next = new Map(map)
            next.delete(agentId)
            return next
          })
      )
  })
)
