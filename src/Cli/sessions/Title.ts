/**
 * A session's title (`harness sessions rename <id> <title>`): stored durably in the session's own
 * log as a `session/title` event outside any turn, so it travels with the session in both
 * backends (JSONL and SQLite keep unknown event types verbatim) and older harness versions still
 * load the log. The last `session/title` event wins; an empty title clears it.
 *
 * @since 0.1.0
 */
import type { SessionEvent } from "../../Session/SessionEvent.js"

declare module "../../Session/SessionEvent.js" {
  interface SessionEventMap {
    /** the session's title, set by `harness sessions rename` (outside any turn) */
    readonly "session/title": { readonly title: string }
  }
}

/**
 * The event type.
 *
 * @since 0.1.0
 * @category constants
 */
export const TYPE = "session/title"

/**
 * The longest title kept (characters).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LENGTH = 200

/**
 * The title as stored: whitespace runs folded to one space, trimmed, cut to {@link MAX_LENGTH}.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalize = (title: string): string => title.replace(/\s+/g, " ").trim().slice(0, MAX_LENGTH)

/**
 * The current title of a log (the last `session/title` event), if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const of = (events: ReadonlyArray<SessionEvent>): string | undefined => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type === TYPE) {
      const title = (e.data as { readonly title?: unknown }).title
      return typeof title === "string" && title !== "" ? title : undefined
    }
  }
  return undefined
}
