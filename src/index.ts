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
 * - `src/Mcp`: the MCP client (configuration, connections, tools offered to the loop).
 * - `src/Tools`: the built-in coding tools, safe file access, the bash sandbox, secret scrubbing.
 * - `src/Workspace`: settings files, workspace approval, workspace context (AGENTS.md / CLAUDE.md).
 * - `src/Policy`: permission rules and modes, approval with a host-supplied prompt (`ToolApproval`).
 * - `src/Hooks`: the Claude-Code-compatible command hooks (`HookBridge`).
 * - `src/CodingAgent`: the coding agent the CLI runs, as one Layer (`CodingAgent.layer`).
 * - `src/Checkpoint` (as `Checkpoint`): the pre-image journal of workspace changes and rewind.
 *
 * @since 0.1.0
 */
export * from "./Adapter/index.js"
export * from "./Export/index.js"
export * as Checkpoint from "./Checkpoint/index.js"
export * from "./Llm/index.js"
export * from "./Loop/index.js"
export * from "./Session/index.js"
export * from "./Telemetry/index.js"
export * from "./Mcp/index.js"
export * from "./Tools/index.js"
export * from "./Workspace/index.js"
export * from "./Policy/index.js"
export * from "./Hooks/index.js"
export * from "./CodingAgent/index.js"
