/**
 * `Session.appendAll` (the loop's per-stream-Chunk batch append) and the append lock: same
 * semantics as one `append` per input, on the synchronous fast path and on the observed path.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Session from "../../src/Session/Session.js"
import type { AppendInput, SessionEvent } from "../../src/Session/SessionEvent.js"
import { chunk, failsWith, stepStart, turnStart, userMessage } from "../support/sessionInputs.js"

const opening: ReadonlyArray<AppendInput> = [turnStart(1), userMessage("hi"), stepStart(1, 1)]
const bad = { type: "assistant/chunk", data: { turn: 1, step: 1, chunk: { type: "text-delta", index: 0, text: 1n } } } as unknown as AppendInput

describe("Session.appendAll", () => {
  it.effect("[S-3,S-4] fast path: own contiguous seqs, frozen events, same log as one append per input", () =>
    Effect.gen(function*() {
      const batched = yield* Session.make()
      const single = yield* Session.make()
      const inputs = [...opening, chunk(1, 1, "a"), chunk(1, 1, "b"), chunk(1, 1, "c")]
      const stored = yield* batched.appendAll(inputs)
      for (const input of inputs) yield* single.append(input)
      expect(stored.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5])
      expect(stored.every((e) => Object.isFrozen(e) && Object.isFrozen(e.data))).toBe(true)
      const strip = (events: ReadonlyArray<SessionEvent>) => events.map(({ time: _time, ...rest }) => rest)
      expect(strip(yield* batched.events)).toEqual(strip(yield* single.events))
    }))

  it.effect("[S-3,S-4] appendChunks builds the events appendAll builds from the same chunk inputs (covered, generic and invalid)", () =>
    Effect.gen(function*() {
      const chunks = [
        StreamChunk.blockStart(0, "text"),
        StreamChunk.textDelta(0, "a"),
        StreamChunk.blockEnd(0, ContentBlock.text("a")),
        StreamChunk.usage({ inputTokens: 1, outputTokens: 2 }),
        StreamChunk.finish({ kind: "stop" })
      ]
      const direct = yield* Session.make()
      const built = yield* Session.make()
      yield* direct.appendAll(opening)
      yield* built.appendAll(opening)
      const a = yield* direct.appendChunks(1, 1, chunks)
      const b = yield* built.appendAll(chunks.map((chunk) => ({ type: "assistant/chunk", data: { turn: 1, step: 1, chunk } }) as AppendInput))
      const strip = (events: ReadonlyArray<SessionEvent>) => events.map(({ time: _time, ...rest }) => rest)
      expect(strip(a)).toEqual(strip(b))
      expect(a.every((e) => Object.isFrozen(e) && Object.isFrozen(e.data))).toBe(true)
      // the events are detached from the caller's chunks
      expect(a.every((e, i) => e.type === "assistant/chunk" && e.data.chunk !== chunks[i])).toBe(true)
      // a turn the schema refuses takes the generic path and fails the same way
      const refused = yield* failsWith(direct.appendChunks(-1, 1, [StreamChunk.textDelta(0, "x")]), "INVALID_EVENT")
      const alsoRefused = yield* failsWith(
        built.appendAll([{ type: "assistant/chunk", data: { turn: -1, step: 1, chunk: StreamChunk.textDelta(0, "x") } } as AppendInput]),
        "INVALID_EVENT"
      )
      expect(refused.message).toBe(alsoRefused.message)
    }))

  it.effect("[S-3] the first invalid input fails the batch; earlier inputs stay committed, later ones are not appended", () =>
    Effect.gen(function*() {
      const session = yield* Session.make()
      yield* failsWith(session.appendAll([...opening, chunk(1, 1, "ok"), bad, chunk(1, 1, "never")]), "INVALID_EVENT")
      const events = yield* session.events
      expect(events.map((e) => e.type)).toEqual(["turn/start", "user/message", "step/start", "assistant/chunk"])
      expect(yield* session.nextSeq).toBe(4)
    }))

  it.effect("[S-10] with an observer: every event observed once, in seq order, after commit", () =>
    Effect.gen(function*() {
      const session = yield* Session.make()
      const seen = yield* Ref.make<ReadonlyArray<number>>([])
      yield* session.observe((event) =>
        Effect.flatMap(session.events, (events) => {
          // the observed event is already committed
          expect(events.at(-1)?.seq).toBeGreaterThanOrEqual(event.seq)
          return Ref.update(seen, (s) => [...s, event.seq])
        })
      )
      yield* session.appendAll([...opening, chunk(1, 1, "x"), chunk(1, 1, "y")])
      expect(yield* Ref.get(seen)).toEqual([0, 1, 2, 3, 4])
    }))

  it.effect("[S-10] an append waiting for the lock can be interrupted; the lock passes on and seqs stay contiguous", () =>
    Effect.gen(function*() {
      const session = yield* Session.make()
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // an observer that holds the publication (and so the lock) until released
      yield* session.observe((event) =>
        event.seq === 0 ? Effect.andThen(Deferred.succeed(entered, undefined), Deferred.await(release)) : Effect.void
      )
      const first = yield* Effect.forkChild(session.append(turnStart(1)))
      yield* Deferred.await(entered)
      const waiting = yield* Effect.forkChild(session.append(userMessage("interrupted while waiting")))
      const next = yield* Effect.forkChild(session.appendAll([userMessage("after"), stepStart(1, 1)]))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(waiting)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      const stored = yield* Fiber.join(next)
      const events = yield* session.events
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i))
      expect(stored.map((e) => e.type)).toEqual(["user/message", "step/start"])
      expect(events.some((e) => e.type === "user/message" && JSON.stringify(e.data).includes("interrupted while"))).toBe(false)
    }))
})
