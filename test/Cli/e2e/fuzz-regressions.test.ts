/**
 * Regression tests for the failures the end-to-end fuzzer (`fuzz.test.ts`) found, one per distinct
 * failure, named after the seed that found it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"
import * as Fuzz from "../../support/Fuzz.js"

const TIMEOUT = 120_000

describe("fuzzer regressions", () => {
  it.live(
    "[fuzz seed 100011, DEC-12] a retried request under --json: the retry warning goes to stderr, stdout holds JSON Lines only: init, the session events, one notice/retry, result",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-fuzzreg-home-")
        const work = yield* Cli.tempDir("harness-fuzzreg-ws-")
        const script = join(work, "s.json")
        writeFileSync(
          script,
          JSON.stringify({ responses: [[{ fail: { code: "RATE_LIMIT", retryAfterMillis: 0 } }], { text: "ok" }] })
        )
        const run = yield* Cli.runCli(["run", "--provider", "scripted", "--script", script, "--json", "hi"], {
          cwd: work,
          home
        })
        expect(run.code, run.stderr).toBe(0)
        const lines = Cli.linesOf(run.stdout).map((l) => JSON.parse(l) as { readonly type: string })
        const log = Cli.readLog(Cli.sessionLogs(home)[0]!)
        // the documented non-event lines (docs/cli-json.md): init first, result last, a notice per retry
        expect(lines[0]?.type).toBe("init")
        expect(lines.at(-1)?.type).toBe("result")
        expect(lines.filter((l) => l.type === "notice/retry")).toHaveLength(1)
        const events = lines.slice(1, -1).filter((l) => l.type !== "notice/retry")
        expect(events).toEqual(log.events.map((e) => JSON.parse(JSON.stringify(e))))
        expect(run.stderr).toMatch(/RATE_LIMIT/)
      }),
    TIMEOUT
  )

  it.live(
    "[fuzz seed 100011] the generated case itself passes every fuzzer check",
    () =>
      Effect.gen(function*() {
        yield* Cli.bundle
        const outcome = yield* Fuzz.runCase(Fuzz.generate(100011))
        expect(outcome.problems.filter((p) => !Fuzz.knownGaps.has(Fuzz.signature(p)))).toEqual([])
      }),
    TIMEOUT
  )
})
