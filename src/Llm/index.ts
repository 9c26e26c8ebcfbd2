/**
 * The provider-neutral vocabulary, chunk protocol, assembler, errors and routing service.
 *
 * @since 0.1.0
 */
export * as BlockAssembler from "./BlockAssembler.js"
export * as ContentBlock from "./ContentBlock.js"
export * as GenAi from "./GenAi.js"
export * as Json from "./Json.js"
export * as Llm from "./Llm.js"
export * as LlmAdapter from "./LlmAdapter.js"
export * as LlmError from "./LlmError.js"
export * as Message from "./Message.js"
export * as Retry from "./Retry.js"
export * as StreamChunk from "./StreamChunk.js"
