/**
 * Context a hook or tool attaches to the log (H-2): content with a MANDATORY source, so plugin
 * text is never recorded as user input, and optional durable, model-hidden `meta`. It lands as a
 * `context/message` and projects verbatim (the producer frames its own content).
 *
 * @since 0.1.0
 */
import type { ContentBlock } from "../Llm/ContentBlock.js"
import type { Json } from "../Llm/Json.js"
import type { MessageSource } from "../Llm/Message.js"

/**
 * A context contribution.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookContext {
  readonly content: ReadonlyArray<ContentBlock>
  readonly source: MessageSource
  readonly meta?: Json
}
