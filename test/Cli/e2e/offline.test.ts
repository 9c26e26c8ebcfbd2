/**
 * End-to-end: the bundled CLI on the offline default (no key, no network): the demo turn, the
 * `--json` event stream, the `sessions` commands over JSONL, and the SQLite store.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { EnvelopeSchema } from "../../../src/Session/SessionEvent.js"
import * as Validate from "../../../src/Session/Validate.js"
import * as Cli from "../../support/Cli.js"
import { InitLine, ResultLine } from "../../support/CliJson.js"

const TIMEOUT = 90_000

const DEMO_ANNOUNCE = "using the offline demo model"
const DEMO_CLOSING = "That was a complete agent turn"


/** The sessions printed by `sessions list --json` (one JSON line each). */
const listed = (stdout: string): Array<{ id: string; turns: number; cwd: string | null; first_prompt: string | null }> =>
  Cli.linesOf(stdout).map((l) => JSON.parse(l) as { id: string; turns: number; cwd: string | null; first_prompt: string | null })

/** The session ids printed by `sessions list --json`. */
const listedIds = (stdout: string): Array<string> => listed(stdout).map((s) => s.id)

describe("harness CLI end to end on the offline default", () => {
  it.live(
    "[issue 7] no key, no network → exit 0, the demo's answer on stdout, the demo announced on stderr, a balanced log",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        writeFileSync(join(work, "README.md"), "# demo workspace\n")
        const result = yield* Cli.runCli(["run", "hello there"], { cwd: work, home })
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(0)
        // stdout: the streamed answer of both steps (text, ls tool call, summary)
        expect(result.stdout).toContain("offline demo model")
        expect(result.stdout).toContain("You asked: \"hello there\"")
        expect(result.stdout).toContain("Your workspace has 1 entry, for example: README.md.")
        expect(result.stdout).toContain(DEMO_CLOSING)
        expect(result.stdout).not.toContain(DEMO_ANNOUNCE)
        // stderr: the announcement (once), the tool activity, the usage line; no error
        const err = Cli.linesOf(result.stderr)
        expect(err.filter((l) => l.includes(DEMO_ANNOUNCE))).toHaveLength(1)
        expect(err).toContain("→ ls({})")
        expect(err.some((l) => l.startsWith("✓ ls"))).toBe(true)
        expect(err.filter((l) => l.startsWith("usage: in "))).toHaveLength(1)
        expect(result.stderr).not.toMatch(/error|cancelled/i)
        // the session log exists under EFFECT_HARNESS_HOME, valid and balanced
        const logs = Cli.sessionLogs(home)
        expect(logs).toHaveLength(1)
        const log = Cli.readLog(logs[0]!)
        expect(log.header).toMatchObject({ type: "session", cwd: work })
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        expect(log.events[0]).toMatchObject({ type: "turn/start", seq: 0, data: { turn: 1 } })
        expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { turn: 1, reason: { kind: "completed" } } })
        expect(log.events.filter((e) => e.type === "assistant/message")).toHaveLength(2)
        // nothing written into the workspace
        expect(Cli.filesUnder(work)).toEqual([join(work, "README.md")])
      }),
    TIMEOUT
  )

  it.live(
    "[issue 7, issue 15, DEC-9] --json → an init line, then every session event (seqs 0.. contiguous, same as the log), then a result line, per docs/cli-json.md",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const result = yield* Cli.runCli(["run", "--json", "list my files"], { cwd: work, home })
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout.endsWith("\n")).toBe(true)
        const all = result.stdout.slice(0, -1).split("\n")
        // first the init line, last the result line (schemas of docs/cli-json.md, no other keys)
        const init = Schema.decodeUnknownSync(InitLine, { onExcessProperty: "error" })(JSON.parse(all[0]!))
        const final = Schema.decodeUnknownSync(ResultLine, { onExcessProperty: "error" })(JSON.parse(all.at(-1)!))
        const lines = all.slice(1, -1)
        const decode = Schema.decodeUnknownResult(EnvelopeSchema)
        const parsed = lines.map((line, i) => {
          const raw = JSON.parse(line) as unknown
          const decoded = decode(raw)
          if (Result.isFailure(decoded)) throw new Error(`line ${i + 1} is not a session event: ${line.slice(0, 200)}`)
          return raw
        })
        // full validation: envelopes, core payloads, surface metadata and seq contiguity from 0
        const validated = Validate.seed(parsed)
        if (Result.isFailure(validated)) throw new Error(validated.failure.message)
        const events = validated.success
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i))
        expect(events[0]?.type).toBe("turn/start")
        expect(events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "completed" } } })
        expect(Cli.enclosureProblems(events)).toEqual([])
        expect(events.some((e) => e.type === "tool/result")).toBe(true)
        // stdout carries nothing else: the demo's text and the announcement are not there raw
        expect(result.stdout).not.toContain(DEMO_ANNOUNCE)
        expect(result.stderr).toContain(DEMO_ANNOUNCE)
        expect(result.stderr).not.toMatch(/^→ /m)
        // the stream is exactly what was logged
        const logs = Cli.sessionLogs(home)
        expect(logs).toHaveLength(1)
        const log = Cli.readLog(logs[0]!)
        expect(JSON.parse(JSON.stringify(log.events))).toEqual(parsed)
        expect(init).toMatchObject({ session_id: log.header.id, cwd: work, provider: "scripted", model: "demo", version: Cli.version })
        expect(init.tools).toEqual(expect.arrayContaining(["read", "write", "edit", "ls", "glob", "grep", "bash"]))
        const steps = events.filter((e) => e.type === "step/start").length
        const lastMessage = events.filter((e) => e.type === "assistant/message").at(-1)
        expect(final).toMatchObject({
          session_id: log.header.id,
          subtype: "success",
          num_steps: steps,
          // the offline demo has no prices (issue 19)
          cost: null,
          turn_end_reason: { kind: "completed" }
        })
        expect(final.result).toContain(DEMO_CLOSING)
        expect(lastMessage?.data.content).toEqual([{ type: "text", text: final.result }])
        const usage = events.flatMap((e) => e.type === "assistant/message" && e.data.usage !== undefined ? [e.data.usage] : [])
        expect(final.usage.inputTokens).toBe(usage.reduce((n, u) => n + u.inputTokens, 0))
        expect(final.usage.outputTokens).toBe(usage.reduce((n, u) => n + u.outputTokens, 0))
        expect(final.duration_ms).toBeGreaterThanOrEqual(0)
      }),
    TIMEOUT
  )

  it.live(
    "[issue 7, D-6, S-21] sessions list | show | replay | fork on a demo session",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const opts = { cwd: work, home }
        const run = yield* Cli.runCli(["run", "what is in here?"], opts)
        expect(run.code, run.stderr).toBe(0)

        const list = yield* Cli.runCli(["sessions", "list", "--json"], opts)
        expect(list.code, list.stderr).toBe(0)
        const ids = listedIds(list.stdout)
        expect(ids).toHaveLength(1)
        const id = ids[0]!
        expect(listed(list.stdout)[0]).toMatchObject({ turns: 1, cwd: work, first_prompt: "what is in here?" })
        expect(Cli.readLog(Cli.sessionLogs(home)[0]!).header.id).toBe(id)

        const show = yield* Cli.runCli(["sessions", "show", id], opts)
        expect(show.code, show.stderr).toBe(0)
        expect(show.stdout).toContain(`session ${id}`)
        expect(show.stdout).toContain("what is in here?")
        expect(show.stdout).toContain(DEMO_CLOSING)
        expect(show.stdout).toContain("ls")

        const replay = yield* Cli.runCli(["sessions", "replay", id], opts)
        expect(replay.code, replay.stdout + replay.stderr).toBe(0)
        expect(replay.stdout).toContain("2 assistant messages re-derived, 0 mismatches")

        const fork = yield* Cli.runCli(["sessions", "fork", id], opts)
        expect(fork.code, fork.stderr).toBe(0)
        const forkLines = Cli.linesOf(fork.stdout)
        expect(forkLines).toHaveLength(1)
        const child = forkLines[0]!.trim()
        expect(child).not.toBe(id)
        expect(child.length).toBeGreaterThan(0)

        const showChild = yield* Cli.runCli(["sessions", "show", child], opts)
        expect(showChild.code, showChild.stderr).toBe(0)
        expect(showChild.stdout).toContain(`session ${child}`)
        expect(showChild.stdout).toContain(`forked from ${id}`)
        expect(showChild.stdout).toContain("what is in here?")
        expect(showChild.stdout).toContain(DEMO_CLOSING)

        // both logs on disk, the child's header names its parent, both balanced
        const logs = Cli.sessionLogs(home).map(Cli.readLog)
        expect(logs.map((l) => l.header.id).sort()).toEqual([id, child].sort())
        const childLog = logs.find((l) => l.header.id === child)!
        expect(childLog.header.parentSession).toBe(id)
        for (const log of logs) expect(Cli.enclosureProblems(log.events)).toEqual([])
      }),
    TIMEOUT
  )

  it.live(
    "[issue 7, D-10] --store sqlite: run, then sessions list and show --store sqlite; no JSONL file",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const opts = { cwd: work, home }
        const run = yield* Cli.runCli(["run", "--store", "sqlite", "sqlite round trip"], opts)
        expect(run.code, run.stderr).toBe(0)
        expect(run.stdout).toContain(DEMO_CLOSING)
        expect(existsSync(join(home, "sessions.sqlite"))).toBe(true)
        expect(Cli.sessionLogs(home)).toHaveLength(0)

        const list = yield* Cli.runCli(["sessions", "list", "--store", "sqlite", "--json"], opts)
        expect(list.code, list.stderr).toBe(0)
        const ids = listedIds(list.stdout)
        expect(ids).toHaveLength(1)
        expect(listed(list.stdout)[0]).toMatchObject({ turns: 1, first_prompt: "sqlite round trip" })

        const show = yield* Cli.runCli(["sessions", "show", "--store", "sqlite", ids[0]!], opts)
        expect(show.code, show.stderr).toBe(0)
        expect(show.stdout).toContain("sqlite round trip")
        expect(show.stdout).toContain(DEMO_CLOSING)

        // the JSONL store does not know it
        const jsonl = yield* Cli.runCli(["sessions", "list"], opts)
        expect(jsonl.code, jsonl.stderr).toBe(0)
        expect(jsonl.stdout.trim()).toMatch(/^no sessions yet/)
      }),
    TIMEOUT
  )
})
