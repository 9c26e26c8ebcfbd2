/**
 * The synchronous write-through core (issue 20): with `persistNow` a committed batch is persisted
 * and published in the same step; `"later"` falls back to the effectful `persist`; a failure keeps
 * the events committed and unpublished until a later persist succeeds (DEC-11, printed ⇒ written).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Session from "../../src/Session/Session.js"
import * as SessionError from "../../src/Session/SessionError.js"
import type { AppendNow } from "../../src/Session/SessionPersistence.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { chunk, failsWith, stepStart, turnStart, userMessage } from "../support/sessionInputs.js"

/** A write-through session whose `persistNow` answers what `next` says; counts both paths. */
const harness = (next: () => AppendNow) =>
  Effect.gen(function*() {
    const counts = { now: 0, later: 0 }
    const session = yield* Session.make({
      persist: Effect.sync(() => {
        counts.later++
      }),
      persistNow: () => {
        counts.now++
        return next()
      }
    })
    const seen = yield* session.subscribe
    const published = Effect.map(
      PubSub.takeUpTo(seen, Number.POSITIVE_INFINITY),
      (c): ReadonlyArray<number> => c.map((e: SessionEvent) => e.seq)
    )
    return { session, counts, published }
  })

const full = SessionError.make("PERSISTENCE_FAILED", "could not save the session: append to /x.jsonl failed: no space left on device (ENOSPC)", {
  file: "/x.jsonl",
  osCode: "ENOSPC"
})

describe("synchronous write-through (issue 20)", () => {
  it.effect("[DEC-11] \"written\": persisted now, published in the same step, the effectful persist never runs", () =>
    Effect.gen(function*() {
      const { counts, published, session } = yield* harness(() => "written")
      yield* session.appendAll([turnStart(1), userMessage("hi"), stepStart(1, 1)])
      yield* session.append(chunk(1, 1, "a"))
      expect(counts).toEqual({ now: 2, later: 0 })
      expect(yield* published).toEqual([0, 1, 2, 3])
    }))

  it.effect("[DEC-11] \"later\": the effectful persist writes the batch, then it is published", () =>
    Effect.gen(function*() {
      const { counts, published, session } = yield* harness(() => "later")
      yield* session.appendAll([turnStart(1), userMessage("hi")])
      expect(counts).toEqual({ now: 1, later: 1 })
      expect(yield* published).toEqual([0, 1])
    }))

  it.effect("[DEC-11] a failure fails the append; the events stay committed, unpublished, and go out after the next write", () =>
    Effect.gen(function*() {
      let answer: AppendNow = full
      const { published, session } = yield* harness(() => answer)
      yield* failsWith(session.appendAll([turnStart(1), userMessage("hi")]), "PERSISTENCE_FAILED")
      expect(yield* session.nextSeq).toBe(2)
      expect(yield* published).toEqual([])
      answer = "written"
      yield* session.append(stepStart(1, 1))
      expect(yield* published).toEqual([0, 1, 2])
    }))

  it.effect("[S-10] with an observer the effectful path publishes (observers run as effects)", () =>
    Effect.gen(function*() {
      const { counts, session } = yield* harness(() => "written")
      const observed: Array<number> = []
      yield* session.observe((e) => Effect.sync(() => observed.push(e.seq)))
      yield* session.appendAll([turnStart(1), userMessage("hi")])
      expect(counts).toEqual({ now: 0, later: 1 })
      expect(observed).toEqual([0, 1])
    }))
})
