/**
 * End-to-end (issue 10, DEC-11, DEC-1): the bundled CLI stopped by real signals and a closed pipe.
 *
 * - SIGTERM / SIGHUP while a `bash` tool runs and while the provider streams: the turn is cancelled
 *   by interruption, exit 143 / 129, the tool's process group is gone, no lock is left, the log is
 *   balanced (`turn/end aborted`) and the session resumes.
 * - A second SIGTERM during the shutdown exits at once; the log stays repairable (it resumes).
 * - `harness run … | head -c 1`: the closed stdout cancels the turn the same way, exit 141.
 *
 * Tool processes are checked by host process group, so the bash cases run with `--no-sandbox` (the sandbox has
 * its own PID namespace; its cancellation is covered by `test/Tools/Sandbox.test.ts`).
 * No timed assertions: the tests wait for conditions (a file the tool writes, text on stdout).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as ProcessGroup from "../../../src/Tools/internal/ProcessGroup.js"
import * as Cli from "../../support/Cli.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 90_000

/** Waits until `file` exists (polling; the test's timeout bounds it). */
/** Writes a `--script` file: one bash call with `command`, then a final text. */
const bashScript = (dir: string, command: string, answer = "done"): string => {
  const file = join(dir, "script.json")
  writeFileSync(
    file,
    JSON.stringify({
      provider: "scripted",
      model: "demo",
      responses: [
        [
          { text: "running it. " },
          { toolCall: { id: "c1", name: "bash", arguments: JSON.stringify({ command }) } },
          { finish: { kind: "tool-calls" } }
        ],
        { text: answer }
      ]
    })
  )
  return file
}

const textScript = (dir: string, answer: string): string => {
  const file = join(dir, "again.json")
  writeFileSync(file, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: answer }] }))
  return file
}

const lockFiles = (home: string): Array<string> => Cli.filesUnder(join(home, "sessions", "locks"))

/** The one session log: balanced, and its id. */
const onlyLog = (home: string) => {
  const logs = Cli.sessionLogs(home)
  expect(logs).toHaveLength(1)
  const log = Cli.readLog(logs[0]!)
  return log
}

/** Resumes the session with a one-text script: exit 0, two balanced turns. */
const resumes = (work: string, home: string, id: string) =>
  Effect.gen(function*() {
    const again = yield* Cli.runCli(["run", "--resume", id, "--script", textScript(work, "AGAIN-OK"), "once more"], {
      cwd: work,
      home
    })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain("AGAIN-OK")
    const log = onlyLog(home)
    expect(Cli.enclosureProblems(log.events)).toEqual([])
    expect(log.events.filter((e) => e.type === "turn/start")).toHaveLength(2)
    expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { turn: 2, reason: { kind: "completed" } } })
  })

const signals = [
  { signal: "SIGTERM", code: 143, reason: "terminated (SIGTERM)" },
  { signal: "SIGHUP", code: 129, reason: "the terminal hung up (SIGHUP)" }
] as const

describe("harness CLI end to end: signals and pipes (issue 10)", () => {
  for (const s of signals) {
    it.live(
      `[issue 10, DEC-1, DEC-11] ${s.signal} while a bash tool runs → exit ${s.code}, its process group gone, no lock, balanced log, session resumes`,
      () =>
        Effect.gen(function*() {
          const home = yield* Cli.tempDir("harness-e2e-home-")
          const work = yield* Cli.tempDir("harness-e2e-ws-")
          const script = bashScript(work, "echo $$ > tool.pid; sleep 300 & sleep 300; wait")
          const child = yield* Cli.spawnCli(["run", "--yes", "--no-sandbox", "--json", "--script", script, "run the tool"], {
            cwd: work,
            home
          })
          yield* Cli.waitForFile(join(work, "tool.pid"))
          const pgid = Number(readFileSync(join(work, "tool.pid"), "utf8").trim())
          expect(yield* ProcessGroup.isAlive(pgid)).toBe(true)
          yield* child.kill(s.signal)
          const result = yield* child.result
          expect(result.timedOut).toBe(false)
          expect(result.signal).toBeNull()
          expect(result.code, result.stderr).toBe(s.code)
          // the tool's whole group (shell, background sleep, foreground sleep) is gone
          expect(yield* ProcessGroup.awaitGone(pgid, 5000)).toBe(true)
          expect(lockFiles(home)).toEqual([])
          expect(Cli.linesOf(result.stderr)).toContain(`cancelled: ${s.reason}`)
          expect(result.stderr).not.toMatch(Cli.stackFrame)
          // stdout stayed JSON Lines
          for (const line of Cli.linesOf(result.stdout)) expect(() => JSON.parse(line)).not.toThrow()
          const log = onlyLog(home)
          expect(Cli.enclosureProblems(log.events)).toEqual([])
          expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "aborted", reason: s.reason } } })
          const toolResult = log.events.find((e) => e.type === "tool/result")
          expect(toolResult).toMatchObject({ data: { isError: true } })
          yield* resumes(work, home, log.header.id)
        }),
      TIMEOUT
    )

    it.live(
      `[issue 10, DEC-1, DEC-11] ${s.signal} while the provider streams → exit ${s.code}, stream closed, no lock, the streamed chunks logged`,
      () =>
        Effect.gen(function*() {
          const home = yield* Cli.tempDir("harness-e2e-home-")
          const work = yield* Cli.tempDir("harness-e2e-ws-")
          const body = Wire.text("deepseek", "STREAMING-PART and then a pause that never ends", {
            input: 10,
            output: 5,
            cacheRead: 0
          })
          const after = body.split("\n\n").slice(0, 4).join("\n\n").length + 2
          const fake = yield* FakeProvider.make({ replies: [FakeProvider.stallMidBody(body, after)] })
          const child = yield* Cli.spawnCli(["run", "--provider", "deepseek", "--base-url", fake.url, "tell me a story"], {
            cwd: work,
            home,
            env: { DEEPSEEK_API_KEY: "sk-e2e-signal" }
          })
          yield* child.waitFor("stdout", (t) => t.includes("STREAMING-PART"))
          yield* child.kill(s.signal)
          const result = yield* child.result
          expect(result.timedOut).toBe(false)
          expect(result.code, result.stderr).toBe(s.code)
          expect(yield* fake.awaitClose(0)).toEqual({ early: true })
          expect(lockFiles(home)).toEqual([])
          const log = onlyLog(home)
          expect(Cli.enclosureProblems(log.events)).toEqual([])
          expect(log.events.some((e) => e.type === "assistant/chunk")).toBe(true)
          expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "aborted", reason: s.reason } } })
        }),
      TIMEOUT
    )
  }

  it.live(
    "[issue 10, DEC-1] chat: SIGTERM while a bash tool runs → exit 143, its process group gone, no lock, balanced log",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const script = bashScript(work, "echo $$ > tool.pid; sleep 300")
        const child = yield* Cli.spawnCli(["chat", "--yes", "--no-sandbox", "--script", script], { cwd: work, home, stdin: "run the tool\n" })
        yield* Cli.waitForFile(join(work, "tool.pid"))
        const pgid = Number(readFileSync(join(work, "tool.pid"), "utf8").trim())
        yield* child.kill("SIGTERM")
        const result = yield* child.result
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(143)
        expect(yield* ProcessGroup.awaitGone(pgid, 5000)).toBe(true)
        expect(lockFiles(home)).toEqual([])
        const log = onlyLog(home)
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "aborted", reason: "terminated (SIGTERM)" } } })
      }),
    TIMEOUT
  )

  it.live(
    "[issue 10] a second SIGTERM while the first one's shutdown waits for a stubborn tool exits at once; no tool survives; the log is repaired on resume",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        // the shell survives SIGTERM (it notes it in a file), so the tool's shutdown waits for its grace period
        const script = bashScript(
          work,
          "trap 'echo got > term.seen' TERM; echo $$ > tool.pid; while true; do sleep 0.2; done"
        )
        const child = yield* Cli.spawnCli(["run", "--yes", "--no-sandbox", "--script", script, "run the tool"], { cwd: work, home })
        yield* Cli.waitForFile(join(work, "tool.pid"))
        const pgid = Number(readFileSync(join(work, "tool.pid"), "utf8").trim())
        yield* child.kill("SIGTERM")
        // the cancellation reached the tool: its group got SIGTERM and the shell trapped it
        yield* Cli.waitForFile(join(work, "term.seen"))
        yield* child.kill("SIGTERM")
        const result = yield* child.result
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(143)
        // exited before the turn was closed: no "cancelled" report, the log ends inside the turn
        expect(result.stderr).not.toContain("cancelled:")
        // SIGKILLed at the hard exit (the grace period had not ended)
        expect(yield* ProcessGroup.awaitGone(pgid, 5000)).toBe(true)
        // with write-through persistence (DEC-11) the turn's events are on disk: the next writer repairs
        // the tail (reclaiming the dead process's lock) and continues; a store that buffers until the
        // turn's end has nothing on disk yet
        const logs = Cli.sessionLogs(home)
        if (logs.length > 0) {
          const before = onlyLog(home)
          expect(Cli.enclosureProblems(before.events)).not.toEqual([])
          yield* resumes(work, home, before.header.id)
        }
      }),
    TIMEOUT
  )

  it.live(
    "[issue 10, DEC-12] `harness run … | head -c 1`: the closed stdout cancels the turn, exit 141 (never 0), the session is saved, no lock",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        // the tool waits until `head` has exited, so the answer after it meets a closed pipe
        const script = bashScript(work, "while [ ! -e gate ]; do sleep 0.05; done", "and now a longer answer after the tool")
        const bundle = yield* Cli.bundle
        const pipeline = `"${process.execPath}" "${bundle}" run --yes --script "${script}" go 2>stderr.txt | ` +
          `(head -c 1 >/dev/null; touch gate); exit \${PIPESTATUS[0]}`
        const code = yield* Effect.callback<number | null>((resume) => {
          const shell = spawn("bash", ["-c", pipeline], { cwd: work, env: Cli.cleanEnv(home), stdio: "ignore" })
          shell.on("close", (c) => resume(Effect.succeed(c)))
        })
        const stderr = readFileSync(join(work, "stderr.txt"), "utf8")
        expect(code, stderr).toBe(141)
        expect(stderr).not.toMatch(Cli.stackFrame)
        expect(readdirSync(join(home, "sessions", "locks"))).toEqual([])
        const log = onlyLog(home)
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        expect(log.events.at(-1)?.type).toBe("turn/end")
      }),
    TIMEOUT
  )
})
