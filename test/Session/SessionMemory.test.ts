/**
 * Bounded memory (issue 20, decision 0017): a store-backed session drops the chunk events of a
 * persisted assistant message from memory; `events`, messages and forks read the same log as before.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as Session from "../../src/Session/Session.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as SessionStore from "../../src/Session/SessionStore.js"
import type { Service } from "../../src/Session/SessionPersistence.js"
import { SessionPersistence } from "../../src/Session/SessionPersistence.js"
import { jsonlStorage, tempDir } from "../support/persistenceSubjects.js"

const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

/** One step of `n` one-word chunks, logged in batches of 8 like the loop does; returns the chunk events. */
const step = (session: Session.Session, turn: number, n: number) =>
  Effect.gen(function*() {
    yield* session.append({ type: "turn/start", data: { turn, trigger: { kind: "message", source: { kind: "user" } } } })
    yield* session.append({
      type: "user/message",
      data: { content: [{ type: "text", text: `prompt ${turn}` }], source: { kind: "user" } },
      surfaceOp: "append"
    })
    yield* session.append({ type: "step/start", data: { turn, step: 1 } })
    const chunks: Array<SessionEvent> = []
    const wire = [
      StreamChunk.blockStart(0, "text"),
      ...Array.from({ length: n }, (_, i) => StreamChunk.textDelta(0, `w${i} `)),
      StreamChunk.finish({ kind: "stop" })
    ]
    for (let i = 0; i < wire.length; i += 8) {
      const batch = wire.slice(i, i + 8).map((chunk) => ({ type: "assistant/chunk" as const, data: { turn, step: 1, chunk } }))
      chunks.push(...(yield* session.appendAll(batch)))
    }
    const text = Array.from({ length: n }, (_, i) => `w${i} `).join("")
    yield* session.append({
      type: "assistant/message",
      data: {
        turn,
        step: 1,
        content: [{ type: "text", text }],
        provenance: { provider: "p", model: "m" }
      },
      surfaceOp: "append",
      sourceEventSeqs: chunks.map((e) => e.seq)
    })
    yield* session.append({ type: "step/end", data: { turn, step: 1 } })
    yield* session.append({ type: "turn/end", data: { turn, reason: { kind: "completed" } } })
    return chunks
  })

/** Waits one macrotask (WeakRef targets stay alive until the current job ends), then collects. */
const collect = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))).pipe(
  Effect.tap(() => Effect.sync(() => {
    gc()
    gc()
  }))
)

const backends: ReadonlyArray<{ readonly name: string; readonly open: Effect.Effect<Service, unknown, import("effect/Scope").Scope> }> = [
  { name: "Memory", open: Memory.make() },
  { name: "Jsonl", open: Effect.flatMap(tempDir("session-memory-"), (root) => jsonlStorage(root).open) }
]

describe.each(backends)("bounded memory over $name (issue 20, 0017)", ({ open }) => {
  it.live("[S-3] chunk events of a persisted assistant message are no longer held; events reads them back unchanged", () =>
    Effect.gen(function*() {
      const persistence = yield* open
      const store = yield* SessionStore.make.pipe(Effect.provideService(SessionPersistence, persistence))
      const session = yield* store.create({ id: "bounded", cwd: "/work/x" })
      const committed: Array<SessionEvent> = []
      yield* session.observe((event) => Effect.sync(() => void committed.push(event)))
      const weak: Array<WeakRef<SessionEvent>> = []
      for (let turn = 1; turn <= 3; turn++) {
        weak.push(...(yield* step(session, turn, 200)).map((chunk) => new WeakRef(chunk)))
      }
      // what the observer saw is every event in order (it holds them; the check below drops it)
      const all = yield* session.events
      expect(all.length).toBe(yield* session.nextSeq)
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i))
      expect(all).toEqual(committed)
      const messages = yield* session.deriveMessages
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"])
      // a fork seeded from the live session sees the whole log
      const child = yield* store.fork(session)
      expect(yield* child.events).toEqual(all)
      expect(yield* child.deriveMessages).toEqual(messages)
      committed.length = 0
      yield* collect
      // nothing in the session, the store or the backend keeps a chunk event alive
      expect(weak.flatMap((w, i) => (w.deref() === undefined ? [] : [i]))).toEqual([])
      const again = yield* session.events
      expect(again.length).toBe(all.length)
      expect(again.filter((e) => e.type === "assistant/chunk").length).toBe(3 * 202)
      // what is held: every event but the dropped chunks, in seq order, without a read of the log;
      // a persisted message without its citations (they are in the stored log: `events` has them)
      const held = yield* session.heldEvents
      const slim = (e: SessionEvent): SessionEvent => {
        if (e.type !== "assistant/message") return e
        const { sourceEventSeqs: _cited, ...rest } = e
        return rest as SessionEvent
      }
      expect(held).toEqual(all.filter((e) => e.type !== "assistant/chunk").map(slim))
      expect(all.filter((e) => e.type === "assistant/message").every((e) => e.sourceEventSeqs?.length === 202)).toBe(true)
      // the surface holds the same slim messages; what it projects is unchanged
      const surface = yield* session.surface
      expect(surface.nodes.filter((e) => e.type === "assistant/message").every((e) => e.sourceEventSeqs === undefined)).toBe(true)
      expect(yield* session.deriveMessages).toEqual(messages)
    }))

  it.live("[S-3] chunks of an open step stay in memory until its message is persisted", () =>
    Effect.gen(function*() {
      const persistence = yield* open
      const store = yield* SessionStore.make.pipe(Effect.provideService(SessionPersistence, persistence))
      const session = yield* store.create({ id: "open-step" })
      yield* session.append({ type: "turn/start", data: { turn: 1, trigger: { kind: "message", source: { kind: "user" } } } })
      yield* session.append({ type: "step/start", data: { turn: 1, step: 1 } })
      const chunk = yield* session.append({
        type: "assistant/chunk",
        data: { turn: 1, step: 1, chunk: StreamChunk.blockStart(0, "text") }
      })
      const weak = new WeakRef(chunk)
      yield* collect
      expect(weak.deref()).toBeDefined()
      expect((yield* session.events).map((e) => e.type)).toEqual(["turn/start", "step/start", "assistant/chunk"])
      expect(yield* session.heldEvents).toEqual(yield* session.events)
    }))
})

describe("a bare session keeps everything (no store)", () => {
  it.effect("[S-3] without a stored log nothing is dropped", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ id: "bare" })
      const chunks = yield* step(session, 1, 10)
      const events = yield* session.events
      for (const c of chunks) expect(events[c.seq]).toBe(c)
    }))
})
