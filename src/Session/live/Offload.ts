/**
 * Keeping a persisted session small in memory (decision 0017): the chunk events cited by a
 * persisted `assistant/message` are dropped and the message is held without its citations; `events`
 * reads them back from the stored log.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import type { SessionError } from "../SessionError.js"
import * as SessionErrors from "../SessionError.js"
import type { SessionEvent } from "../SessionEvent.js"
import type { State } from "./State.js"


/** The first position in `log` (sorted by seq) whose seq is at least `seq`. */
const lowerBound = (log: ReadonlyArray<SessionEvent>, seq: number): number => {
  let lo = 0
  let hi = log.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((log[mid] as SessionEvent).seq < seq) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The offloading of a session; `stored` reads its stored log (none: nothing is dropped). */
export const make = (
  state: State,
  id: string,
  stored: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError> | undefined
) => {
  /**
   * Drops from memory the chunk events cited by the `assistant/message` events persisted and
   * published since the last call (they are all in the stored log now). Cited seqs are below
   * the citing event's seq, so everything at or above `scanned` is still in `log`.
   */
  /** the held messages that left their `sourceEventSeqs` to the stored log (`events` reads them back) */
  const slimEvents = new WeakSet<SessionEvent>()
  const dropPersistedChunks = (): void => {
    if (stored === undefined) return
    let cited: Set<number> | undefined
    let lowest = Infinity
    for (let seq = state.scanned; seq < state.published; seq++) {
      const at = seq - state.dropped
      const event = state.log[at] as SessionEvent
      if (event.type !== "assistant/message" || event.sourceEventSeqs === undefined) continue
      for (const s of event.sourceEventSeqs) {
        if (cited === undefined) cited = new Set()
        cited.add(s)
        if (s < lowest) lowest = s
      }
      if (event.sourceEventSeqs.length === 0) continue
      // the citations are in the stored log too: held (and on the surface) without them, 8 bytes a chunk
      const { sourceEventSeqs: _cited, ...rest } = event
      const slim = Object.freeze(rest) as SessionEvent
      slimEvents.add(slim)
      state.log[at] = slim
      const node = state.surface.positions.get(seq)
      if (node !== undefined && state.surface.nodes[node] === event) state.surface.nodes[node] = slim
      state.slimmed++
      state.surfaceSnapshot = undefined
      state.eventsSnapshot = undefined
    }
    state.scanned = state.published
    if (cited === undefined) return
    const log = state.log
    let from = lowerBound(log, lowest)
    let to = from
    for (; from < log.length; from++) {
      const event = log[from] as SessionEvent
      if (event.type === "assistant/chunk" && cited.has(event.seq)) continue
      log[to++] = event
    }
    const removed = log.length - to
    if (removed === 0) return
    log.length = to
    state.dropped += removed
    state.eventsSnapshot = undefined
  }

  /** Every event so far: the held ones, and the dropped chunks read back from the stored log. */
  const readBack = (read: Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>) =>
    Effect.suspend(() => {
      const held = state.log.slice()
      const length = state.length
      return Effect.flatMap(read, (all) => {
        const out: Array<SessionEvent> = new Array(length)
        let h = 0
        for (let seq = 0; seq < length; seq++) {
          const mine = held[h]
          const back = all[seq]
          if (mine !== undefined && mine.seq === seq) {
            h++
            if (!slimEvents.has(mine)) {
              out[seq] = mine
              continue
            }
          }
          const expected = mine !== undefined && mine.seq === seq ? mine.type : "assistant/chunk"
          if (back === undefined || back.seq !== seq || back.type !== expected) {
            return Effect.fail(SessionErrors.make(
              "CORRUPT_LOG",
              `session ${id}: event #${seq} is no longer in memory and the stored log does not hold it`,
              { sessionId: id }
            ))
          }
          out[seq] = back
        }
        return Effect.succeed(Object.freeze(out) as ReadonlyArray<SessionEvent>)
      })
    })

  return { slimEvents, dropPersistedChunks, readBack }
}
