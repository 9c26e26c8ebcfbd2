/**
 * The agent loop: the agent handle and its factory, the interception points, the system prompt and
 * session prefix, tools (definition, registry, pipeline, scheduler) and a test kit for users. The
 * driver, turns, steps and compaction runner are the agent's machinery over its internal runtime:
 * reachable by path inside the package, not part of the public surface.
 *
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"
export * as AgentControl from "./AgentControl.js"
export * as Approval from "./Approval.js"
export * as BatchContexts from "./BatchContexts.js"
export * as Compaction from "./Compaction/index.js"
export * as HookContext from "./HookContext.js"
export * as Hooks from "./Hooks.js"
export * as Inbox from "./Inbox.js"
export * as Interception from "./Interception.js"
export * as Scheduling from "./Scheduling.js"
export * as SessionPrefix from "./SessionPrefix.js"
export * as StepSignal from "./StepSignal.js"
export * as SystemPrompt from "./SystemPrompt.js"
export * as TestKit from "./TestKit.js"
export * as Tool from "./Tool.js"
export * as ToolHooks from "./ToolHooks.js"
export * as ToolPipeline from "./ToolPipeline.js"
export * as ToolRegistry from "./ToolRegistry.js"
export * as ToolRuntime from "./ToolRuntime.js"
export * as ToolScheduler from "./ToolScheduler.js"
