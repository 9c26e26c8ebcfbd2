/**
 * `ReplayCheck` (re-derivation with the loop's recording rule) and `LogStructure` (what a reader
 * can check from the file alone), over logs the real loop wrote (TestKit: real Llm routing, real
 * Session, real scheduler) and over hand-tampered copies of them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as LogStructure from "../../src/Cli/LogStructure.js"
import * as ReplayCheck from "../../src/Cli/ReplayCheck.js"
import * as Transcript from "../../src/Cli/Transcript.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as Recording from "../../src/Loop/Recording.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import type { EventOf, SessionEvent } from "../../src/Session/SessionEvent.js"
import { echo } from "../support/LoopKit.js"

type DeepMutable<T> = T extends ReadonlyArray<infer A> ? Array<DeepMutable<A>>
  : T extends string | number | boolean | null | undefined ? T
  : { -readonly [K in keyof T]: DeepMutable<T[K]> }
type Ev = DeepMutable<SessionEvent>

/** A mutable deep copy of a log (the loop's events are frozen). */
/** A tampered copy read back as a log (mutable copies widen tuple types). */
const asLog = (events: ReadonlyArray<Ev>): ReadonlyArray<SessionEvent> => events as unknown as ReadonlyArray<SessionEvent>
const copy = (events: ReadonlyArray<SessionEvent>): Array<Ev> => JSON.parse(JSON.stringify(events)) as Array<Ev>

/** The first event of a type (matching `where`) in a copied log. */
const first = <K extends SessionEvent["type"]>(
  events: ReadonlyArray<Ev>,
  type: K,
  where: (e: DeepMutable<EventOf<K>>) => boolean = () => true
): DeepMutable<EventOf<K>> => {
  const found = events.find((e) => e.type === type && where(e as DeepMutable<EventOf<K>>))
  if (found === undefined) throw new Error(`no ${type} event`)
  return found as DeepMutable<EventOf<K>>
}

/** Renumbers a log after events were removed or repeated (sources follow their events). */
const renumber = (events: ReadonlyArray<Ev>): Array<Ev> => {
  const moved = new Map<number, number>()
  events.forEach((e, i) => {
    if (!moved.has(e.seq)) moved.set(e.seq, i)
  })
  return events.map((e, i) =>
    e.sourceEventSeqs === undefined
      ? { ...e, seq: i }
      : { ...e, seq: i, sourceEventSeqs: e.sourceEventSeqs.map((s) => moved.get(s) ?? s) }
  ) as Array<Ev>
}

const seqsOf = (events: ReadonlyArray<SessionEvent>, type: string) => events.filter((e) => e.type === type).map((e) => e.seq)

/** Runs prompts against a scripted agent and returns the log. */
const logOf = (
  script: Scripted.Script,
  prompts: ReadonlyArray<string> = ["hi"],
  setup: Effect.Effect<void, never, Hooks.LoopHooks | Scope.Scope> = Effect.void
) =>
  Effect.gen(function*() {
    yield* setup
    const t = yield* TestKit.agent({ tools: [echo] })
    for (const p of prompts) yield* t.prompt(p)
    return yield* t.events
  }).pipe(Effect.provide(TestKit.layer({ script, tools: [echo] })))

const clean = (events: ReadonlyArray<SessionEvent>) => {
  expect(ReplayCheck.check(events).findings.map(ReplayCheck.renderFinding)).toEqual([])
  expect(LogStructure.check(events).findings.map(ReplayCheck.renderFinding)).toEqual([])
}

const statuses = (events: ReadonlyArray<SessionEvent>) => ReplayCheck.check(events).verdicts.map((v) => v.status)

const maxTokensCall: Scripted.Reply = [Scripted.toolCall("c1", "ls", "{}"), Scripted.finish("max-tokens")]

describe("ReplayCheck agrees with the loop's recording rule", () => {
  it.effect("[issue 21, L-12.11] max-tokens with a tool call: the loop records [] and replay agrees", () =>
    Effect.gen(function*() {
      const events = yield* logOf([maxTokensCall])
      const message = events.find((e) => e.type === "assistant/message")
      expect(message?.data).toMatchObject({ content: [] })
      clean(events)
      expect(statuses(events)).toEqual(["match"])
    }))

  it.effect("[L-12.11, L-30] max-tokens with text and an open call: only the text, turn max-tokens, agrees", () =>
    Effect.gen(function*() {
      const events = yield* logOf([[
        Scripted.say("partial"),
        Scripted.chunk(StreamChunk.toolCallDelta(5, "c9", "{\"te", "echo")),
        Scripted.usage(4, 9),
        Scripted.finish("max-tokens")
      ]])
      clean(events)
      expect(events.at(-1)?.data).toMatchObject({ reason: { kind: "max-tokens" } })
    }))

  it.effect("[L-20] an in-band error finish is recovered: no message for the failed step; the retry records one", () =>
    Effect.gen(function*() {
      const events = yield* logOf(
        [
          [Scripted.say("half"), Scripted.finish({ kind: "error", message: "overloaded", code: "SERVER" })],
          [Scripted.say("x"), Scripted.finish("aborted")],
          Scripted.text("done")
        ],
        ["hi"],
        Effect.flatMap(Hooks.LoopHooks, (hooks) =>
          hooks.requestError.register(() => Effect.succeed(Hooks.RequestErrorDecision.Retry())))
      )
      expect(seqsOf(events, "step/start")).toHaveLength(3)
      expect(seqsOf(events, "assistant/message")).toHaveLength(1)
      clean(events)
    }))

  it.effect("[C-7, L-22] replay state kept without a rewrite; a rewrite drops it and replay calls it rewritten", () =>
    Effect.gen(function*() {
      const signed: Scripted.Reply = [Scripted.say("signed"), Scripted.finish("stop", { sig: "s1" })]
      const events = yield* logOf(
        [signed, signed],
        ["keep", "rewrite"],
        Effect.flatMap(Hooks.LoopHooks, (hooks) =>
          hooks.stepResult.register((i, next) =>
            i.turn === 2 ? Effect.succeed({ ...i.message, content: [ContentBlock.text("rewritten")] }) : next()
          ))
      )
      const messages = events.filter((e) => e.type === "assistant/message")
      expect(messages.map((m) => m.data.provenance.replayState)).toEqual([{ sig: "s1" }, undefined])
      clean(events)
      expect(statuses(events)).toEqual(["match", "rewritten"])
    }))

  it.effect("[L-22] a throwing step-result leaves an anchor (content [], usage kept) that replay accepts", () =>
    Effect.gen(function*() {
      const events = yield* logOf(
        [Scripted.text("hello")],
        ["hi"],
        Effect.flatMap(Hooks.LoopHooks, (hooks) => hooks.stepResult.register(() => Effect.die("step-result exploded")))
      )
      clean(events)
      expect(statuses(events)).toEqual(["anchor"])
    }))

  it.effect("[L-22] whitespace is recorded verbatim: a \"\\n\\n\" block and trailing spaces survive and replay agrees", () =>
    Effect.gen(function*() {
      const events = yield* logOf([[Scripted.say("\n\n"), Scripted.think("  "), Scripted.say("tail  "), Scripted.finish("stop")]])
      const message = events.find((e) => e.type === "assistant/message")
      expect(message?.data).toMatchObject({
        content: [{ type: "text", text: "\n\n" }, { type: "reasoning", text: "  " }, { type: "text", text: "tail  " }]
      })
      clean(events)
    }))

  it.effect("[L-22, L-16] an empty stream, parallel calls and their results: agrees, calls answered once in order", () =>
    Effect.gen(function*() {
      const events = yield* logOf([
        [],
        [
          Scripted.toolCall("a", "echo", "{\"text\":\"1\"}"),
          Scripted.toolCall("b", "echo", "{\"text\":\"2\"}"),
          Scripted.toolCall("c", "nope", "{"),
          Scripted.finish("tool-calls")
        ],
        Scripted.text("ok")
      ], ["empty", "calls"])
      expect(seqsOf(events, "tool/result")).toHaveLength(3)
      clean(events)
    }))
})

describe("ReplayCheck on a changed log: the rule broken and the events involved", () => {
  it.effect("[issue 21] a chunk's text changed → content-is-assembled, the message and that block's chunks", () =>
    Effect.gen(function*() {
      const events = copy(yield* logOf([[Scripted.say("ab"), Scripted.toolCall("c1", "echo", "{\"text\":\"x\"}"), Scripted.finish("tool-calls")], Scripted.text("z")]))
      // the block-end chunk carries the authoritative block: change its text
      const end = first(events, "assistant/chunk", (e) => e.data.chunk.type === "block-end").data.chunk
      if (end.type === "block-end") end.block = ContentBlock.text("Q")
      const report = ReplayCheck.check(asLog(events))
      expect(report.findings).toHaveLength(1)
      const finding = report.findings[0]!
      expect(finding.rule).toBe(Recording.rules.content)
      const message = first(events, "assistant/message")
      const textChunks = events.filter((e) => e.type === "assistant/chunk" && e.data.step === 1 && "index" in e.data.chunk && e.data.chunk.index === 0)
        .map((e) => e.seq)
      expect(finding.seqs).toEqual([...textChunks, message.seq])
      expect(finding).toMatchObject({ turn: 1, step: 1 })
      expect(finding.detail).toContain("\"text\":\"ab\"")
      expect(ReplayCheck.renderFinding(finding)).toMatch(/^turn 1 step 1: breaks .*content-is-assembled\).*events \d+-\d+, \d+: block 0 \(text\)/)
      expect(report.verdicts.map((v) => v.status)).toEqual(["mismatch", "match"])
    }))

  it.effect("[L-12.11] a tool call put back into a max-tokens message → max-tokens-drops-tool-calls", () =>
    Effect.gen(function*() {
      const events = copy(yield* logOf([maxTokensCall]))
      first(events, "assistant/message").data.content = [ContentBlock.toolCall("c1", "ls", "{}")]
      expect(ReplayCheck.check(asLog(events)).findings.map((f) => f.rule.name)).toEqual(["max-tokens-drops-tool-calls"])
    }))

  it.effect("[C-7, A-9, L-22, S-20] replay state removed, usage changed, sources cut, model renamed: one finding each", () =>
    Effect.gen(function*() {
      const base = yield* logOf([[Scripted.say("s"), Scripted.usage(3, 1), Scripted.finish("stop", { sig: "k" })]])
      const at = (mutate: (m: DeepMutable<EventOf<"assistant/message">>) => void) => {
        const events = copy(base)
        mutate(first(events, "assistant/message"))
        return ReplayCheck.check(asLog(events)).findings.map((f) => f.rule.name)
      }
      expect(at((m) => delete m.data.provenance.replayState)).toEqual(["replay-state-only-unchanged"])
      expect(at((m) => m.data.usage = { inputTokens: 3, outputTokens: 7 })).toEqual(["usage-is-last-usage-chunk"])
      expect(at((m) => m.sourceEventSeqs = (m.sourceEventSeqs ?? []).slice(1))).toEqual(["sources-are-the-step-chunks"])
      expect(at((m) => m.data.provenance.model = "other")).toEqual(["provenance-is-request-route"])
      clean(base)
    }))

  it.effect("[L-22, L-20, L-30] a missing message, a message for an errored stream, a wrong turn end", () =>
    Effect.gen(function*() {
      const base = yield* logOf([maxTokensCall])
      const dropped = copy(base).filter((e) => e.type !== "assistant/message")
      expect(ReplayCheck.check(asLog(dropped)).findings.map((f) => f.rule.name)).toEqual(["one-message-per-call", "turn-max-tokens"])
      const errored = copy(base)
      const finish = first(errored, "assistant/chunk", (e) => e.data.chunk.type === "finish").data.chunk
      if (finish.type === "finish") finish.reason = { kind: "error", message: "boom" }
      expect(ReplayCheck.check(asLog(errored)).findings.map((f) => f.rule.name)).toContain("failed-stream-not-recorded")
      const completed = copy(base)
      first(completed, "turn/end").data.reason = { kind: "completed" }
      expect(ReplayCheck.check(asLog(completed)).findings.map((f) => f.rule.name)).toEqual(["turn-max-tokens"])
    }))

  it.effect("[L-22] a trimmed whitespace block is a content mismatch", () =>
    Effect.gen(function*() {
      const events = copy(yield* logOf([[Scripted.say("hi \n"), Scripted.finish("stop")]]))
      first(events, "assistant/message").data.content = [ContentBlock.text("hi")]
      expect(ReplayCheck.check(asLog(events)).findings.map((f) => f.rule.name)).toEqual(["content-is-assembled"])
    }))
})

describe("LogStructure", () => {
  const withCalls = logOf([
    [Scripted.toolCall("a", "echo", "{\"text\":\"1\"}"), Scripted.toolCall("b", "echo", "{\"text\":\"2\"}"), Scripted.finish("tool-calls")],
    Scripted.text("ok")
  ])
  const rulesOf = (events: ReadonlyArray<Ev>) => LogStructure.check(asLog(events)).findings.map((f) => f.rule.name)

  it.effect("[S-11, S-16] a seq gap, a missing turn end, a step closed twice", () =>
    Effect.gen(function*() {
      const base = yield* withCalls
      const gap = copy(base)
      gap[3]!.seq = 99
      expect(rulesOf(gap)).toContain("contiguous-seqs")
      const twoTurns = copy(yield* logOf([Scripted.text("a"), Scripted.text("b")], ["1", "2"]))
      const firstEnd = twoTurns.findIndex((e) => e.type === "turn/end")
      expect(rulesOf(renumber(twoTurns.filter((_, i) => i !== firstEnd)))).toEqual(["balanced-turns"])
      const doubled = copy(base)
      const stepEnd = doubled.findIndex((e) => e.type === "step/end")
      doubled.splice(stepEnd, 0, doubled[stepEnd]!)
      expect(rulesOf(renumber(doubled))).toContain("balanced-steps")
    }))

  it.effect("[L-15, L-16, S-16] a result removed, a result repeated, results swapped, arguments changed, a wrong source", () =>
    Effect.gen(function*() {
      const base = yield* withCalls
      const results = base.flatMap((e, i) => (e.type === "tool/result" ? [i] : []))
      expect(rulesOf(renumber(copy(base).filter((_, i) => i !== results[1])))).toEqual(["calls-answered-once"])
      const repeated = copy(base)
      repeated.splice(results[1]! + 1, 0, repeated[results[1]!]!)
      expect(rulesOf(renumber(repeated))).toContain("calls-answered-once")
      const swapped = copy(base)
      const [i1, i2] = [results[0]!, results[1]!]
      const [r1, r2] = [swapped[i1]!, swapped[i2]!]
      swapped[i1] = { ...r2, seq: r1.seq }
      swapped[i2] = { ...r1, seq: r2.seq }
      expect(rulesOf(swapped)).toEqual(["results-in-model-order"])
      const changed = copy(base)
      first(changed, "tool/call").data.arguments = "{}"
      expect(rulesOf(changed)).toEqual(["tool-call-verbatim"])
      const cited = copy(base)
      cited[results[1]!]!.sourceEventSeqs = [0]
      expect(rulesOf(cited)).toEqual(["result-source-is-its-call"])
      const foreign = copy(base)
      first(foreign, "assistant/message").sourceEventSeqs = [0]
      expect(rulesOf(foreign)).toEqual(["message-sources-own-chunks"])
    }))

  it.effect("[S-16] a log ending inside a turn is reported as open, not as a violation", () =>
    Effect.gen(function*() {
      const base = yield* withCalls
      const cut = base.slice(0, base.findIndex((e) => e.type === "tool/call") + 1)
      const structure = LogStructure.check(cut)
      expect(structure.findings).toEqual([])
      expect(structure.open).toEqual({ turn: 1, step: 1 })
      expect(LogStructure.check(base).open).toBeUndefined()
    }))
})

describe("Transcript", () => {
  it.effect("renders prompts, answers, usage and the turn end", () =>
    Effect.gen(function*() {
      const events = yield* logOf([[Scripted.say("hello"), Scripted.usage(3, 2, { cacheReadTokens: 7 }), Scripted.finish("stop")]])
      const text = Transcript.render(events)
      expect(text).toContain("── turn 1 (message) ──")
      expect(text).toContain("user:\n  hi")
      expect(text).toContain("assistant [scripted/test]:\n  hello")
      expect(text).toContain("usage: in 3 (+7 cache read) · out 2")
      expect(text).toContain("── end of turn 1: completed ──")
    }))
})
