/**
 * The embedder's test helpers and API edges (issue 18): a durable backend composes into the test
 * layer as is, waiting for an event, checking requests against their reconstruction, and a request
 * point returning fields outside the declared call config.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { echo } from "../support/LoopKit.js"

const tempRoot = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "embedder-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const isTurnEnd = (e: SessionEvent): e is Extract<SessionEvent, { type: "turn/end" }> => e.type === "turn/end"

describe("embedder API (issue 18)", () => {
  it.effect("Jsonl.layer composes into TestKit.layer without Layer.orDie; the log reaches the files", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      yield* Effect.scoped(
        Effect.gen(function*() {
          const t = yield* TestKit.agent({ session: { _tag: "New", id: "durable-1" } })
          yield* t.prompt("hi")
          expect(yield* t.texts).toEqual(["hello"])
        }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("hello")], persistence: Jsonl.layer({ root }) })))
      )
      const written = Fs.readdirSync(root, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"))
      expect(written).toHaveLength(1)
      const text = Fs.readFileSync(Path.join(root, written[0] as string), "utf8")
      expect(text).toContain("\"durable-1\"")
      expect(text).toContain("\"turn/end\"")
    }))

  it.effect("waitFor: an event already logged is returned at once; a later one is awaited (refinements narrow)", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      const waiting = yield* Effect.forkChild(t.waitFor(isTurnEnd))
      yield* t.agent.send([{ type: "text", text: "hi" }])
      const ended = yield* Fiber.join(waiting)
      expect(ended.data.reason).toEqual({ kind: "completed" })
      const again = yield* t.waitFor((e) => e.type === "user/message")
      expect(again.seq).toBeLessThan(ended.seq)
      const direct = yield* TestKit.waitForEvent(t.agent.session, isTurnEnd)
      expect(direct.seq).toBe(ended.seq)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("hello")] }))))

  it.effect("checkRequests passes when every request is what the log rebuilds, and fails on a request the log does not say", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.prompt("ping")
      yield* t.checkRequests
      const requests = yield* t.requests
      expect(requests).toHaveLength(2)
      const events = yield* t.events
      expect(TestKit.reconstructionMismatch(t.agent.id, events, requests)).toBeUndefined()
      // able to fail: the second request carried content the log never recorded
      const tampered = requests.map((r, i) =>
        i === 1 ? { ...r, messages: [...r.messages, { role: "user" as const, content: [{ type: "text" as const, text: "injected" }] }] } : r
      )
      const mismatch = TestKit.reconstructionMismatch(t.agent.id, events, tampered)
      expect(mismatch?._tag).toBe("ReconstructionMismatch")
      expect(mismatch?.request).toContain("injected")
      expect(mismatch?.rebuilt).toHaveLength(2)
      // out of order is a mismatch too
      expect(TestKit.reconstructionMismatch(t.agent.id, events, [...requests].reverse())).toBeDefined()
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.call("c1", "echo", "{\"text\":\"ping\"}"), Scripted.text("pong")],
      tools: [echo]
    }))))

  it.effect("a request point returning a field outside the call config fails the turn before any request is sent", () =>
    Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks
      yield* hooks.request.register((i) => {
        const extended = { ...i.config, topP: 0.9 }
        return Effect.succeed(extended)
      })
      const t = yield* TestKit.agent()
      yield* t.prompt("hi")
      expect(yield* t.requests).toEqual([])
      const [reason] = yield* t.turnEnds
      expect(reason?.kind).toBe("error")
      expect(reason?.kind === "error" ? reason.message : "").toContain("\"topP\"")
      expect((yield* t.types)).not.toContain("request/header")
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("never")] }))))
})
