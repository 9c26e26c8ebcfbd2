/**
 * Projection (S-14, S-15): how one surface event becomes (at most) one model message.
 *
 * This is the seed decision of the project: `user/message`, `context/message` and
 * `steering/message` share ONE case that returns a user-role message whose content is the event's
 * content VERBATIM. No wrapper tags, no envelope, no source, meta or turn rendered. Framing belongs
 * to the producer of the content (workspace context frames its own `<system-reminder>`), never to
 * the surface.
 *
 * Projected messages are frozen and share the (already frozen) content arrays of their events.
 *
 * @since 0.1.0
 */
import type { ContentBlock } from "../Llm/ContentBlock.js"
import type { Message } from "../Llm/Message.js"
import type { SessionEvent } from "./SessionEvent.js"

/**
 * The model message an event projects to, or `undefined` ("nothing"): `assistant/message` with
 * empty content, every non-surface type and every unknown type.
 *
 * @since 0.1.0
 * @category projection
 */
export const deriveEventMessage = (event: SessionEvent): Message | undefined => {
  switch (event.type) {
    case "user/message":
    case "context/message":
    case "steering/message":
      return Object.freeze<Message>({ role: "user", content: event.data.content })
    case "assistant/message":
      if (event.data.content.length === 0) return undefined
      return Object.freeze<Message>({ role: "assistant", content: event.data.content, provenance: event.data.provenance })
    case "tool/result": {
      const block: ContentBlock = Object.freeze({
        type: "tool-result" as const,
        toolCallId: event.data.callId,
        content: event.data.content,
        isError: event.data.isError
      })
      return Object.freeze<Message>({ role: "user", content: Object.freeze([block]) })
    }
    default:
      return undefined
  }
}

/**
 * Derives the model messages of a list of surface nodes, in order, skipping "nothing" (S-15):
 * one message per event, never merged.
 *
 * @since 0.1.0
 * @category projection
 */
export const deriveMessages = (nodes: ReadonlyArray<SessionEvent>): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const node of nodes) {
    const m = deriveEventMessage(node)
    if (m !== undefined) out.push(m)
  }
  return out
}
