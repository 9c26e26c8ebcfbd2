import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ContentBlock from "../../../src/Llm/ContentBlock.js"
import * as TestKit from "../../../src/Loop/TestKit.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import * as Kit from "./Kit.js"

const ofType = <T extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: T) =>
  events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type)

describe("Compaction: cheap pass and summary (K-3, K-5..K-8, K-10)", () => {
  const pruneScenario = Kit.scenario(Array.from({ length: 9 }, (_, i) => Kit.bigCall(`c${i + 1}`, 12_000)))
  it.effect("AC-109 [K-3 K-5] old 12 KB results are pruned first; pruning suffices, so no summary request", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {} })
      yield* t.prompt("read every file")
      const events = yield* t.events
      const requests = yield* t.requests
      expect(ofType(events, "compact/start").length).toBeGreaterThan(0)
      expect(ofType(events, "compact/summary")).toEqual([])
      expect(requests.filter(Kit.isSummaryRequest)).toEqual([])
      const prunes = ofType(events, "tool/result").filter((e) => e.surfaceOp !== "append")
      expect(prunes.length).toBeGreaterThan(0)
      for (const p of prunes) {
        const meta = p.data.meta as { originalSeq: number; omittedCodePoints: number }
        const text = ContentBlock.flattenText(p.data.content)
        expect(text).toContain(`tool result #${meta.originalSeq}`)
        expect(Array.from(text).length).toBeLessThan(4_096 + 1_024 + 200)
        expect(p.sourceEventSeqs).toEqual([meta.originalSeq])
      }
      for (const r of requests) expect(Kit.realTokens(r)).toBeLessThan(32_000)
      const ends = ofType(events, "compact/end")
      expect(ends.every((e) => e.data.error === undefined && e.data.pressureAfter < 0.6 * 32_000)).toBe(true)
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      yield* Kit.verify(t.agent.session, requests)
    }).pipe(Effect.provide(Kit.layer(pruneScenario.script, 32_000))))

  const summaryScenario = Kit.scenario(Array.from({ length: 12 }, (_, i) => Kit.bigCall(`s${i + 1}`, 8_000)))
  it.effect("AC-110 [K-6 K-7] pruning does not suffice: one summary request through the same prefix; the next request is system + summary + opening prompt + kept tail", () =>
    Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {}, systemPrompt: { persona: "You are a careful coder." } })
      yield* t.prompt("refactor the parser")
      const events = yield* t.events
      const requests = yield* t.requests
      const i = requests.findIndex(Kit.isSummaryRequest)
      expect(i).toBeGreaterThan(0)
      const summaryReq = requests[i]!
      const previous = requests[i - 1]!
      // same prefix: system prompt, tools and the leading messages equal the previous request's
      expect(summaryReq.system).toEqual(previous.system)
      expect(summaryReq.tools).toEqual(previous.tools)
      const lead = summaryReq.messages.slice(0, -1)
      expect(previous.messages.slice(0, lead.length)).toEqual(lead)
      expect(summaryReq.maxTokens).toBe(8_192)
      // the next request: summary (+ the opening prompt, verbatim) then the kept tail
      const nextReq = requests[i + 1]!
      const first = nextReq.messages[0]!
      expect(first.role).toBe("user")
      expect(ContentBlock.flattenText([first.content[0]!])).toMatch(/^\[Summary of the earlier conversation/)
      expect(first.content[first.content.length - 1]).toEqual(ContentBlock.text("refactor the parser"))
      const tail = nextReq.messages.slice(1)
      // shadowed + kept tail = the whole pre-compaction history: the previous request's messages
      // plus the assistant call and result of its step
      const whole = [...lead, ...tail]
      expect(whole.slice(0, previous.messages.length)).toEqual(previous.messages)
      expect(whole).toHaveLength(previous.messages.length + 2)
      expect(tail[0]?.role).toBe("assistant")
      const logged = ofType(events, "compact/summary")
      expect(logged).toHaveLength(1)
      expect(logged[0]!.data.droppedCitations).toBe(1)
      expect(logged[0]!.data.summary).not.toContain("#900000")
      expect(events.map((e) => e.type).filter((x) => x.startsWith("compact/"))).toEqual([
        "compact/start",
        "compact/summary",
        "compact/end"
      ])
      yield* Kit.verify(t.agent.session, requests)
    }).pipe(Effect.provide(Kit.layer(summaryScenario.script, 32_000))))
})
