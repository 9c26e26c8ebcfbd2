/**
 * Provider adapters: SSE decoding, the shared HTTP edge, the OpenAI-compatible chat-completions
 * adapter (DeepSeek, OpenAI, any compatible server), the Anthropic Messages adapter and the
 * keyless scripted adapter.
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
 * A keyless scripted adapter for tests and the offline demo.
 *
 * @since 0.1.0
 */
export * as Scripted from "./Scripted.js"

/**
 * Server-sent events decoding and the translation driver.
 *
 * @since 0.1.0
 */
export * as Sse from "./Sse.js"
