/**
 * Provider adapters: SSE decoding, the shared HTTP edge, the OpenAI-compatible chat-completions
 * adapter (DeepSeek, OpenAI, any compatible server) and the Anthropic Messages adapter.
 *
 * @since 0.1.0
 */

/**
 * The Anthropic Messages adapter.
 *
 * @since 0.1.0
 */
export * as Anthropic from "./Anthropic.js"

/**
 * The HTTP edge shared by the provider adapters: attribution, headers, status mapping.
 *
 * @since 0.1.0
 */
export * as HttpEdge from "./HttpEdge.js"

/**
 * One adapter for every OpenAI-compatible chat-completions server, with profiles.
 *
 * @since 0.1.0
 */
export * as OpenAiCompatible from "./OpenAiCompatible.js"

/**
 * Server-sent events decoding and the translation driver.
 *
 * @since 0.1.0
 */
export * as Sse from "./Sse.js"
