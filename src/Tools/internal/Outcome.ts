/**
 * The object form of a tool's result (T-11): content blocks plus optional durable, model-hidden
 * `meta` (the data channel of presenters, T-14).
 *
 * @since 0.1.0
 */
import type * as ContentBlock from "../../Llm/ContentBlock.js"
import type * as Json from "../../Llm/Json.js"

/**
 * A tool outcome.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly content: ReadonlyArray<ContentBlock.ContentBlock>
  readonly meta?: Json.Json
}

/**
 * A single text block outcome.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string, meta?: Json.Json): Outcome =>
  meta === undefined ? { content: [{ type: "text", text }] } : { content: [{ type: "text", text }], meta }
