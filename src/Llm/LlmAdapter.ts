/**
 * The adapter interface: one provider wire format behind a provider-neutral stream (§2).
 *
 * An adapter is a value; the {@link Llm} service routes requests to adapters by provider id
 * (C-9). Identity matters: replay state is forwarded only to the same adapter instance (C-7).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Stream from "effect/Stream"
import type { LlmError } from "./LlmError.js"
import type * as Message from "./Message.js"
import type { StreamChunk } from "./StreamChunk.js"

/**
 * A route an adapter serves: `id` is the provider key, `name` a display name (default = id).
 *
 * @since 0.1.0
 * @category models
 */
export interface ProviderInfo {
  readonly id: string
  readonly name: string
}

/**
 * An advisory catalog entry (C-9): never used to reject a request.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelInfo {
  readonly provider: string
  readonly id: string
  readonly name: string
}

/**
 * A provider adapter.
 *
 * @since 0.1.0
 * @category models
 */
export interface LlmAdapter {
  /** the routes (provider ids) this adapter serves, with display names */
  readonly providers: ReadonlyArray<ProviderInfo>
  /** advisory model catalog (may be empty) */
  readonly models: ReadonlyArray<ModelInfo>
  /**
   * Streams one response for a request in the chunk protocol. Failures before or during the
   * stream are typed {@link LlmError}s; interruption of the consumer cancels the request.
   */
  readonly stream: (options: Message.GenerateOptions) => Stream.Stream<StreamChunk, LlmError>
}

/**
 * The adapter a Layer provides, for programs that use a single adapter directly (the `Llm`
 * service is the routed form). Each adapter module exports a Layer of this Tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Adapter extends Context.Service<Adapter, LlmAdapter>()("effect-harness/Llm/LlmAdapter") {}
