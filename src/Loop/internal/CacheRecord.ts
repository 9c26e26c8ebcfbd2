/**
 * The loop's side of prefix attribution (DEC-17, issue 30): before each model request it logs a `request/cache`
 * event with the request's {@link CacheAttribution.Attribution} against the previous request of the session.
 *
 * The previous request is remembered per live session (a `WeakMap` keyed by the session: one writer per
 * session, and a session's steps run one after another, so no two fibers race on an entry). A new loop instance
 * over a log that already has requests (resume) rebuilds the previous one from the log once. The events between
 * the two requests are read only when a message diverged (to tell a compaction from a rewrite).
 *
 * The TTL of the route's provider is `CacheAttribution.Ttl` (default `CacheAttribution.defaultTtlMs`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { GenerateOptions } from "../../Llm/Message.js"
import * as CacheAttribution from "../../Session/CacheAttribution.js"
import * as Reconstruct from "../../Session/Reconstruct.js"
import type { Session } from "../../Session/Session.js"
import type { SessionError } from "../../Session/SessionError.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as Surface from "../../Session/Surface.js"

interface Previous {
  readonly sent: CacheAttribution.Sent
  /** seq of the previous request's `step/start` */
  readonly seq: number
}

const previousBySession = new WeakMap<Session, Previous>()

/** the last request of the log, rebuilt (resume), or `undefined` */
const fromLog = (events: ReadonlyArray<SessionEvent>): Previous | undefined => {
  const rebuilt = Reconstruct.reconstruct(events)
  for (let i = rebuilt.length - 1; i >= 0; i--) {
    const r = rebuilt[i] as Reconstruct.ReconstructedRequest
    if (r.request === undefined) continue
    const at = events.findIndex((e) => e.seq === r.stepStartSeq)
    if (at < 0) return undefined
    const seqs = CacheAttribution.messageSeqs(Surface.foldSurface(events.slice(0, at)).nodes)
    return {
      sent: { request: r.request, messageSeqs: padded(r.request.messages.length, seqs), time: (events[at] as SessionEvent).time },
      seq: r.stepStartSeq
    }
  }
  return undefined
}

const padded = (length: number, seqs: ReadonlyArray<number>): ReadonlyArray<number | undefined> =>
  length <= seqs.length
    ? seqs.slice(seqs.length - length)
    : [...Array.from({ length: length - seqs.length }, () => undefined), ...seqs]

/**
 * Logs the `request/cache` event of the request about to be sent. `started` = the step's `step/start` event;
 * `request` without its `sessionId` is compared; `firstOfInstance` rebuilds the previous request from the log.
 *
 * @since 0.1.0
 * @category recording
 */
export const record = (
  session: Session,
  started: SessionEvent,
  position: { readonly turn: number; readonly step: number },
  request: GenerateOptions,
  firstOfInstance: boolean
): Effect.Effect<void, SessionError> =>
  Effect.gen(function*() {
    const ttl = (yield* CacheAttribution.Ttl)(request.provider)
    let previous = previousBySession.get(session)
    if (previous === undefined || firstOfInstance) {
      const held = yield* session.heldEvents
      previous = fromLog(held.filter((e) => e.seq < started.seq))
    }
    const surface = yield* session.surface
    const seqs = CacheAttribution.messageSeqs(surface.nodes)
    const { sessionId: _, ...compared } = request
    const sent: CacheAttribution.Sent = {
      request: compared,
      messageSeqs: padded(request.messages.length, seqs),
      time: started.time
    }
    let attribution = CacheAttribution.attribute(previous?.sent, sent, [], ttl)
    if (previous !== undefined && attribution.divergence?.part === "messages" && attribution.divergence.eventSeq !== undefined) {
      const since = previous.seq
      const held = yield* session.heldEvents
      attribution = CacheAttribution.attribute(
        previous.sent,
        sent,
        held.filter((e) => e.seq >= since && e.seq < started.seq),
        ttl
      )
    }
    previousBySession.set(session, { sent, seq: started.seq })
    yield* session.append({ type: "request/cache", data: { ...position, ...attribution } })
  })
