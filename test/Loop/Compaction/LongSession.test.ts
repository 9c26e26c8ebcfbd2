import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Transcript from "../../../src/Cli/Transcript.js"
import { run } from "../../../scratchpad/long-session.js"

describe("Long session (AC-117)", () => {
  it.effect("AC-117 [K-1..K-15] 300 steps of 12 KB results under a 64k window: every request under the window, about one summary per window of new content, sessions show lists the compactions", () =>
    Effect.gen(function*() {
      const r = yield* run({ steps: 300, window: 64_000, resultBytes: 12_000, stepsPerTurn: 12 })
      expect(r.steps).toBe(300)
      expect(r.turnEnds.every((k) => k === "completed")).toBe(true)
      expect(r.overflows).toBe(0)
      expect(r.largestRequest).toBeLessThanOrEqual(64_000)
      const windows = r.newContentTokens / 64_000
      const summaries = r.compactions.filter((c) => c.summarized).length
      expect(summaries).toBeGreaterThan(0)
      // a summary frees the window down to the kept tail; the model-free cheap pass runs between
      expect(summaries).toBeLessThanOrEqual(Math.ceil(windows * 1.25))
      expect(r.compactions.every((c) => c.after < c.before)).toBe(true)
      const shown = Transcript.render(r.events)
      expect(shown.match(/── compaction \(threshold\)/g)?.length).toBe(r.compactions.length)
      expect(shown).toContain("(compacted: the model now sees a summary or a trimmed copy)")
    }), 120_000)
})
