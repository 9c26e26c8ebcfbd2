import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import type { ContentBlock } from "../../src/Llm/ContentBlock.js"
import * as Projection from "../../src/Session/Projection.js"
import * as Session from "../../src/Session/Session.js"
import type { AppendInput, SessionEvent } from "../../src/Session/SessionEvent.js"
import {
  appendAll,
  assistant,
  call,
  chunk,
  context,
  plugin,
  provenance,
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

/** one of `arbs`, each as likely */
const oneOf = <A>(...arbs: ReadonlyArray<Arbitrary.Arbitrary<A>>): Arbitrary.Arbitrary<A> =>
  Arbitrary.flatMap(
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: arbs.length - 1 }))),
    (i) => arbs[i]!
  )
const anyText = Arbitrary.schema(Schema.String)
/** an extension block (not one of the core kinds) */
const citation = (r: { readonly url: string; readonly n: number }): ContentBlock => ({ type: "x-citation", ...r }) as never

const block: Arbitrary.Arbitrary<ContentBlock> = oneOf<ContentBlock>(
  Arbitrary.map(anyText, (t) => ({ type: "text" as const, text: t })),
  Arbitrary.map(
    Arbitrary.schema(Schema.Literals(["<context source=\"x\">", "<system-reminder>", "</context>", ""])),
    (t) => ({ type: "text" as const, text: t })
  ),
  Arbitrary.map(anyText, (t) => ({ type: "reasoning" as const, text: t })),
  Arbitrary.map(
    // fast-check's `integer()` never gave -0 (not lossless JSON, rejected at append)
    Arbitrary.all({ url: anyText, n: Arbitrary.map(Arbitrary.schema(Schema.Int), (n) => (n === 0 ? 0 : n)) }),
    citation
  )
)

describe("Projection", () => {
  it.effect("AC-29 [S-14] user, chunk, assistant [text, call c1], result c1 → roles [user, assistant, user]; tool-result isError false", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      yield* appendAll(s, [
        turnStart(1),
        userMessage("hi"),
        stepStart(1, 1),
        chunk(1, 1, "ok"),
        assistant(1, 1, [text("ok"), call("c1")]),
        toolCall(1, 1, "c1"),
        toolResult(1, 1, "c1", "echo: ping"),
        stepEnd(1, 1),
        turnEnd(1)
      ])
      const messages = yield* s.deriveMessages
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
      expect(messages[1]).toEqual({ role: "assistant", content: [text("ok"), call("c1")], provenance })
      expect(messages[2]).toEqual({
        role: "user",
        content: [{ type: "tool-result", toolCallId: "c1", content: [text("echo: ping")], isError: false }]
      })
    }))

  it.effect("AC-30 [S-14,W-8] context (plugin source, meta) and steering → verbatim user messages; meta only on the event; empty assistant → nothing", () =>
    Effect.gen(function*() {
      const s = yield* Session.make({ id: "s" })
      const [ctx] = yield* appendAll(s, [
        context("<system-reminder>\nnote\n</system-reminder>", { sha: "abc", set: ["AGENTS.md"] }),
        steering(1, "steer me"),
        assistant(1, 1, [])
      ])
      const messages = yield* s.deriveMessages
      expect(messages).toEqual([
        { role: "user", content: [text("<system-reminder>\nnote\n</system-reminder>")] },
        { role: "user", content: [text("steer me")] }
      ])
      expect(JSON.stringify(messages)).not.toContain("abc")
      expect(JSON.stringify(messages)).not.toContain("ctx")
      expect(JSON.stringify(messages)).not.toContain("<context")
      expect(ctx?.data).toMatchObject({ meta: { sha: "abc", set: ["AGENTS.md"] }, source: plugin("ctx") })
    }))

  it("[S-14] tool/result error and meta are not projected; isError always present", () => {
    const event = {
      type: "tool/result",
      seq: 3,
      time: 0,
      data: {
        turn: 1,
        step: 1,
        callId: "c9",
        content: [text("Error: boom")],
        isError: true,
        error: { name: "ToolError", code: "BOOM" },
        meta: { secret: 1 }
      },
      surfaceOp: "append"
    } as unknown as SessionEvent
    expect(Projection.deriveEventMessage(event)).toEqual({
      role: "user",
      content: [{ type: "tool-result", toolCallId: "c9", content: [text("Error: boom")], isError: true }]
    })
  })

  it("[S-14,V-2] non-surface and unknown types project to nothing", () => {
    const of = (type: string, data: unknown) => ({ type, seq: 0, time: 0, data }) as unknown as SessionEvent
    expect(Projection.deriveEventMessage(of("turn/start", { turn: 1, trigger: { kind: "message", source: { kind: "user" } } }))).toBeUndefined()
    expect(Projection.deriveEventMessage(of("prompt/blocked", { content: [text("x")], source: { kind: "user" }, reason: "no" }))).toBeUndefined()
    expect(Projection.deriveEventMessage(of("x-plugin/note", { content: [text("x")] }))).toBeUndefined()
    expect(Projection.deriveEventMessage(of("tool/call", { turn: 1, step: 1, callId: "c", name: "n", arguments: "{}" }))).toBeUndefined()
  })

  it.effect.prop(
    "[S-14] property: user, context and steering content is projected verbatim (deep-equal, same blocks, no wrapper)",
    [
      Arbitrary.array(block, { maxLength: 6 }),
      Arbitrary.schema(Schema.Literals(["user", "context", "steering"])),
      oneOf<unknown>(
        Arbitrary.Constant(undefined),
        Arbitrary.map(Arbitrary.schema(Schema.Json), (v): unknown => JSON.parse(JSON.stringify(v)))
      )
    ],
    ([content, kind, meta]) =>
      Effect.gen(function*() {
        const s = yield* Session.make({ id: "p" })
        const input: AppendInput = kind === "user"
          ? { type: "user/message", data: { content, source: plugin("p") }, surfaceOp: "append" }
          : kind === "context"
          ? {
            type: "context/message",
            data: meta === undefined
              ? { content, source: plugin("p") }
              : { content, source: plugin("p"), meta: meta as never },
            surfaceOp: "append"
          }
          : { type: "steering/message", data: { turn: 1, content, source: plugin("p") }, surfaceOp: "append" }
        const event = yield* s.append(input)
        const [message] = yield* s.deriveMessages
        expect(message).toEqual({ role: "user", content })
        expect(Object.keys(message ?? {})).toEqual(["role", "content"])
        expect(message?.content).toBe((event.data as { content: unknown }).content)
      }),
    { arbitrary: { runs: 100 } }
  )
})
