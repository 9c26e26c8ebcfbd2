/**
 * The loop tests' reconstruction check can fail where it matters (issue 18): a fault in the
 * projection code changes the live requests and `Reconstruct` alike, so only the independent
 * rebuild (test/support/IndependentRebuild.ts) can catch it. This file tampers with the projection
 * module itself (a wrapper around injected `context/message` content, switched on per test) and
 * shows the check fails through the independent rebuild while `Reconstruct` alone is fooled. It
 * also feeds the call-answer check (every tool call of an assistant message answered exactly once)
 * broken logs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { vi } from "vitest"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Reconstruct from "../../src/Session/Reconstruct.js"
import * as Session from "../../src/Session/Session.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as IndependentRebuild from "../support/IndependentRebuild.js"
import { echo, text } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"
import {
  appendAll,
  assistant,
  call,
  chunk,
  config,
  context,
  requestHeader,
  stepEnd,
  stepStart,
  steering,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage
} from "../support/sessionInputs.js"

const tamper = vi.hoisted(() => ({ on: false }))

vi.mock("../../src/Session/Projection.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/Session/Projection.js")>()
  const deriveEventMessage: typeof real.deriveEventMessage = (event) => {
    const m = real.deriveEventMessage(event)
    if (!tamper.on || m === undefined || event.type !== "context/message") return m
    const wrapped = [ContentBlock.text("<context>"), ...m.content, ContentBlock.text("</context>")]
    return Object.freeze({ ...m, content: Object.freeze(wrapped) })
  }
  return { ...real, deriveEventMessage }
})

const withTamper = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      tamper.on = true
    }),
    () => self,
    () =>
      Effect.sync(() => {
        tamper.on = false
      })
  )

/** An injected context, then a prompt that calls a tool and answers: two requests. */
const scenario = Effect.gen(function*() {
  const t = yield* TestKit.agent({ tools: [echo] })
  yield* t.agent.inject(text("note"), { source: Message.pluginSource("notes") })
  yield* t.prompt("hi")
  return t
})

const layer = () =>
  TestKit.layer({ script: [Scripted.call("c1", "echo", "{\"text\":\"x\"}"), Scripted.text("done")], tools: [echo] })

describe("independent request rebuild (S-14, S-15, S-20)", () => {
  it.effect("[S-14,S-20] untampered: both rebuilds match the requests and the live history", () =>
    Effect.gen(function*() {
      const t = yield* scenario
      const [first] = yield* t.requests
      expect(first?.messages[0]).toEqual({ role: "user", content: text("note") })
      expect(Reconstruction.mismatches(t.agent.session.id, yield* t.events, yield* t.requests)).toEqual([])
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(layer())))

  it.effect("[S-14,S-20] a wrapper added to injected content is caught by the independent rebuild only", () =>
    Effect.gen(function*() {
      const t = yield* withTamper(scenario)
      const [first] = yield* t.requests
      // the tampered projection reached the model
      expect(first?.messages[0]?.content).toEqual([
        ContentBlock.text("<context>"),
        ContentBlock.text("note"),
        ContentBlock.text("</context>")
      ])
      const events = yield* t.events
      const requests = yield* t.requests
      const failed = yield* withTamper(Effect.sync(() => Reconstruction.mismatches(t.agent.session.id, events, requests)))
      // Reconstruct shares the tampered code, so it agrees with the live requests: only the
      // independent rebuild notices
      expect(failed.map((f) => f.rebuild)).toEqual(["independent"])
      const exit = yield* withTamper(Effect.exit(Reconstruction.verify(t.agent.session, requests)))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("independent rebuild")
    }).pipe(Effect.provide(layer())))

  it.effect("[S-8,S-13,S-20] replace, steering, tool results, empty assistant and prefix: same as Reconstruct", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      const header = {
        config: { ...config, temperature: 0.3 },
        system: "",
        tools: [],
        messagePrefix: [Message.user("# AGENTS.md")]
      }
      yield* appendAll(s, [
        turnStart(1),
        userMessage("u"),
        stepStart(1, 1),
        requestHeader(header),
        chunk(1, 1, "a"),
        assistant(1, 1, [call("c1")]),
        toolCall(1, 1, "c1"),
        toolResult(1, 1, "c1", "r"),
        stepEnd(1, 1)
      ])
      yield* s.append(context("summary", undefined, { surfaceOp: { op: "replace", start: 1, end: 7 }, sourceEventSeqs: [1, 5, 7] }))
      yield* s.append(steering(1, "steer"))
      yield* appendAll(s, [stepStart(1, 2), chunk(1, 2, "b"), assistant(1, 2, []), stepEnd(1, 2)])
      yield* appendAll(s, [stepStart(1, 3), stepEnd(1, 3), turnEnd(1)])
      const events = yield* s.events
      const independent = IndependentRebuild.rebuild(events)
      const reference = Reconstruct.reconstruct(events)
      expect(independent.map((r) => r.streamed)).toEqual([true, true, false])
      expect(independent.map((r) => r.request)).toEqual(reference.map((r) => r.request))
      expect(independent[2]?.request?.messages).toEqual([
        Message.user("# AGENTS.md"),
        { role: "user", content: text("summary") },
        { role: "user", content: text("steer") }
      ])
      expect(IndependentRebuild.history(events)).toEqual(yield* s.deriveMessages)
    }))
})

describe("call answers (S-16, L-17)", () => {
  const log = (build: (s: Session.Session) => Effect.Effect<unknown, unknown>) =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* Effect.orDie(build(s))
      return yield* s.events
    })
  const twoCalls = (s: Session.Session) =>
    appendAll(s, [turnStart(1), userMessage("u"), stepStart(1, 1), assistant(1, 1, [call("c1"), call("c2")])])
  const answer = (s: Session.Session, id: string) =>
    appendAll(s, [toolCall(1, 1, id), toolResult(1, 1, id, "r")])
  const problemsOf = (events: ReadonlyArray<SessionEvent>) => Reconstruction.callProblems(events)

  it.effect("[L-17] every call answered once: no problem", () =>
    Effect.gen(function*() {
      const events = yield* log((s) =>
        Effect.andThen(twoCalls(s), Effect.andThen(Effect.andThen(answer(s, "c1"), answer(s, "c2")), appendAll(s, [stepEnd(1, 1), turnEnd(1)])))
      )
      expect(problemsOf(events)).toEqual([])
    }))

  it.effect("[L-17] a call of the message without result (no placeholder) in an aborted turn is reported", () =>
    Effect.gen(function*() {
      const events = yield* log((s) =>
        Effect.andThen(
          twoCalls(s),
          Effect.andThen(answer(s, "c1"), appendAll(s, [stepEnd(1, 1), turnEnd(1, { kind: "aborted", reason: "x" })]))
        )
      )
      // the old balance check (tool/call against tool/result) sees nothing wrong
      expect(Reconstruction.problems(events)).toEqual([])
      expect(problemsOf(events)).toEqual(["turn 1 (aborted) ends with calls never answered: c2"])
    }))

  it.effect("[S-16] a call without result is legal in a failed turn; a second result for one id is reported", () =>
    Effect.gen(function*() {
      const failed = yield* log((s) =>
        Effect.andThen(twoCalls(s), appendAll(s, [stepEnd(1, 1), turnEnd(1, { kind: "error", step: 1, message: "boom" })]))
      )
      expect(problemsOf(failed)).toEqual([])
      const twice = yield* log((s) =>
        Effect.andThen(
          twoCalls(s),
          Effect.andThen(
            Effect.andThen(answer(s, "c1"), answer(s, "c2")),
            appendAll(s, [toolResult(1, 1, "c2", "again"), stepEnd(1, 1), turnEnd(1)])
          )
        )
      )
      expect(problemsOf(twice)).toEqual([`tool/result #${twice.length - 3} answers call c2 a second time`])
    }))
})
