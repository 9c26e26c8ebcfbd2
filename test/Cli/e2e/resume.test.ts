/**
 * End-to-end: resuming a stored session with `--resume <id>` and `--continue` sends the earlier
 * turns' history to the provider, and the log continues (seqs, turn numbers).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "../../support/Cli.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 120_000

const usage = { input: 10, output: 5, cacheRead: 0 }

/** Positions of `needles` in the request's message history (−1 when absent). */
const positions = (body: unknown, needles: ReadonlyArray<string>): Array<number> => {
  const messages = JSON.stringify((body as { readonly messages: unknown }).messages)
  return needles.map((n) => messages.indexOf(n))
}

describe("harness CLI end to end: resume", () => {
  it.live(
    "[issue 7, D-12, S-17] --resume <id> and --continue carry the first turns' history; seqs and turn numbers continue",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const fake = yield* FakeProvider.make({
          replies: [
            FakeProvider.sse(Wire.text("deepseek", "ANSWER-ONE about pineapples.", usage)),
            FakeProvider.sse(Wire.text("deepseek", "ANSWER-TWO about mangoes.", usage)),
            FakeProvider.sse(Wire.text("deepseek", "ANSWER-THREE about kiwis.", usage))
          ]
        })
        const opts = { cwd: work, home, env: { DEEPSEEK_API_KEY: "sk-e2e-resume" } }
        const flags = ["--provider", "deepseek", "--base-url", fake.url]

        const first = yield* Cli.runCli(["run", ...flags, "PROMPT-ONE remember pineapples"], opts)
        expect(first.code, first.stderr).toBe(0)
        expect(first.stdout).toContain("ANSWER-ONE")

        const list = yield* Cli.runCli(["sessions", "list", "--json"], opts)
        expect(list.code, list.stderr).toBe(0)
        const ids = Cli.linesOf(list.stdout).map((l) => (JSON.parse(l) as { readonly id: string }).id)
        expect(ids).toHaveLength(1)
        const id = ids[0]!

        const second = yield* Cli.runCli(["run", ...flags, "--resume", id, "PROMPT-TWO and mangoes"], opts)
        expect(second.code, second.stderr).toBe(0)
        expect(second.stdout).toContain("ANSWER-TWO")

        const third = yield* Cli.runCli(["run", ...flags, "--continue", "PROMPT-THREE and kiwis"], opts)
        expect(third.code, third.stderr).toBe(0)
        expect(third.stdout).toContain("ANSWER-THREE")

        const requests = yield* fake.requests
        expect(requests).toHaveLength(3)
        // request 1 knows nothing of later turns
        expect(positions(requests[0]?.body, ["PROMPT-ONE", "ANSWER-ONE", "PROMPT-TWO"])).toEqual([
          expect.any(Number),
          -1,
          -1
        ])
        // request 2 carries turn 1 (prompt and answer) before the new prompt
        const [p1, a1, p2] = positions(requests[1]?.body, ["PROMPT-ONE", "ANSWER-ONE", "PROMPT-TWO"])
        expect(p1).toBeGreaterThanOrEqual(0)
        expect(a1).toBeGreaterThan(p1!)
        expect(p2).toBeGreaterThan(a1!)
        // request 3 (--continue: the latest session of this directory) carries turns 1 and 2
        const third3 = positions(requests[2]?.body, ["PROMPT-ONE", "ANSWER-ONE", "PROMPT-TWO", "ANSWER-TWO", "PROMPT-THREE"])
        expect(third3.every((p) => p >= 0)).toBe(true)
        expect([...third3].sort((a, b) => a - b)).toEqual(third3)

        // one session, one log, contiguous seqs (validated on read), turns 1, 2, 3 each closed
        const logs = Cli.sessionLogs(home)
        expect(logs).toHaveLength(1)
        const log = Cli.readLog(logs[0]!)
        expect(log.header.id).toBe(id)
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        expect(log.events.flatMap((e) => (e.type === "turn/start" ? [e.data.turn] : []))).toEqual([1, 2, 3])
        expect(log.events.flatMap((e) => (e.type === "turn/end" ? [e.data.reason.kind] : []))).toEqual([
          "completed",
          "completed",
          "completed"
        ])
      }),
    TIMEOUT
  )
})
