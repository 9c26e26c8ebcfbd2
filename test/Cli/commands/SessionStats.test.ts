// vitest project: integration
/**
 * `harness sessions stats` (issue 19): the fold over a log (old logs without costs included), and the spawned CLI
 * against the fake provider: a retried request, a tool call and a priced route, then `sessions stats` (text and
 * `--json`) and the total line of `sessions show`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as SessionStats from "../../../src/Cli/commands/SessionStats.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import * as Cli from "../../support/Cli.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 90_000

const ev = (seq: number, time: number, type: string, data: unknown, surfaceOp?: "append"): SessionEvent =>
  ({ seq, time, type, data, ...(surfaceOp === undefined ? {} : { surfaceOp }) }) as unknown as SessionEvent

const provenance = { provider: "p", model: "m" }

describe("sessions stats (issue 19)", () => {
  it("the fold: tokens by kind, cost, model / tools / compaction / harness time, slowest tools, retries", () => {
    const events: ReadonlyArray<SessionEvent> = [
      ev(0, 1_000, "turn/start", { turn: 1, trigger: { kind: "message", source: { kind: "user" } } }),
      ev(1, 1_010, "step/start", { turn: 1, step: 1 }),
      ev(2, 1_020, "request/retry", { turn: 1, step: 1, attempt: 1, delayMs: 5, code: "RATE_LIMIT" }),
      ev(3, 1_510, "assistant/message", {
        turn: 1,
        step: 1,
        content: [],
        provenance,
        usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 100 },
        cost: 0.001
      }, "append"),
      ev(4, 1_520, "tool/call", { turn: 1, step: 1, callId: "a", name: "bash", arguments: "{}" }),
      ev(5, 1_521, "tool/call", { turn: 1, step: 1, callId: "b", name: "read", arguments: "{}" }),
      ev(6, 1_600, "tool/result", { turn: 1, step: 1, callId: "b", content: [], isError: false }, "append"),
      ev(7, 2_520, "tool/result", { turn: 1, step: 1, callId: "a", content: [], isError: false }, "append"),
      ev(8, 2_530, "step/end", { turn: 1, step: 1 }),
      ev(9, 2_540, "step/start", { turn: 1, step: 2 }),
      // written before costs were logged: counted as unpriced, never guessed
      ev(10, 2_840, "assistant/message", {
        turn: 1,
        step: 2,
        content: [],
        provenance,
        usage: { inputTokens: 3, outputTokens: 2, reasoningTokens: 1, cacheWriteTokens: 7 }
      }, "append"),
      ev(11, 2_850, "step/end", { turn: 1, step: 2 }),
      ev(12, 3_000, "turn/end", { turn: 1, reason: { kind: "completed" } })
    ]
    const stats = SessionStats.compute(events)
    expect(stats).toMatchObject({
      turns: 1,
      steps: 2,
      tokens: { input: 13, cacheRead: 100, cacheWrite: 7, output: 7, reasoning: 1 },
      cost: 0.001,
      unpricedRequests: 1,
      retries: 1,
      failedRequests: 0,
      compactions: { total: 0, failed: 0 }
    })
    // model: 500 + 300; tools: one batch 1520..2520 (parallel calls counted once); total 2000
    expect(stats.timeMs).toEqual({ total: 2_000, model: 800, tools: 1_000, compaction: 0, hooks: 0, approval: 0, harness: 200 })
    expect(stats.slowestTools.map((t) => [t.name, t.ms])).toEqual([["bash", 1_000], ["read", 79]])
    // a log without any cost: cost unknown, not zero
    expect(SessionStats.compute(events.slice(8)).cost).toBeNull()
  })

  it("[issue 34] the wait for an approval answer is approval time, not tool time", () => {
    const events: ReadonlyArray<SessionEvent> = [
      ev(0, 1_000, "turn/start", { turn: 1, trigger: { kind: "message", source: { kind: "user" } } }),
      ev(1, 1_000, "step/start", { turn: 1, step: 1 }),
      ev(2, 1_100, "assistant/message", { turn: 1, step: 1, content: [], provenance }, "append"),
      ev(3, 1_100, "tool/call", { turn: 1, step: 1, callId: "a", name: "edit", arguments: "{}" }),
      // the user took 4 s to answer; the edit itself took 0.1 s
      ev(4, 5_100, "approval/answer", { callId: "a", tool: "edit", answer: "yes", by: "user", waitMs: 4_000 }),
      ev(5, 5_200, "tool/result", { turn: 1, step: 1, callId: "a", content: [], isError: false }, "append"),
      ev(6, 5_200, "step/end", { turn: 1, step: 1 }),
      ev(7, 5_300, "turn/end", { turn: 1, reason: { kind: "completed" } })
    ]
    const stats = SessionStats.compute(events)
    expect(stats.timeMs).toEqual({ total: 4_300, model: 100, tools: 100, compaction: 0, hooks: 0, approval: 4_000, harness: 100 })
    expect(stats.slowestTools.map((t) => [t.name, t.ms])).toEqual([["edit", 100]])
  })

  it("[issue 30] the cache fold: hit rate over all input, savings at the catalog's prices, breaks by cause", () => {
    const sonnet = { provider: "anthropic", model: "claude-sonnet-4-5" }
    const events: ReadonlyArray<SessionEvent> = [
      ev(0, 0, "request/cache", { turn: 1, step: 1, prefixBytes: 0, requestBytes: 8_000, prefixTokens: 0, requestTokens: 2_000 }),
      ev(1, 1, "assistant/message", {
        turn: 1,
        step: 1,
        content: [],
        provenance: sonnet,
        usage: { inputTokens: 10, outputTokens: 5, cacheWriteTokens: 2_000 }
      }, "append"),
      ev(2, 2, "request/cache", {
        turn: 1,
        step: 2,
        prefixBytes: 40,
        requestBytes: 8_400,
        prefixTokens: 10,
        requestTokens: 2_100,
        cause: "model-changed",
        divergence: { part: "route" }
      }),
      ev(3, 3, "assistant/message", {
        turn: 1,
        step: 2,
        content: [],
        provenance: sonnet,
        usage: { inputTokens: 90, outputTokens: 5, cacheReadTokens: 2_000 }
      }, "append")
    ]
    const stats = SessionStats.compute(events)
    // reads 2000 of 10 + 2000 + 90 + 2000 input tokens
    expect(stats.cache.hitRate).toBe(2_000 / 4_100)
    // 2000 reads save 3 − 0.30 $/MTok; 2000 writes cost 3.75 − 3 $/MTok more
    expect(stats.cache.saved).toBeCloseTo((2_000 * 2.7 - 2_000 * 0.75) / 1e6, 12)
    expect(stats.cache.breaks).toEqual({ "model-changed": 1 })
    expect(SessionStats.cacheLine(stats.cache)).toBe("cache: hit rate 48.8 % · saved $0.0039 · breaks model-changed 1")
    // unpriced routes: the rate stays, the savings are unknown
    expect(SessionStats.compute(events.map((e) => e.type === "assistant/message" ? { ...e, data: { ...e.data, provenance } } : e)).cache)
      .toMatchObject({ hitRate: 2_000 / 4_100, saved: null })
  })

  it.live("[spawned CLI] a priced DeepSeek run with a retry and a tool call: result cost, stats text and --json, show total", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-stats-home-")
      const work = yield* Cli.tempDir("harness-stats-ws-")
      writeFileSync(join(work, "notes.txt"), "hello\n")
      const fake = yield* FakeProvider.make({
        replies: FakeProvider.retriedToolTurn("There is notes.txt.")
      })
      const opts = { cwd: work, home, env: { DEEPSEEK_API_KEY: "sk-stats-test" } }
      const run = yield* Cli.runCli(["run", "--yes", "--json", "--provider", "deepseek", "--base-url", fake.url, "What is here?"], opts)
      expect(run.code, run.stderr).toBe(0)
      const lines = Cli.linesOf(run.stdout).map((l) => JSON.parse(l) as Record<string, unknown>)
      const result = lines.at(-1)!
      expect(result["type"]).toBe("result")
      // deepseek-v4-flash: $0.28 / $0.028 (cache hit) / $0.42 per million input / cached / output tokens
      const cost1 = (19 * 0.28 + 320 * 0.028 + 30 * 0.42) / 1e6
      const cost2 = (7 * 0.28 + 480 * 0.028 + 12 * 0.42) / 1e6
      expect(result["cost"]).toBeCloseTo(cost1 + cost2, 12)
      const id = String(result["session_id"])

      const json = yield* Cli.runCli(["sessions", "stats", id, "--json"], opts)
      expect(json.code, json.stderr).toBe(0)
      const stats = JSON.parse(json.stdout.trim()) as SessionStats.Stats & { type: string; session: string }
      expect(stats).toMatchObject({
        type: "stats",
        session: id,
        turns: 1,
        steps: 2,
        tokens: { input: 26, cacheRead: 800, cacheWrite: 0, output: 42, reasoning: 0 },
        unpricedRequests: 0,
        retries: 1,
        failedRequests: 0,
        compactions: { total: 0, failed: 0 }
      })
      expect(stats.cost).toBeCloseTo(cost1 + cost2, 12)
      expect(stats.slowestTools.map((t) => t.name)).toEqual(["ls"])
      const t = stats.timeMs
      expect(t.model + t.tools + t.compaction + t.harness).toBe(t.total)

      const text = yield* Cli.runCli(["sessions", "stats", id], opts)
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toContain("1 turn, 2 steps")
      expect(text.stdout).toContain("tokens: input 26 · cache read 800 · cache write 0 · output 42 (0 reasoning)")
      expect(text.stdout).toContain(`cost: ${SessionStats.usd(cost1 + cost2)}`)
      expect(text.stdout).toMatch(/time: [\d.]+s total = model [\d.]+s · tools [\d.]+s · compaction 0\.0s · harness/)
      expect(text.stdout).toContain("slowest tools:\n  ls ")
      expect(text.stdout).toContain("retries: 1 · failed requests: 0 · compactions: 0")

      const show = yield* Cli.runCli(["sessions", "show", id], opts)
      expect(show.code, show.stderr).toBe(0)
      expect(Cli.linesOf(show.stdout).at(-1)).toBe(
        `total: in 26 (+800 cache read, +0 cache write) · out 42 · cost ${SessionStats.usd(cost1 + cost2)}`
      )

      const missing = yield* Cli.runCli(["sessions", "stats", "no-such-session"], opts)
      expect(missing.code).not.toBe(0)
      expect(missing.stderr).not.toMatch(Cli.stackFrame)
    }), TIMEOUT)
})
