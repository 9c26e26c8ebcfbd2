/**
 * Resuming an interrupted turn through the public API (DEC-16, issue 29): an agent whose fiber is
 * interrupted mid-stream is reopened from the same JSONL store and finishes the turn; calls a crash
 * left without a result are re-run or reported by their tool's effects and the policy; the
 * requests after resuming are rebuilt from the log alone.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Tool from "../../src/Loop/Tool.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Reconstruction from "../support/Reconstruction.js"

const tempRoot = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "resume-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const texts = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<string> =>
  events.flatMap((e) =>
    e.type === "assistant/message" ? e.data.content.flatMap((b) => (b.type === "text" ? [b.text] : [])) : []
  )

/** Cuts a stored JSONL log after the first event matching `cut` (a process that died right there). */
const crashAfter = (root: string, cut: (event: { readonly type: string; readonly data: unknown }) => boolean): void => {
  const files = Fs.readdirSync(root, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"))
  const file = Path.join(root, files[0] as string)
  const lines = Fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "")
  const at = lines.findIndex((l, i) => i > 0 && cut(JSON.parse(l)))
  Fs.writeFileSync(file, `${lines.slice(0, at + 1).join("\n")}\n`)
}

/** The requests whose steps survived the crash: the first turn's first one, then every one after resuming. */
const survivors = <A>(requests: ReadonlyArray<A>): ReadonlyArray<A> => [...requests.slice(0, 1), ...requests.slice(2)]

const counted = (name: string, effects: Tool.Effects, runs: Array<string>) =>
  Tool.raw({
    name,
    description: `the ${name} tool`,
    parameters: { type: "object", properties: {} },
    effects,
    execute: (_args, context) =>
      Effect.sync(() => {
        runs.push(`${name} ${context.idempotencyKey}`)
        return [ContentBlock.text(`${name} done`)]
      })
  })

describe("resuming an interrupted turn (DEC-16)", () => {
  it.effect("an agent whose fiber is interrupted mid-stream, reopened from the same store, finishes the turn", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const script: Scripted.Script = [Scripted.hang(Scripted.say("partial ")), Scripted.text("the whole answer")]
      yield* Effect.gen(function*() {
        const streamed = yield* Deferred.make<void>()
        const streaming = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", session: { _tag: "New", id: "emb-1" } })
          yield* agent.send([ContentBlock.text("tell me")])
          yield* TestKit.waitForEvent(agent.session, (e) => e.type === "assistant/chunk")
          yield* Deferred.succeed(streamed, undefined)
          return yield* Effect.never
        })))
        // once a chunk is logged, interrupt the whole fiber (its scope closes the agent)
        yield* Deferred.await(streamed)
        yield* Fiber.interrupt(streaming)
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", session: { _tag: "Resume", id: "emb-1" } })
          expect(yield* agent.resumeTurn()).toBe(true)
          // nothing left to resume
          expect(yield* agent.resumeTurn()).toBe(false)
          const events = yield* agent.session.events
          yield* Reconstruction.verify(agent.session, yield* Scripted.requests)
          return events
        }))
        const ends = events.filter((e) => e.type === "turn/end").map((e) => e.type === "turn/end" && e.data)
        expect(ends).toEqual([
          { turn: 1, reason: expect.objectContaining({ kind: expect.stringMatching(/disposed|aborted/) }) },
          { turn: 1, reason: { kind: "completed" } }
        ])
        const resumed = events.find((e) => e.type === "turn/resume")
        expect(resumed?.data).toEqual({ turn: 1, fromStep: 2, superseded: { step: 1, chunks: expect.any(Number) } })
        expect(texts(events)).toEqual(["the whole answer"])
        Reconstruction.expectBalanced(events)
        Reconstruction.expectCallsAnswered(events)
      }).pipe(Effect.provide(TestKit.layer({ script, persistence: Jsonl.layer({ root }) })))
    }))

  it.effect("after a crash: a logged result is kept, a side-effecting call in doubt is reported, a call never started runs", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const runs: Array<string> = []
      const tools = [counted("look", "read-only", runs), counted("pay", "side-effecting", runs), counted("mail", "side-effecting", runs)]
      const script: Scripted.Script = [
        [
          Scripted.toolCall("c1", "look", "{}"),
          Scripted.toolCall("c2", "pay", "{}"),
          Scripted.toolCall("c3", "mail", "{}"),
          Scripted.finish("tool-calls")
        ],
        Scripted.text("first run"),
        Scripted.text("after resuming")
      ]
      yield* Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", tools, session: { _tag: "New", id: "doubt-1" } })
          yield* agent.send([ContentBlock.text("go")])
          yield* agent.whenIdle
        }))
        expect(runs.map((r) => r.split(" ")[0])).toEqual(["look", "pay", "mail"])
        // the process died right after `pay`'s tool/call: look answered; pay in doubt; mail never started
        crashAfter(root, (e) => e.type === "tool/call" && (e.data as { callId: string }).callId === "c2")
        runs.length = 0
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", tools, session: { _tag: "Resume", id: "doubt-1" } })
          expect(yield* agent.resumeTurn()).toBe(true)
          yield* Reconstruction.verify(agent.session, survivors(yield* Scripted.requests))
          return yield* agent.session.events
        }))
        // look had a logged result: never again; pay is reported; mail never ran: it runs now
        expect(runs).toEqual(["mail doubt-1:1:1:c3"])
        const decisions = events.filter((e) => e.type === "tool/in-doubt").map((e) => e.type === "tool/in-doubt" && e.data)
        expect(decisions).toEqual([
          { turn: 1, step: 1, callId: "c2", name: "pay", decision: "report", by: "policy" },
          { turn: 1, step: 1, callId: "c3", name: "mail", decision: "rerun", by: "not-started" }
        ])
        // the step after the tools is requested again (the first answer to it was lost with the crash)
        expect(texts(events).at(-1)).toBe("after resuming")
        Reconstruction.expectBalanced(events)
        Reconstruction.expectCallsAnswered(events)
      }).pipe(Effect.provide(TestKit.layer({ script, persistence: Jsonl.layer({ root }) })))
    }))

  it.effect("policy rerun runs a side-effecting call in doubt again, with the same idempotency key", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const runs: Array<string> = []
      const tools = [counted("pay", "side-effecting", runs)]
      const script: Scripted.Script = [Scripted.call("c1", "pay", "{}"), Scripted.text("paid"), Scripted.text("paid once more")]
      yield* Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", tools, session: { _tag: "New", id: "doubt-2" } })
          yield* agent.send([ContentBlock.text("pay")])
          yield* agent.whenIdle
        }))
        crashAfter(root, (e) => e.type === "tool/call")
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", tools, session: { _tag: "Resume", id: "doubt-2" } })
          expect(yield* agent.resumeTurn({ inDoubt: () => Effect.succeed("rerun") })).toBe(true)
          yield* Reconstruction.verify(agent.session, survivors(yield* Scripted.requests))
          return yield* agent.session.events
        }))
        expect(runs).toEqual(["pay doubt-2:1:1:c1", "pay doubt-2:1:1:c1"])
        const decided = events.find((e) => e.type === "tool/in-doubt")
        expect(decided?.data).toMatchObject({ callId: "c1", decision: "rerun", by: "user" })
        // the re-run's result replaced the synthetic one on the surface
        const results = events.filter((e) => e.type === "tool/result")
        expect(results.at(-1)?.surfaceOp).toEqual({ op: "replace", start: results.at(-2)?.seq, end: results.at(-2)?.seq })
        Reconstruction.expectBalanced(events)
        Reconstruction.expectCallsAnswered(events)
      }).pipe(Effect.provide(TestKit.layer({ script, persistence: Jsonl.layer({ root }) })))
    }))

  it.effect("a read-only call in doubt runs again without asking; its result replaces the synthetic one", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const runs: Array<string> = []
      const tools = [counted("look", "read-only", runs)]
      const asked: Array<string> = []
      const script: Scripted.Script = [Scripted.call("c1", "look", "{}"), Scripted.text("seen"), Scripted.text("seen again")]
      yield* Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", tools, session: { _tag: "New", id: "doubt-3" } })
          yield* agent.send([ContentBlock.text("look")])
          yield* agent.whenIdle
        }))
        crashAfter(root, (e) => e.type === "tool/call")
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const agent = yield* Agent.make({ provider: "scripted", model: "test", tools, session: { _tag: "Resume", id: "doubt-3" } })
          const policy = (call: { readonly block: { readonly id: string } }) =>
            Effect.sync(() => {
              asked.push(call.block.id)
              return "report" as const
            })
          expect(yield* agent.resumeTurn({ inDoubt: policy })).toBe(true)
          yield* Reconstruction.verify(agent.session, survivors(yield* Scripted.requests))
          return yield* agent.session.events
        }))
        expect(asked).toEqual([])
        expect(runs).toEqual(["look doubt-3:1:1:c1", "look doubt-3:1:1:c1"])
        expect(events.find((e) => e.type === "tool/in-doubt")?.data).toMatchObject({ decision: "rerun", by: "read-only" })
        expect(texts(events).at(-1)).toBe("seen again")
        Reconstruction.expectBalanced(events)
        Reconstruction.expectCallsAnswered(events)
      }).pipe(Effect.provide(TestKit.layer({ script, persistence: Jsonl.layer({ root }) })))
    }))
})
