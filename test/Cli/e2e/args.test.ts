/**
 * End-to-end (issue 15, "Scripts and pipes"): strict argument parsing, `--` ends options, flags
 * named in their errors, per-field `--script` errors, plain help when piped, no `--wizard`, the
 * demo banner never before a usage error, and the resume hint of text mode; on a Node.js below the
 * runtime floor the bin says which version it needs (issue 27).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 90_000

// the machine's own node (Node 20 here) runs the bundle below the floor; skipped where it is new enough
const oldNode = "/usr/bin/node"
const oldNodeVersion = existsSync(oldNode) ? spawnSync(oldNode, ["--version"], { encoding: "utf8" }).stdout.trim() : ""
const belowFloor = /^v(\d+)\.(\d+)/.exec(oldNodeVersion)
const hasOldNode = belowFloor !== null && (Number(belowFloor[1]) < 22 || (Number(belowFloor[1]) === 22 && Number(belowFloor[2]) < 19))

const DEMO_ANNOUNCE = "using the offline demo model"

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[/

/** A usage error: exit 2, one stderr line, nothing on stdout, no banner, no session. */
const usageError = (result: Cli.CliResult, home: string): string => {
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe("")
  const lines = Cli.linesOf(result.stderr)
  expect(lines, result.stderr).toHaveLength(1)
  expect(result.stderr).not.toContain(DEMO_ANNOUNCE)
  expect(Cli.sessionLogs(home)).toEqual([])
  return lines[0]!
}

describe("harness CLI end to end: arguments and help (issue 15)", () => {
  it.live(
    "[issue 15] unknown options are errors naming them (with a did-you-mean), bad choices name the flag, the banner never comes first",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const opts = { cwd: work, home }
        const results = yield* Effect.all([
          Cli.runCli(["run", "--frobnicate"], opts),
          Cli.runCli(["run", "--jsno", "hello"], opts),
          Cli.runCli(["run", "--store", "bogus", "hi"], opts),
          Cli.runCli(["sessions", "list", "--jsn"], opts),
          Cli.runCli(["--wizard"], opts),
          Cli.runCli(["run", "   "], opts),
          Cli.runCli(["sessions", "show"], opts)
        ], { concurrency: 3 })
        const [frob, jsno, store, list, wizard, empty, missing] = results.map((r) => usageError(r, home))
        expect(frob).toBe("error: unknown option --frobnicate for harness run; see harness run --help")
        expect(jsno).toBe("error: unknown option --jsno for harness run; did you mean --json?")
        expect(store).toBe("error: invalid value for --store: \"bogus\" (expected one of: jsonl, sqlite)")
        expect(list).toBe("error: unknown option --jsn for harness sessions list; did you mean --json?")
        expect(wizard).toMatch(/^error: unknown option --wizard for harness/)
        expect(empty).toBe("error: empty prompt")
        // a problem only effect/cli finds (a missing argument): one line too, naming it
        expect(missing).toBe("error: Missing required argument: id; see harness sessions show --help")
      }),
    TIMEOUT
  )

  it.live(
    "[issue 15] `--` ends the options: a prompt starting with - runs; text mode ends with the resume hint on stderr",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const result = yield* Cli.runCli(["run", "--", "--frobnicate is my prompt"], { cwd: work, home })
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toContain("You asked: \"--frobnicate is my prompt\"")
        const [log] = Cli.sessionLogs(home)
        const id = Cli.readLog(log!).header.id
        expect(Cli.linesOf(result.stderr).at(-1)).toBe(`resume with: harness run --resume ${id}`)
        expect(result.stdout).not.toContain("resume with")
      }),
    TIMEOUT
  )

  it.live(
    "[issue 15] --script errors: one line naming the file and the JSON path (or the line and column of malformed JSON), exit 2",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const write = (name: string, text: string) => {
          writeFileSync(join(work, name), text)
          return name
        }
        const shape = write("shape.json", JSON.stringify({ responses: [[{ toolCall: { id: "c1", name: "ls" } }]] }))
        const key = write("key.json", JSON.stringify({ responses: [{ text: "hi" }], modle: "x" }))
        const malformed = write("malformed.json", "{\n  \"responses\": [\n    { \"text\": \"hi\" },,\n  ]\n}\n")
        const [a, b, c] = yield* Effect.all(
          [shape, key, malformed].map((file) => Cli.runCli(["run", "--script", file, "hi"], { cwd: work, home })),
          { concurrency: 3 }
        )
        expect(usageError(a!, home)).toMatch(/^error: invalid script shape\.json: responses\[0\]\[0\]\.toolCall\.arguments: Missing key/)
        expect(usageError(b!, home)).toBe("error: invalid script key.json: modle: unknown key (not allowed here)")
        expect(usageError(c!, home)).toMatch(/^error: invalid script malformed\.json: malformed JSON at line 3, column 22: Unexpected token ','$/)
        for (const r of [a!, b!, c!]) expect(r.stderr.length).toBeLessThan(300)
      }),
    TIMEOUT
  )

  it.live(
    "[issue 15] --help piped (no NO_COLOR): plain text without ANSI codes, no --wizard, exit codes and environment listed",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        // NO_COLOR removed: plain output must come from stdout not being a terminal
        const env = { NO_COLOR: "" }
        const [root, run] = yield* Effect.all([
          Cli.runCli(["--help"], { cwd: work, home, env }),
          Cli.runCli(["run", "--help"], { cwd: work, home, env })
        ], { concurrency: 2 })
        for (const r of [root!, run!]) {
          expect(r.code, r.stderr).toBe(0)
          expect(r.stdout).not.toMatch(ansi)
          expect(r.stdout).not.toContain("--wizard")
          expect(r.stdout).toContain("EXIT CODES")
          expect(r.stdout).toContain("EFFECT_HARNESS_HOME")
          expect(r.stderr).toBe("")
        }
        expect(run!.stdout).toContain("--json")
        expect(run!.stdout).toContain("--verbose")
        const forced = yield* Cli.runCli(["run", "--help"], { cwd: work, home, env: { NO_COLOR: "", FORCE_COLOR: "1" } })
        expect(forced.stdout).toMatch(ansi)
      }),
    TIMEOUT
  )

  it.live.skipIf(!hasOldNode)(
    "[issue 27] below Node.js 22.19 the bin prints one line naming the version it needs and exits 2",
    () =>
      Effect.gen(function*() {
        const cli = yield* Cli.bundle
        const home = yield* Cli.tempDir("harness-e2e-home-")
        for (const args of [["--version"], ["run", "hi"]]) {
          const result = spawnSync(oldNode, [cli, ...args], { encoding: "utf8", env: Cli.cleanEnv(home), timeout: 20_000 })
          expect(result.status, result.stderr).toBe(2)
          expect(result.stdout).toBe("")
          expect(result.stderr).toBe(`harness needs Node.js 22.19 or newer (this is Node.js ${oldNodeVersion.slice(1)})\n`)
        }
      }),
    TIMEOUT
  )
})
