/**
 * The deterministic token estimator of compaction (K-2): the same events always give the same
 * number, and the number errs high.
 *
 * Rule: a text costs `ceil(utf8Bytes / 3.5)` tokens (real tokenizers average 3.7–4.5 bytes per
 * token on code and English prose, so dividing by 3.5 over-counts by ~10–25 %). A message costs
 * the sum of its blocks plus {@link MESSAGE_OVERHEAD}: text and reasoning blocks count their text,
 * a tool call counts its name and raw arguments, a tool result counts its nested blocks; an
 * unknown block counts its JSON text. A request adds its system prompt and the JSON text of its
 * tool definitions.
 *
 * Per-event estimates are memoised on the (immutable, shared) event objects, so measuring a
 * surface again costs only the events not seen before.
 *
 * @since 0.1.0
 */
import type { ContentBlock } from "../../Llm/ContentBlock.js"
import type { Message, ToolSchema } from "../../Llm/Message.js"
import * as Projection from "../../Session/Projection.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"

/**
 * Bytes per token assumed by the estimator.
 *
 * @since 0.1.0
 * @category constants
 */
export const BYTES_PER_TOKEN = 3.5

/**
 * Tokens added per message (role and framing).
 *
 * @since 0.1.0
 * @category constants
 */
export const MESSAGE_OVERHEAD = 4

/**
 * UTF-8 byte length of a string (no allocation).
 *
 * @since 0.1.0
 * @category utils
 */
export const utf8Bytes = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 3
    } else n += 3
  }
  return n
}

/**
 * Estimated tokens of a text.
 *
 * @since 0.1.0
 * @category estimators
 */
export const text = (s: string): number => Math.ceil(utf8Bytes(s) / BYTES_PER_TOKEN)

const blockBytes = (block: ContentBlock): number => {
  switch (block.type) {
    case "text":
    case "reasoning":
      return utf8Bytes(block.text)
    case "tool-call":
      return utf8Bytes(block.name) + utf8Bytes(block.arguments) + utf8Bytes(block.id)
    case "tool-result": {
      let n = utf8Bytes(block.toolCallId)
      for (const inner of block.content) n += blockBytes(inner)
      return n
    }
    default:
      return utf8Bytes(JSON.stringify(block) ?? "")
  }
}

/**
 * Estimated tokens of a list of blocks (no message overhead).
 *
 * @since 0.1.0
 * @category estimators
 */
export const blocks = (content: ReadonlyArray<ContentBlock>): number => {
  let n = 0
  for (const b of content) n += blockBytes(b)
  return Math.ceil(n / BYTES_PER_TOKEN)
}

/**
 * Estimated tokens of one model message.
 *
 * @since 0.1.0
 * @category estimators
 */
export const message = (m: Message): number => blocks(m.content) + MESSAGE_OVERHEAD

/**
 * Estimated tokens of messages.
 *
 * @since 0.1.0
 * @category estimators
 */
export const messages = (ms: ReadonlyArray<Message>): number => {
  let n = 0
  for (const m of ms) n += message(m)
  return n
}

const memo = new WeakMap<SessionEvent, number>()

/**
 * Estimated tokens of what a surface event shows the model (its projection, S-14); 0 for an event
 * that projects to nothing. Memoised per event object.
 *
 * @since 0.1.0
 * @category estimators
 */
export const event = (e: SessionEvent): number => {
  const cached = memo.get(e)
  if (cached !== undefined) return cached
  const m = Projection.deriveEventMessage(e)
  const n = m === undefined ? 0 : message(m)
  memo.set(e, n)
  return n
}

/**
 * Estimated tokens of the fixed part of a request: system prompt, tool definitions, prefix.
 *
 * @since 0.1.0
 * @category estimators
 */
export const fixed = (
  system: string | undefined,
  tools: ReadonlyArray<ToolSchema>,
  prefix: ReadonlyArray<Message>
): number =>
  (system === undefined ? 0 : text(system) + MESSAGE_OVERHEAD) +
  (tools.length === 0 ? 0 : text(JSON.stringify(tools))) +
  messages(prefix)
