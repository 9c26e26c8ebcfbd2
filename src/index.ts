/**
 * effect-harness: an Effect-native LLM agent harness. Every public module, namespace-imported:
 *
 * ```ts
 * import { Agent, ContentBlock, Llm, OpenAiCompatible, SessionStore, Jsonl } from "effect-harness"
 * ```
 *
 * - `src/Llm`: vocabulary, chunk protocol, the one `BlockAssembler`, errors, routing and retry.
 * - `src/Adapter`: OpenAI-compatible (DeepSeek, OpenAI, any compatible server), Anthropic, Scripted.
 * - `src/Session`: the append-only event log, projection, store and durable persistence.
 * - `src/Loop`: the agent, its tools, interception points, system prompt and test kit.
 * - `src/Telemetry`: OTLP export of the GenAI spans and metrics the loop emits.
 * - `src/Checkpoint` (as `Checkpoint`): the pre-image journal of workspace changes and rewind.
 *
 * @since 0.1.0
 */
export * from "./Adapter/index.js"
export * as Checkpoint from "./Checkpoint/index.js"
export * from "./Llm/index.js"
export * from "./Loop/index.js"
export * from "./Session/index.js"
export * from "./Telemetry/index.js"
