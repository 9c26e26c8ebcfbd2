/**
 * Issue 30 item 5 (DEC-17, S-14): what arrives mid-session — steering, injected context, reminders — reaches every
 * adapter's wire as user-role content, never as a system message (a system message mid-history rewrites the
 * prompt's start for some providers and breaks their cache: farion1231/cc-switch#7252). The requests come from the
 * real loop; each adapter's own request builder renders them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as Message from "../../src/Llm/Message.js"
import type * as Agent from "../../src/Loop/Agent.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { tool } from "../support/LoopKit.js"

const STEERING = "Steering: also update the changelog."
const REMINDER = "<system-reminder>AGENTS.md changed: use tabs.</system-reminder>"
const target: { current: Agent.Agent | undefined } = { current: undefined }
const nudge = tool("nudge", () =>
  Effect.gen(function*() {
    if (target.current !== undefined) yield* Effect.orDie(target.current.steer([ContentBlock.text(STEERING)]))
    return [ContentBlock.text("nudged")]
  }))

/** the loop's last request after a prompt, an injected reminder, and a steering message sent during a tool call */
const lastRequest = Effect.gen(function*() {
  const t = yield* TestKit.agent({ tools: [nudge] })
  target.current = t.agent
  const sp = yield* SystemPrompt.SystemPrompt
  yield* sp.registerSection({ name: "base", order: 10, text: "You are a coding agent." }, { agentId: t.agent.id })
  yield* t.prompt("first")
  yield* t.agent.inject([ContentBlock.text(REMINDER)])
  yield* t.prompt("second")
  const requests = yield* t.requests
  return requests[requests.length - 1] as Message.GenerateOptions
}).pipe(Effect.provide(TestKit.layer({
  script: [Scripted.text("one"), Scripted.call("c1", "nudge", "{}"), Scripted.text("two")],
  tools: [nudge]
})))

const texts = (value: unknown): string => JSON.stringify(value)

describe("mid-session content never uses the system role (issue 30, S-14)", () => {
  it.effect("the loop's request: steering and the reminder are user messages; the system prompt is the request's own", () =>
    Effect.gen(function*() {
      const request = yield* lastRequest
      expect(request.system).toBe("You are a coding agent.")
      expect(request.messages.every((m) => m.role !== "system")).toBe(true)
      const userTexts = request.messages.filter((m) => m.role === "user").map((m) => ContentBlock.flattenText(m.content))
      expect(userTexts).toContain(STEERING)
      expect(userTexts).toContain(REMINDER)
    }))

  it.effect("Anthropic: no message has the system role; the top-level system holds only the system prompt", () =>
    Effect.gen(function*() {
      const request = yield* lastRequest
      const resolved = yield* Anthropic.resolve({ apiKey: Redacted.make("k") })
      const body = Result.getOrThrow(Anthropic.buildBody(resolved, request))
      const messages = body["messages"] as ReadonlyArray<Record<string, unknown>>
      expect(messages.every((m) => m["role"] === "user" || m["role"] === "assistant")).toBe(true)
      expect(texts(messages.filter((m) => m["role"] === "user"))).toContain(STEERING)
      expect(texts(messages.filter((m) => m["role"] === "user"))).toContain(REMINDER.replace(/"/g, "\\\""))
      expect(texts(body["system"])).not.toContain("Steering")
      expect(texts(body["system"])).not.toContain("system-reminder")
    }))

  it.effect("OpenAI-compatible (every profile): one system message, first; steering and reminder as user messages", () =>
    Effect.gen(function*() {
      const request = yield* lastRequest
      for (const profile of Object.keys(OpenAiCompatible.profiles) as ReadonlyArray<OpenAiCompatible.ProfileName>) {
        const wire = OpenAiCompatible.toWireMessages(request, OpenAiCompatible.profiles[profile].sendReasoningContent)
        const systems = wire.flatMap((m, i) => m["role"] === "system" ? [i] : [])
        expect(systems, profile).toEqual([0])
        expect(wire[0]?.["content"], profile).toBe("You are a coding agent.")
        const users = wire.filter((m) => m["role"] === "user").map((m) => m["content"])
        expect(users, profile).toContain(STEERING)
        expect(users, profile).toContain(REMINDER)
      }
    }))

  it.effect("Scripted: the adapter receives the steering and the reminder as user messages, no system message", () =>
    Effect.gen(function*() {
      const request = yield* lastRequest
      const handle = yield* Scripted.make([Scripted.text("ok")])
      yield* Stream.runDrain(handle.adapter.stream(request))
      const [received] = yield* handle.requests
      expect(received?.messages.filter((m) => m.role === "system")).toEqual([])
      const users = (received?.messages ?? []).filter((m) => m.role === "user").map((m) => ContentBlock.flattenText(m.content))
      expect(users).toContain(STEERING)
      expect(users).toContain(REMINDER)
    }))
})
