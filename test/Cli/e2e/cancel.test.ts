/**
 * End-to-end: Ctrl-C (SIGINT) while the provider stream stalls mid-body cancels the turn: exit 130,
 * one `cancelled` line, a balanced log ending `turn/end aborted`, the HTTP stream closed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "../../support/Cli.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 90_000

describe("harness CLI end to end: cancellation", () => {
  it.live(
    "[issue 7, DEC-1, L-11] SIGINT during a stalled stream → exit 130, one cancelled line, turn/end aborted, log balanced",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const body = Wire.text("deepseek", "STREAMING-PART and then a long pause that never ends", {
          input: 10,
          output: 5,
          cacheRead: 0
        })
        // send the role frame and the first text pieces ("STREA", "MING-", "PART "), then stall
        const after = body.split("\n\n").slice(0, 4).join("\n\n").length + 2
        const fake = yield* FakeProvider.make({ replies: [FakeProvider.stallMidBody(body, after)] })
        const child = yield* Cli.spawnCli(
          ["run", "--provider", "deepseek", "--base-url", fake.url, "tell me a long story"],
          { cwd: work, home, env: { DEEPSEEK_API_KEY: "sk-e2e-cancel" } }
        )
        yield* fake.awaitRequests(1)
        // the streamed text reached stdout: the turn is inside the model stream
        const streamed = yield* child.waitFor("stdout", (t) => t.includes("STREAMING-PART"))
        expect(streamed).toContain("STREAMING-PART")
        yield* child.kill("SIGINT")
        const result = yield* child.result
        expect(result.timedOut).toBe(false)
        expect(result.signal).toBeNull()
        expect(result.code, result.stderr).toBe(130)
        const cancelled = Cli.linesOf(result.stderr).filter((l) => /cancel/i.test(l))
        expect(cancelled, result.stderr).toHaveLength(1)
        expect(cancelled[0]).toMatch(/^cancelled/)
        expect(result.stderr).not.toMatch(Cli.stackFrame)
        expect(result.stderr).not.toMatch(/error/i)
        // the client went away before the (never finished) response ended
        expect(yield* fake.awaitClose(0)).toEqual({ early: true })

        const logs = Cli.sessionLogs(home)
        expect(logs).toHaveLength(1)
        const log = Cli.readLog(logs[0]!)
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        expect(log.events.filter((e) => e.type === "turn/start")).toHaveLength(1)
        expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { turn: 1, reason: { kind: "aborted" } } })
        // the chunks streamed before the cancel are in the log
        expect(log.events.some((e) => e.type === "assistant/chunk")).toBe(true)
      }),
    TIMEOUT
  )
})
