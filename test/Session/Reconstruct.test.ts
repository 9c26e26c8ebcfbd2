import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ToolSchema } from "../../src/Llm/Message.js"
import * as Reconstruct from "../../src/Session/Reconstruct.js"
import * as Session from "../../src/Session/Session.js"
import type { EpochHeader } from "../../src/Session/SessionEvent.js"
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
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage
} from "../support/sessionInputs.js"

const tool: ToolSchema = { name: "echo", description: "echo", parameters: { type: "object" } }
const prefix = [{ role: "user" as const, content: [text("# AGENTS.md")] }]
const h1: EpochHeader = { config, system: "You are terse.", tools: [tool], messagePrefix: prefix }
const h2: EpochHeader = { ...h1, config: { ...config, temperature: 0.2 }, system: "You are verbose." }

describe("Reconstruct", () => {
  it.effect("[S-20] each step: prefix + derivation strictly before step/start; fields = latest header before the first chunk", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      // what a loop does: snapshot messages, step/start, header (when changed), stream, record
      const sent: Array<unknown> = []
      const request = (header: EpochHeader) =>
        Effect.map(s.deriveMessages, (history) => Reconstruct.toRequest(header, history))
      yield* appendAll(s, [turnStart(1), userMessage("hi")])
      sent.push(yield* request(h1))
      yield* appendAll(s, [stepStart(1, 1), requestHeader(h1), chunk(1, 1, "x"), assistant(1, 1, [call("c1")]), toolCall(1, 1, "c1"), toolResult(1, 1, "c1", "ping"), context("ctx"), stepEnd(1, 1)])
      yield* s.append(steering(1, "steer"))
      sent.push(yield* request(h2))
      yield* appendAll(s, [stepStart(1, 2), requestHeader(h2, "change"), chunk(1, 2, "y"), assistant(1, 2, [text("done")]), stepEnd(1, 2), turnEnd(1)])
      // a failed step that streamed nothing, then a step whose header is logged after a replace
      yield* appendAll(s, [turnStart(2), userMessage("again")])
      sent.push(yield* request(h2))
      yield* appendAll(s, [stepStart(2, 1), stepEnd(2, 1), turnEnd(2, { kind: "error", step: 1, message: "boom" })])

      const rebuilt = Reconstruct.reconstruct(yield* s.events)
      expect(rebuilt.map((r) => [r.turn, r.step, r.firstChunkSeq !== undefined])).toEqual([[1, 1, true], [1, 2, true], [2, 1, false]])
      expect(rebuilt.map((r) => r.request)).toEqual(sent)
      const second = rebuilt[1]?.request
      expect(second?.system).toBe("You are verbose.")
      expect(second?.temperature).toBe(0.2)
      expect(second?.messages[0]).toEqual(prefix[0])
      expect(second?.messages.map((m) => m.role)).toEqual(["user", "user", "assistant", "user", "user", "user"])
      // requests append-extend: each is a prefix of the next (no replace here)
      const m1 = rebuilt[0]?.request?.messages ?? []
      expect(second?.messages.slice(0, m1.length)).toEqual(m1)
    }))

  it.effect("[S-20] a replace between steps is reflected; no header → request undefined", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* appendAll(s, [turnStart(1), userMessage("u"), stepStart(1, 1), chunk(1, 1, "a"), assistant(1, 1, [text("a")]), stepEnd(1, 1)])
      yield* s.append(context("summary", undefined, { surfaceOp: { op: "replace", start: 1, end: 4 }, sourceEventSeqs: [1, 4] }))
      yield* appendAll(s, [stepStart(1, 2), requestHeader({ config }), chunk(1, 2, "b"), stepEnd(1, 2)])
      const rebuilt = Reconstruct.reconstruct(yield* s.events)
      expect(rebuilt[0]?.request).toBeUndefined()
      expect(rebuilt[1]?.request).toEqual({ provider: "scripted", model: "m1", messages: [{ role: "user", content: [text("summary")] }] })
    }))
})
