/**
 * End-to-end (issue 15, "Sessions"): one id format for runs and forks, unique-prefix matching
 * wherever an id is accepted (ambiguous and unknown prefixes are one-line errors), `sessions show`
 * by numbered turn with CANCELLED / FAILED ends and the partial answer of the cancelled turn,
 * `fork --turn N` (default: the last completed turn) and `--at <event>` (negative and mid-turn
 * events refused in the user's words, no rule ids), `rename` stored in the log, `rm` (refused
 * without `--yes` when stdin is not a terminal), `list` with a header, statuses, escaped control
 * characters and `--json`, and an old-style (bare UUID) session that still loads.
 *
 * One session with three turns (completed, cancelled by Ctrl-C mid-answer, failed by a provider
 * error) is shared by every check, so the whole file spawns about twenty short processes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import * as Cli from "../../support/Cli.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 180_000

const ID = /^harness-session-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const usage = { input: 10, output: 5, cacheRead: 0 }

// eslint-disable-next-line no-control-regex
const rawControl = /[\u0000-\u0008\u000b-\u001f\u007f]/

/** A one-line error: the exit code, one stderr line, nothing on stdout, no rule id. */
const oneLine = (result: Cli.CliResult, code: number): string => {
  expect(result.code, result.stderr).toBe(code)
  expect(result.stdout).toBe("")
  const lines = Cli.linesOf(result.stderr)
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).not.toMatch(/\b[A-Z]{1,2}-\d+\b/)
  return lines[0]!
}

interface Listed {
  readonly id: string
  readonly title: string | null
  readonly turns: number
  readonly status: string
  readonly model: string | null
  readonly parent: string | null
}

const listed = (stdout: string): Array<Listed> => Cli.linesOf(stdout).map((l) => JSON.parse(l) as Listed)

describe("harness CLI end to end: sessions (issue 15)", () => {
  it.live(
    "[issue 15] one id format; prefixes everywhere; show by turn (CANCELLED with its partial answer, FAILED); fork --turn/--at; rename; rm; list",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const partial = Wire.text("deepseek", "STREAMING-PART and then a pause that never ends", usage)
        const after = partial.split("\n\n").slice(0, 4).join("\n\n").length + 2
        const fake = yield* FakeProvider.make({
          replies: [
            FakeProvider.sse(Wire.text("deepseek", "ANSWER-ONE about pineapples.", usage)),
            FakeProvider.stallMidBody(partial, after),
            FakeProvider.status(400)
          ]
        })
        const opts = { cwd: work, home, env: { DEEPSEEK_API_KEY: "sk-e2e-sessions" } }
        const flags = ["--provider", "deepseek", "--base-url", fake.url]

        // turn 1 (text mode): the id is printed on stderr at the end
        const first = yield* Cli.runCli(["run", ...flags, "PROMPT-ONE"], opts)
        expect(first.code, first.stderr).toBe(0)
        const hint = Cli.linesOf(first.stderr).at(-1)!
        expect(hint).toMatch(/^resume with: harness run --resume /)
        const id = hint.slice("resume with: harness run --resume ".length)
        expect(id).toMatch(ID)
        const prefix = id.slice("harness-session-".length, "harness-session-".length + 6)

        // turn 2 (stream-json, resumed by a 6-character prefix): Ctrl-C mid-answer
        const second = yield* Cli.spawnCli(["run", ...flags, "--output-format", "stream-json", "--resume", prefix, "PROMPT-TWO"], opts)
        // the stream's third text piece ("PART ") reached stdout as a chunk line: the answer is streaming
        yield* second.waitFor("stdout", (t) => t.includes("\"PART"))
        yield* second.kill("SIGINT")
        const cancelled = yield* second.result
        expect(cancelled.code, cancelled.stderr).toBe(130)
        const streamLines = Cli.linesOf(cancelled.stdout).map((l) => JSON.parse(l) as Record<string, unknown>)
        expect(streamLines[0]).toMatchObject({ type: "init", session_id: id })
        expect(streamLines.at(-1)).toMatchObject({
          type: "result",
          session_id: id,
          subtype: "cancelled",
          turn_end_reason: { kind: "aborted" }
        })
        expect(streamLines.at(-1)!["result"]).toContain("STREAMING-PART")

        // turn 3 (json: one object at the end): the provider fails
        const third = yield* Cli.runCli(["run", ...flags, "--output-format", "json", "--resume", prefix, "PROMPT-THREE"], opts)
        expect(third.code, third.stderr).toBe(3)
        const thirdLines = Cli.linesOf(third.stdout)
        expect(thirdLines).toHaveLength(1)
        expect(JSON.parse(thirdLines[0]!)).toMatchObject({
          type: "result",
          session_id: id,
          subtype: "error",
          turn_end_reason: { kind: "error" }
        })

        // show by prefix: numbered turns, how each ended with its event number, the partial answer
        const show = yield* Cli.runCli(["sessions", "show", prefix], opts)
        expect(show.code, show.stderr).toBe(0)
        const text = show.stdout
        expect(text).toContain(`session ${id}`)
        for (const n of [1, 2, 3]) expect(text).toContain(`── turn ${n} ──`)
        expect(text).toMatch(/── turn 1 completed · event #\d+ ──/)
        expect(text).toMatch(/── turn 2 CANCELLED[^\n]* · event #\d+ ──/)
        expect(text).toMatch(/── turn 3 FAILED[^\n]* · event #\d+ ──/)
        const partialAt = text.indexOf("assistant (partial answer, cut off):")
        expect(partialAt).toBeGreaterThan(text.indexOf("PROMPT-TWO"))
        expect(partialAt).toBeLessThan(text.indexOf("── turn 2 CANCELLED"))
        expect(text.slice(partialAt)).toMatch(/^assistant \(partial answer, cut off\):\n {2}STREAMING-PART/)
        const turnEnd1 = Number(/── turn 1 completed · event #(\d+) ──/.exec(text)![1])

        // fork: default = the last completed turn (turn 1); --turn 2; bad --at / --turn refused in words
        const [forkDefault, forkTurn2, atNegative, atMid, turnMissing] = yield* Effect.all([
          Cli.runCli(["sessions", "fork", prefix], opts),
          Cli.runCli(["sessions", "fork", id, "--turn", "2"], opts),
          Cli.runCli(["sessions", "fork", prefix, "--at", "-1"], opts),
          Cli.runCli(["sessions", "fork", prefix, "--at", "1"], opts),
          Cli.runCli(["sessions", "fork", prefix, "--turn", "7"], opts)
        ], { concurrency: 3 })
        expect(forkDefault!.code, forkDefault!.stderr).toBe(0)
        expect(forkTurn2!.code, forkTurn2!.stderr).toBe(0)
        const childOne = forkDefault!.stdout.trim()
        const childTwo = forkTurn2!.stdout.trim()
        expect(childOne).toMatch(ID)
        expect(childTwo).toMatch(ID)
        expect(oneLine(atNegative!, 2)).toContain("--at takes an event number (0 or more), not -1")
        expect(oneLine(atMid!, 2)).toContain("event #1 does not end a turn (a fork keeps whole turns); it lies inside turn 1: use --turn 1")
        expect(oneLine(turnMissing!, 2)).toContain("there is no turn 7: the session has turns 1-3")
        const logs = Cli.sessionLogs(home).map(Cli.readLog)
        const one = logs.find((l) => l.header.id === childOne)!
        expect(one.header.parentSession).toBe(id)
        expect(one.events.at(-1)).toMatchObject({ type: "turn/end", seq: turnEnd1, data: { turn: 1 } })
        const two = logs.find((l) => l.header.id === childTwo)!
        expect(two.events.at(-1)).toMatchObject({ type: "turn/end", data: { turn: 2, reason: { kind: "aborted" } } })

        // rename (control characters in the title), then list shows it escaped, with a header
        const title = "Fruit \u001b[31mtalk"
        const rename = yield* Cli.runCli(["sessions", "rename", prefix, title], opts)
        expect(rename.code, rename.stderr).toBe(0)
        const [table, json, verify, ambiguous, unknown] = yield* Effect.all([
          Cli.runCli(["sessions", "list"], opts),
          Cli.runCli(["sessions", "list", "--json"], opts),
          Cli.runCli(["sessions", "verify", prefix], opts),
          Cli.runCli(["sessions", "show", "harness-session-"], opts),
          Cli.runCli(["run", "--resume", "zzzz", "hello"], opts)
        ], { concurrency: 3 })
        expect(table!.code, table!.stderr).toBe(0)
        const rows = table!.stdout.split("\n").filter((l) => l !== "")
        expect(rows[0]).toMatch(/^ID\s+UPDATED \(local\)\s+TURNS\s+STATUS\s+MODEL\s+TITLE/)
        expect(rows).toHaveLength(4)
        expect(table!.stdout).not.toMatch(rawControl)
        const mine = rows.find((r) => r.includes("Fruit"))!
        expect(mine).toContain("Fruit \\x1b[31mtalk")
        expect(mine).toMatch(/\s3\s+failed\s+deepseek-v4-flash\s/)
        expect(mine.startsWith(id.slice("harness-session-".length, "harness-session-".length + 8))).toBe(true)
        const sessions = listed(json!.stdout)
        expect(sessions.find((s) => s.id === id)).toMatchObject({ title, turns: 3, status: "failed", model: "deepseek-v4-flash", parent: null })
        expect(sessions.find((s) => s.id === childTwo)).toMatchObject({ status: "cancelled", parent: id, turns: 2 })
        expect(verify!.code, verify!.stdout + verify!.stderr).toBe(0)
        const amb = oneLine(ambiguous!, 4)
        expect(amb).toMatch(/^error: "harness-session-" matches 3 sessions: /)
        for (const s of [id, childOne, childTwo]) expect(amb).toContain(s)
        expect(oneLine(unknown!, 4)).toBe("error: no session matches \"zzzz\" (see harness sessions list)")
        // the title is in the session's own log, outside any turn
        const log = Cli.readLog(Cli.sessionLogs(home).find((f) => Cli.readLog(f).header.id === id)!)
        expect(log.events.at(-1)).toMatchObject({ type: "session/title", data: { title } })

        // rm: refused without --yes when stdin is not a terminal; deleted with --yes
        const childFile = Cli.sessionLogs(home).find((f) => Cli.readLog(f).header.id === childOne)!
        const refused = yield* Cli.runCli(["sessions", "rm", childOne], opts)
        expect(oneLine(refused, 2)).toContain("without --yes")
        expect(existsSync(childFile)).toBe(true)
        const removed = yield* Cli.runCli(["sessions", "rm", childOne, "--yes"], opts)
        expect(removed.code, removed.stderr).toBe(0)
        expect(existsSync(childFile)).toBe(false)
        const gone = yield* Cli.runCli(["sessions", "show", childOne], opts)
        expect(oneLine(gone, 4)).toMatch(/^error: no session matches/)
      }),
    TIMEOUT
  )

  it.live(
    "[issue 15] an old-style session (bare UUID id, no title) still lists, shows, resumes by prefix, and is removed from SQLite too",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const opts = { cwd: work, home }
        const made = yield* Cli.runCli(["run", "old question"], opts)
        expect(made.code, made.stderr).toBe(0)
        // turn the log into one with a bare UUID id, as forks of earlier versions wrote
        const file = Cli.sessionLogs(home)[0]!
        const uuid = "0b5e1d2c-1111-4222-8333-944455556666"
        const [header, ...rest] = readFileSync(file, "utf8").split("\n")
        writeFileSync(file, [JSON.stringify({ ...JSON.parse(header!), id: uuid }), ...rest].join("\n"))
        renameSync(file, join(dirname(file), `${uuid}.jsonl`))
        expect(basename(Cli.sessionLogs(home)[0]!)).toBe(`${uuid}.jsonl`)

        const [list, show] = yield* Effect.all([
          Cli.runCli(["sessions", "list", "--json"], opts),
          Cli.runCli(["sessions", "show", "0b5e"], opts)
        ], { concurrency: 2 })
        expect(listed(list!.stdout)).toEqual([expect.objectContaining({ id: uuid, title: null, turns: 1, status: "ok" })])
        expect(show!.code, show!.stderr).toBe(0)
        expect(show!.stdout).toContain(`session ${uuid}`)
        expect(show!.stdout).toContain("old question")
        const resumed = yield* Cli.runCli(["run", "--resume", "0b5e1d", "new question"], opts)
        expect(resumed.code, resumed.stderr).toBe(0)
        expect(Cli.linesOf(resumed.stderr).at(-1)).toBe(`resume with: harness run --resume ${uuid}`)
        expect(Cli.readLog(Cli.sessionLogs(home)[0]!).events.filter((e) => e.type === "turn/start")).toHaveLength(2)

        // SQLite: rename and rm work the same way
        const sqlite = yield* Cli.runCli(["run", "--store", "sqlite", "--output-format", "json", "in sqlite"], opts)
        expect(sqlite.code, sqlite.stderr).toBe(0)
        const sqliteId = (JSON.parse(sqlite.stdout) as { readonly session_id: string }).session_id
        const renamed = yield* Cli.runCli(["sessions", "rename", "--store", "sqlite", sqliteId.slice(16, 24), "kept in sqlite"], opts)
        expect(renamed.code, renamed.stderr).toBe(0)
        const before = yield* Cli.runCli(["sessions", "list", "--store", "sqlite", "--json"], opts)
        expect(listed(before.stdout)).toEqual([expect.objectContaining({ id: sqliteId, title: "kept in sqlite" })])
        const rm = yield* Cli.runCli(["sessions", "rm", "--store", "sqlite", "--yes", sqliteId], opts)
        expect(rm.code, rm.stderr).toBe(0)
        const after = yield* Cli.runCli(["sessions", "list", "--store", "sqlite", "--json"], opts)
        expect(after.stdout).toBe("")
      }),
    TIMEOUT
  )
})
