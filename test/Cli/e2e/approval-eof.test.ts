/**
 * End-to-end (issue 10): Ctrl-D (end of input) at an approval prompt of `harness run` on a real
 * terminal. The call is denied with a reason the model reads ("no answer: input closed"), a later
 * call of the same turn is denied at once (no prompt left hanging), and the turn completes, is
 * saved and exits 0. The terminal is a pseudo-terminal from `script(1)`; without it the test is
 * skipped with a notice.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 90_000

const scriptAvailable = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0
if (!scriptAvailable) console.warn("approval-eof: script(1) is not available; the pseudo-terminal test is skipped")

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

describe.skipIf(!scriptAvailable)("harness run on a terminal: end of input at an approval prompt (issue 10)", () => {
  it.live(
    "[issue 10, T-3] Ctrl-D at the approval prompt denies the call (no answer: input closed), the next call too, the turn completes and is saved, exit 0",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const bundle = yield* Cli.bundle
        const call = (id: string, command: string) => [
          { toolCall: { id, name: "bash", arguments: JSON.stringify({ command }) } },
          { finish: { kind: "tool-calls" } }
        ]
        writeFileSync(
          join(work, "script.json"),
          JSON.stringify({
            provider: "scripted",
            model: "demo",
            responses: [call("c1", "echo one > one.txt"), call("c2", "echo two > two.txt"), { text: "FINAL-ANSWER" }]
          })
        )
        const command = `${quote(process.execPath)} ${quote(bundle)} run --script script.json ${quote("change things")}`
        const result = yield* Effect.callback<{ readonly code: number | null; readonly output: string }>((resume) => {
          const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: work, env: Cli.cleanEnv(home) })
          let output = ""
          let sent = false
          child.stdout.setEncoding("utf8")
          child.stdout.on("data", (d: string) => {
            output += d
            // Ctrl-D at the first prompt: the terminal's end of input
            if (!sent && /\[y(\/[a-z])*\/N\]/.test(output)) {
              sent = true
              child.stdin.write("\x04")
            }
          })
          child.stdin.on("error", () => {})
          child.on("close", (code) => resume(Effect.succeed({ code, output })))
          return Effect.sync(() => void child.kill("SIGKILL"))
        }).pipe(Effect.timeout("60 seconds"), Effect.orDie)
        expect(result.code, result.output).toBe(0)
        // one prompt only: the second call was denied without asking
        expect(result.output.match(/\[y(\/[a-z])*\/N\]/g), result.output).toHaveLength(1)
        expect(result.output).toContain("FINAL-ANSWER")
        expect(existsSync(join(work, "one.txt"))).toBe(false)
        expect(existsSync(join(work, "two.txt"))).toBe(false)
        const [file] = Cli.sessionLogs(home)
        const log = Cli.readLog(file!)
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        const results = log.events.filter((e) => e.type === "tool/result")
        expect(results).toHaveLength(2)
        for (const r of results) {
          expect(r.data.isError).toBe(true)
          expect(JSON.stringify(r.data.content)).toContain("no answer: input closed")
        }
        expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "completed" } } })
        expect(Cli.filesUnder(join(home, "sessions", "locks"))).toEqual([])
      }),
    TIMEOUT
  )
})
