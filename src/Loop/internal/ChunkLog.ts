/**
 * The step's chunk log (L-12, design step 3): a stream stage that logs each batch of the model stream
 * before passing it on, so the consumer after it (the step runs `BlockAssembler.sink`) folds only chunks
 * that are already in the log (printed ⇒ written).
 *
 * Per batch, synchronously after one `appendChunks` (each chunk still its own `assistant/chunk` event, in
 * order): the event numbers are kept for the recorded message's `sourceEventSeqs`, the time of the first
 * logged batch is noted (time to first chunk), and the stage yields to the event loop when
 * {@link Fairness.due}. The output cap (issue 26, {@link OutputLimit}): a batch that passes it is logged up
 * to the limit plus an `OUTPUT_LIMIT` finish, passed on, and the stream ends there (the upstream is closed,
 * so its HTTP request is interrupted).
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { StreamChunk } from "../../Llm/StreamChunk.js"
import type { SessionError } from "../../Session/SessionError.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as Fairness from "./Fairness.js"
import * as OutputLimit from "./OutputLimit.js"

/**
 * What the stage saw, read by the step after the stream ends: the logged events' numbers and when the
 * first batch was logged (`performance.now()`, `undefined` before it).
 *
 * @since 0.1.0
 * @category models
 */
export interface ChunkLog {
  readonly seqs: Array<number>
  firstChunkAt: number | undefined
}

/**
 * A fresh, empty {@link ChunkLog}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty = (): ChunkLog => ({ seqs: [], firstChunkAt: undefined })

/**
 * The stage: `chunks` with every batch logged through `append` (capped at `limit` bytes of output) before
 * it is emitted; what was logged is recorded in `log`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const logged = <E, R>(
  chunks: Stream.Stream<StreamChunk, E, R>,
  append: (batch: ReadonlyArray<StreamChunk>) => Effect.Effect<ReadonlyArray<SessionEvent>, SessionError>,
  limit: number,
  log: ChunkLog
): Stream.Stream<StreamChunk, E | SessionError, R> =>
  Stream.transformPull(chunks, (pull) =>
    Effect.sync(() => {
      let streamed = 0
      let cut = false
      const logBatch = (all: Arr.NonEmptyReadonlyArray<StreamChunk>): Effect.Effect<Arr.NonEmptyReadonlyArray<StreamChunk>, SessionError> => {
        const fit = OutputLimit.fit(all, streamed, limit)
        streamed = fit.streamed
        cut = fit.cut
        const batch: Arr.NonEmptyReadonlyArray<StreamChunk> = fit.cut
          ? Arr.append(all.slice(0, fit.kept), OutputLimit.finish(limit))
          : all
        return Effect.flatMap(append(batch), (events) => {
          if (log.firstChunkAt === undefined) log.firstChunkAt = performance.now()
          for (let e = 0; e < events.length; e++) log.seqs.push(events[e]!.seq)
          return !cut && Fairness.due() ? Effect.as(Fairness.yieldNow, batch) : Effect.succeed(batch)
        })
      }
      return Effect.suspend(() => (cut ? Cause.done() : Effect.flatMap(pull, logBatch)))
    }))
