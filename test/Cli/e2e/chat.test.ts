/**
 * End-to-end: `harness chat` driven by a script on stdin (no terminal): turns run in order, slash
 * commands work between them, `/new` starts a second session, `/exit` ends with exit 0.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 90_000

describe("harness chat end to end", () => {
  it.live(
    "[issue 7] scripted stdin: two prompts in order, /help, /sessions, /new, /exit",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const result = yield* Cli.runCli(["chat"], {
          cwd: work,
          home,
          stdin: "first question\n/help\n/sessions\n/new\nsecond question\n/exit\nnever sent\n"
        })
        expect(result.code, result.stderr).toBe(0)
        // answers in order on stdout
        const first = result.stdout.indexOf("You asked: \"first question\"")
        const second = result.stdout.indexOf("You asked: \"second question\"")
        expect(first).toBeGreaterThanOrEqual(0)
        expect(second).toBeGreaterThan(first)
        expect(result.stdout).not.toContain("never sent")
        // slash commands answered on stderr
        expect(result.stderr).toContain("/new      start a new session")
        expect(result.stderr).toMatch(/harness-session-\S+ {2}\S+ {2}1 turn {2}first question/)
        // two sessions (the /new one is separate), each balanced with one completed turn
        const logs = Cli.sessionLogs(home)
        expect(logs).toHaveLength(2)
        for (const file of logs) {
          const log = Cli.readLog(file)
          expect(Cli.enclosureProblems(log.events)).toEqual([])
          expect(log.events.filter((e) => e.type === "turn/end").map((e) => e.data)).toEqual([
            { turn: 1, reason: { kind: "completed" } }
          ])
        }
      }),
    TIMEOUT
  )
})
