/**
 * The ready-made coding agent: the agent the `harness` CLI runs, as one Layer.
 *
 * @since 0.1.0
 */
export * as CodingAgent from "./CodingAgent.js"
