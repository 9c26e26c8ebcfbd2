/**
 * The agent's input queues (L-1, L-2, L-4, L-9) as a pure, persistent value: the **queued** FIFO
 * (prompts for the next turn), the **steering** FIFO (input for the running turn, logged at the
 * next drain point) and the **cancel marker** (armed by `cancel` when there is work).
 *
 * The agent keeps an `Inbox` inside its state `Ref`; every transition here is a pure function so
 * a verb's check-and-update is one atomic `Ref.modify`.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import type { MessageSource } from "../Llm/Message.js"

/**
 * One queued input: a frozen, detached copy of the content and its source.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly content: ReadonlyArray<ContentBlock>
  readonly source: MessageSource
}

/**
 * The queues and the marker.
 *
 * @since 0.1.0
 * @category models
 */
export interface Inbox {
  readonly queued: ReadonlyArray<Entry>
  readonly steering: ReadonlyArray<Entry>
  /** the armed cancel reason (L-4), if any */
  readonly marker: Option.Option<string>
}

/**
 * The empty inbox.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Inbox = { queued: [], steering: [], marker: Option.none() }

/**
 * Appends a prompt to the queued FIFO.
 *
 * @since 0.1.0
 * @category combinators
 */
export const enqueue = (inbox: Inbox, entry: Entry): Inbox => ({ ...inbox, queued: [...inbox.queued, entry] })

/**
 * Appends input to the steering FIFO.
 *
 * @since 0.1.0
 * @category combinators
 */
export const steer = (inbox: Inbox, entry: Entry): Inbox => ({ ...inbox, steering: [...inbox.steering, entry] })

/**
 * Takes every queued prompt (one turn's batch, L-11.1).
 *
 * @since 0.1.0
 * @category combinators
 */
export const drainQueued = (inbox: Inbox): readonly [ReadonlyArray<Entry>, Inbox] => [
  inbox.queued,
  { ...inbox, queued: [] }
]

/**
 * Takes every steering entry (a drain point, L-12.1, L-12.13).
 *
 * @since 0.1.0
 * @category combinators
 */
export const drainSteering = (inbox: Inbox): readonly [ReadonlyArray<Entry>, Inbox] => [
  inbox.steering,
  { ...inbox, steering: [] }
]

/**
 * `true` when there is queued or steering input.
 *
 * @since 0.1.0
 * @category accessors
 */
export const hasInput = (inbox: Inbox): boolean => inbox.queued.length > 0 || inbox.steering.length > 0

/**
 * Arms the marker with `reason` and discards both FIFOs (L-4). The caller decides whether there
 * is work (an idle cancel must not arm the marker).
 *
 * @since 0.1.0
 * @category combinators
 */
export const cancel = (_inbox: Inbox, reason: string): Inbox => ({ queued: [], steering: [], marker: Option.some(reason) })

/**
 * Clears the marker; returns the reason it held.
 *
 * @since 0.1.0
 * @category combinators
 */
export const clearMarker = (inbox: Inbox): readonly [Option.Option<string>, Inbox] => [
  inbox.marker,
  { ...inbox, marker: Option.none() }
]

/**
 * Moves leftover steering to the end of the queued FIFO (L-9: after a turn), or discards it when
 * the turn stopped terminally (L-26).
 *
 * @since 0.1.0
 * @category combinators
 */
export const settleSteering = (inbox: Inbox, discard: boolean): Inbox => ({
  ...inbox,
  queued: discard ? inbox.queued : [...inbox.queued, ...inbox.steering],
  steering: []
})
