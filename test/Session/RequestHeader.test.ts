import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ToolSchema } from "../../src/Llm/Message.js"
import * as RequestHeader from "../../src/Session/RequestHeader.js"
import * as Session from "../../src/Session/Session.js"
import type { EpochHeader } from "../../src/Session/SessionEvent.js"
import { config, requestHeader, text, turnStart } from "../support/sessionInputs.js"

const tool = (name: string): ToolSchema => ({ name, description: `${name} tool`, parameters: { type: "object", properties: {} } })
const base: EpochHeader = { config, system: "You are terse.", tools: [tool("a"), tool("b")] }

/** What a loop instance does before each request: decide, log when needed. */
const loopRequest = (session: Session.Session, next: EpochHeader, first: boolean) =>
  Effect.gen(function*() {
    const reason = RequestHeader.decideHeader(yield* session.requestHeader, next, first)
    if (reason !== undefined) yield* session.append(requestHeader(next, reason))
    return reason
  })

describe("RequestHeader", () => {
  it.effect("AC-38 [S-18,S-19] initial; unchanged → none; new instance → resume; changed system or reordered tools → change", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* s.append(turnStart(1))
      expect(yield* loopRequest(s, base, true)).toBe("initial")
      expect(yield* loopRequest(s, base, false)).toBeUndefined()
      expect(yield* loopRequest(s, { ...base }, false)).toBeUndefined()
      // a new loop instance over the same log: logged even though unchanged
      expect(yield* loopRequest(s, base, true)).toBe("resume")
      expect(yield* loopRequest(s, { ...base, system: "You are verbose." }, false)).toBe("change")
      expect(yield* loopRequest(s, { ...base, system: "You are verbose.", tools: [tool("b"), tool("a")] }, false)).toBe("change")
      const logged = (yield* s.events).flatMap((e) => e.type === "request/header" ? [e.data.reason] : [])
      expect(logged).toEqual(["initial", "resume", "change", "change"])
      // every header is a full snapshot
      const last = yield* s.requestHeader
      expect(last).toEqual({ ...base, system: "You are verbose.", tools: [tool("b"), tool("a")] })
    }))

  it("AC-38 [S-18] empty system, tools and prefix are canonicalized away; absent ≡ empty", () => {
    const full: EpochHeader = { config, system: "", tools: [], messagePrefix: [] }
    expect(RequestHeader.canonicalize(full)).toEqual({ config })
    expect(RequestHeader.equals(full, { config })).toBe(true)
    expect(RequestHeader.canonicalize(base)).toBe(base)
    const frozen = Object.freeze({ ...full })
    expect(Object.isFrozen(RequestHeader.canonicalize(frozen))).toBe(true)
  })

  it("[S-18,V-9] equality: config field-wise (stop presence), system, tools in order, prefix by canonical JSON", () => {
    expect(RequestHeader.equals(base, { ...base, config: { ...config, temperature: 0.5 } })).toBe(false)
    expect(RequestHeader.equals({ config: { ...config, stop: [] } }, { config })).toBe(false)
    expect(RequestHeader.equals({ config: { ...config, stop: ["a"] } }, { config: { ...config, stop: ["a"] } })).toBe(true)
    expect(RequestHeader.equals(base, { ...base, tools: [tool("a")] })).toBe(false)
    // key order inside a tool does not matter (canonical JSON)
    const reordered = { parameters: tool("a").parameters, description: "a tool", name: "a" }
    expect(RequestHeader.equals(base, { ...base, tools: [reordered, tool("b")] })).toBe(true)
    const prefix = [{ role: "user" as const, content: [text("AGENTS.md")] }]
    expect(RequestHeader.equals({ config, messagePrefix: prefix }, { config })).toBe(false)
    expect(RequestHeader.equals({ config, messagePrefix: prefix }, { config, messagePrefix: [{ content: [text("AGENTS.md")], role: "user" }] })).toBe(true)
  })

  it("[S-19] decideHeader and foldRequestHeader", () => {
    expect(RequestHeader.decideHeader(undefined, base, false)).toBe("initial")
    expect(RequestHeader.decideHeader(undefined, base, true)).toBe("initial")
    expect(RequestHeader.decideHeader(base, base, true)).toBe("resume")
    expect(RequestHeader.foldRequestHeader([])).toBeUndefined()
  })
})
