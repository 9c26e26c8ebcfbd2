import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ContentBlock from "../../../src/Llm/ContentBlock.js"
import * as Estimate from "../../../src/Loop/Compaction/Estimate.js"
import * as Pressure from "../../../src/Loop/Compaction/Pressure.js"
import * as Region from "../../../src/Loop/Compaction/Region.js"
import * as Session from "../../../src/Session/Session.js"
import type { AppendInput } from "../../../src/Session/SessionEvent.js"

/** mulberry32: a small seeded PRNG */
const prng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const provenance = { provider: "p", model: "m" }

/** A random conversation: prompts, assistant turns with 0..3 parallel calls and their results, contexts. */
const randomLog = (rand: () => number, rounds: number): ReadonlyArray<AppendInput> => {
  const out: Array<AppendInput> = []
  let call = 0
  for (let r = 0; r < rounds; r++) {
    const x = rand()
    if (x < 0.15) {
      out.push({ type: "user/message", data: { content: [ContentBlock.text("p".repeat(1 + Math.floor(rand() * 400)))], source: { kind: "user" } }, surfaceOp: "append" })
      continue
    }
    const n = Math.floor(rand() * 4)
    const ids = Array.from({ length: n }, () => ContentBlock.CallId.make(`k${call++}`))
    out.push({
      type: "assistant/message",
      data: {
        turn: 1,
        step: r,
        content: [ContentBlock.text("a".repeat(Math.floor(rand() * 300))), ...ids.map((id) => ContentBlock.toolCall(id, "t", "{}"))],
        provenance
      },
      surfaceOp: "append"
    })
    for (const id of ids) {
      out.push({
        type: "tool/result",
        data: { turn: 1, step: r, callId: id, content: [ContentBlock.text("r".repeat(Math.floor(rand() * 3_000)))], isError: false },
        surfaceOp: "append"
      })
    }
    if (n > 0 && rand() < 0.3) {
      out.push({ type: "context/message", data: { content: [ContentBlock.text("ctx")], source: { kind: "user" } }, surfaceOp: "append" })
    }
  }
  return out
}

describe("Compaction region (K-6)", () => {
  it.effect("AC-111 [K-6] across 200 random cut positions no cut separates a tool call from its result", () =>
    Effect.gen(function*() {
      const rand = prng(20261201)
      let cuts = 0
      for (let trial = 0; trial < 20; trial++) {
        const session = yield* Session.make()
        yield* session.appendAll(randomLog(rand, 40 + Math.floor(rand() * 40)))
        const nodes = (yield* session.surface).nodes
        const total = nodes.reduce((n, e) => n + Estimate.event(e), 0)
        for (let k = 0; k < 10; k++) {
          const retain = Math.floor(rand() * total)
          const { cut, keptTokens } = Region.planCut(nodes, retain)
          cuts++
          expect(Region.isValidCut(nodes, cut), `trial ${trial} retain ${retain} cut ${cut}`).toBe(true)
          if (cut > 0) {
            expect(keptTokens).toBeGreaterThanOrEqual(retain)
            // the kept tail is the shortest valid one: no later valid cut holds enough
            for (let p = cut + 1; p < nodes.length; p++) {
              const kept = nodes.slice(p).reduce((n, e) => n + Estimate.event(e), 0)
              if (kept >= retain) expect(Region.isValidCut(nodes, p)).toBe(false)
            }
          }
        }
      }
      expect(cuts).toBe(200)
    }))

  it("K-5 a long result is trimmed to head + marker + tail naming the original seq", () => {
    const text = "x".repeat(5_000) + "y".repeat(5_000)
    const trimmed = Region.trim(text, 42)
    expect(trimmed.omitted).toBe(10_000 - 4_096 - 1_024)
    expect(trimmed.text.startsWith("x".repeat(4_096) + "\n[")).toBe(true)
    expect(trimmed.text.endsWith("]\n" + "y".repeat(1_024))).toBe(true)
    expect(trimmed.text).toContain("#42")
    expect(trimmed.text).toContain(`${trimmed.omitted} characters`)
  })
})

describe("Compaction pressure (K-2)", () => {
  it.effect("K-2 usage of the latest valid assistant message + estimates of what came after; full estimate after a replace", () =>
    Effect.gen(function*() {
      const session = yield* Session.make()
      const u = yield* session.append({ type: "user/message", data: { content: [ContentBlock.text("hello")], source: { kind: "user" } }, surfaceOp: "append" })
      // no usage yet: the whole projected request
      expect(Pressure.measure(yield* session.surface, 100)).toEqual({ tokens: 100 + Estimate.event(u), anchored: false })
      const id = ContentBlock.CallId.make("c1")
      yield* session.append({
        type: "assistant/message",
        data: { turn: 1, step: 1, content: [ContentBlock.toolCall(id, "t", "{}")], provenance, usage: { inputTokens: 1_000, outputTokens: 50, cacheReadTokens: 500 } },
        surfaceOp: "append"
      })
      const r = yield* session.append({
        type: "tool/result",
        data: { turn: 1, step: 1, callId: id, content: [ContentBlock.text("z".repeat(7_000))], isError: false },
        surfaceOp: "append"
      })
      const tracker = Pressure.tracker()
      expect(tracker.measure(yield* session.surface, 100)).toEqual({ tokens: 1_550 + Estimate.event(r), anchored: true })
      // deterministic: same events, same number
      expect(tracker.measure(yield* session.surface, 100)).toEqual(Pressure.measure(yield* session.surface, 100))
      // a replace invalidates the anchor
      yield* session.append({
        type: "user/message",
        data: { content: [ContentBlock.text("summary")], source: { kind: "plugin", plugin: "compaction" } },
        surfaceOp: { op: "replace", start: u.seq, end: u.seq },
        sourceEventSeqs: [u.seq]
      })
      expect(tracker.measure(yield* session.surface, 100).anchored).toBe(false)
      // the estimator errs high: ≥ UTF-8 bytes / 4
      expect(Estimate.text("é".repeat(700))).toBeGreaterThanOrEqual(1_400 / 4)
    }))
})
