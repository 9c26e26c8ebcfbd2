/**
 * Issue 30 over the spawned CLI: an Anthropic run against the simulated Anthropic cache. The request bodies
 * carry `cache_control` breakpoints (5 minutes by default, `ttl: "1h"` with `--cache-ttl 1h`); `sessions stats
 * --json` reports the hit rate and savings the fake server's usage gives, exactly; the `--json` result line and
 * `sessions show` show them too; switching model on resume prints the cache-break notice first.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as SessionStats from "../../../src/Cli/commands/SessionStats.js"
import * as ModelCatalog from "../../../src/Llm/ModelCatalog.js"
import * as CacheSim from "../../support/CacheSim.js"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 240_000
const model = "claude-sonnet-4-5"

/** two `ls` calls, then an answer */
const respond: CacheSim.Responder = (_body, index) =>
  index % 3 === 2
    ? { _tag: "Text", text: "There is notes.txt." }
    : { _tag: "ToolCall", id: `toolu_${index}`, name: "ls", arguments: "{}" }

const controls = (body: Record<string, unknown>): Array<unknown> => {
  const out: Array<unknown> = []
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x)
    else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) k === "cache_control" ? out.push(x) : walk(x)
    }
  }
  walk(body)
  return out
}

describe("prompt caching over the spawned CLI (issue 30)", () => {
  it.live("[spawned CLI] Anthropic bodies carry cache_control; sessions stats --json hit rate and savings match the server's usage", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-cache-home-")
      const work = yield* Cli.tempDir("harness-cache-ws-")
      writeFileSync(join(work, "notes.txt"), "hello\n")
      const server = yield* CacheSim.serve({ provider: "anthropic", respond })
      const opts = { cwd: work, home, env: { ANTHROPIC_API_KEY: "sk-ant-cache-test" } }
      const run = yield* Cli.runCli(["run", "--yes", "--json", "--provider", "anthropic", "--base-url", server.url, "What is here?"], opts)
      expect(run.code, run.stderr).toBe(0)
      const exchanges = server.exchanges()
      expect(exchanges).toHaveLength(3)
      for (const e of exchanges) {
        const marks = controls(e.body)
        expect(marks.length).toBeGreaterThanOrEqual(3)
        expect(marks.length).toBeLessThanOrEqual(4)
        expect(marks.every((m) => JSON.stringify(m) === "{\"type\":\"ephemeral\"}")).toBe(true)
        expect(Array.isArray(e.body["system"])).toBe(true)
      }
      // what the server charged: the first request writes, the later ones read
      const read = exchanges.reduce((n, e) => n + (e.usage["cache_read_input_tokens"] ?? 0), 0)
      const write = exchanges.reduce((n, e) => n + (e.usage["cache_creation_input_tokens"] ?? 0), 0)
      const input = exchanges.reduce((n, e) => n + (e.usage["input_tokens"] ?? 0), 0)
      expect(read).toBeGreaterThan(0)
      const pricing = ModelCatalog.pricingOf(ModelCatalog.unsafeMake(), "anthropic", model)!
      let saved = 0
      for (const e of exchanges) {
        const usage = {
          inputTokens: e.usage["input_tokens"] ?? 0,
          outputTokens: 0,
          cacheReadTokens: e.usage["cache_read_input_tokens"] ?? 0,
          cacheWriteTokens: e.usage["cache_creation_input_tokens"] ?? 0
        }
        saved = ModelCatalog.roundUsd(saved + ModelCatalog.roundUsd(ModelCatalog.cacheSavings(pricing, usage)))
      }
      const hitRate = read / (input + read + write)
      const result = JSON.parse(Cli.linesOf(run.stdout).at(-1)!) as Record<string, unknown>
      expect(result["cache"]).toEqual({ hit_rate: hitRate, saved })
      const id = String(result["session_id"])

      const json = yield* Cli.runCli(["sessions", "stats", id, "--json"], opts)
      expect(json.code, json.stderr).toBe(0)
      const stats = JSON.parse(json.stdout.trim()) as SessionStats.Stats
      expect(stats.tokens).toMatchObject({ input, cacheRead: read, cacheWrite: write })
      expect(stats.cache).toEqual({ hitRate, saved, breaks: {} })

      const text = yield* Cli.runCli(["sessions", "stats", id], opts)
      expect(text.stdout).toContain(`cache: hit rate ${SessionStats.percent(hitRate)} · saved ${SessionStats.usd(saved)} · breaks none`)
      const show = yield* Cli.runCli(["sessions", "show", id], opts)
      expect(show.code, show.stderr).toBe(0)
      expect(show.stdout).toContain("prompt cache: first request")
      expect(show.stdout).toMatch(/prompt cache: reuses ~\d+ of ~\d+ tokens of the previous request/)
      expect(show.stdout).toMatch(/cache hit \d+\.\d %/)

      // switching model on resume: one stderr line says the cache breaks, with the tokens re-sent, before the request
      const switched = yield* Cli.runCli(
        ["run", "--yes", "--provider", "anthropic", "--base-url", server.url, "--resume", id, "--model", "claude-opus-4-5", "More?"],
        opts
      )
      expect(switched.code, switched.stderr).toBe(0)
      expect(switched.stderr).toMatch(/prompt cache break \(model-changed\): this request re-sends ~\d+ tokens \(~\$[\d.]+ more than cached\)/)
      expect(switched.stdout).not.toContain("prompt cache")

      // --cache-ttl 1h: every breakpoint asks for an hour (the adapter adds the extended-TTL beta header)
      const hour = yield* Cli.runCli(
        ["run", "--yes", "--json", "--provider", "anthropic", "--base-url", server.url, "--cache-ttl", "1h", "Again?"],
        opts
      )
      expect(hour.code, hour.stderr).toBe(0)
      const last = server.exchanges().at(-1)!
      expect(controls(last.body).every((m) => JSON.stringify(m) === "{\"type\":\"ephemeral\",\"ttl\":\"1h\"}")).toBe(true)
    }), TIMEOUT)
})
