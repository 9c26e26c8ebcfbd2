/**
 * The end-to-end fuzzer's parts (issue 21): a seeded generator of scripted sessions and the
 * checks every spawned `harness` process and every resulting log must pass.
 *
 * A case is a short sequence of `harness run --provider scripted --script <file> --json` processes
 * over one session (the first creates it, the others `--resume` it). Each process gets its own
 * script of model responses (text, reasoning, raw deltas, valid and invalid tool calls, parallel
 * calls, duplicate and empty call ids, usage, replay state, every finish kind including unknown
 * ones, failures before and after the first chunk, in-band errors, delays, exhaustion) and one
 * action: run to the end, or cancel (SIGINT, sometimes twice) or kill (SIGKILL) it once a marker
 * shows up on stdout (a hanging stream, or a tool call that sleeps), or kill it after its n-th
 * stdout line. Everything is derived from the case seed.
 *
 * Checks per process: the exit code is documented (and agrees with `TurnOutcome` for the turn
 * the process printed); no stack trace; every complete stdout line is JSON, and every line with a
 * `seq` equals the logged event with that seq (the only other lines allowed are the documented
 * `init` first, `result` last and `notice/retry`); the printed seqs are contiguous and (unless killed) reach the end of the
 * log; `LogStructure` and `ReplayCheck` find nothing in the log as the process left it. Per case:
 * `harness sessions verify --json` exits 0 with `ok: true` (and `sessions replay --json` for a
 * third of the cases), and the log read back afterwards is valid and balanced.
 */
import * as Effect from "effect/Effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as LogStructure from "../../src/Cli/LogStructure.js"
import * as ReplayCheck from "../../src/Cli/ReplayCheck.js"
import * as TurnOutcome from "../../src/Cli/TurnOutcome.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Cli from "./Cli.js"

// ---------------------------------------------------------------------------------------------
// Random

/** A seeded PRNG (mulberry32). */
export interface Random {
  /** uniform in [0, 1) */
  readonly next: () => number
  /** integer in [lo, hi] */
  readonly int: (lo: number, hi: number) => number
  /** true with probability p */
  readonly chance: (p: number) => boolean
  readonly pick: <A>(xs: ReadonlyArray<A>) => A
}

/** A PRNG for a seed. */
export const random = (seed: number): Random => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  return { next, int, chance: (p) => next() < p, pick: (xs) => xs[int(0, xs.length - 1)]! }
}

// ---------------------------------------------------------------------------------------------
// Scripts

/** One item of a script file response (see `Adapter/Scripted`). */
export type Item = Record<string, unknown>

/** What to do with a process. */
export type Action =
  | { readonly _tag: "Complete" }
  | {
    readonly _tag: "Signal"
    readonly signal: "SIGINT" | "SIGKILL"
    /** a regular expression: the signal is sent once a stdout line matches it */
    readonly marker: string
    readonly twice: boolean
  }
  | { readonly _tag: "KillAfterLines"; readonly lines: number }

/** One process of a case. */
export interface Run {
  readonly responses: ReadonlyArray<ReadonlyArray<Item>>
  readonly prompt: string
  readonly yes: boolean
  readonly action: Action
}

/** A generated case. */
export interface Case {
  readonly seed: number
  readonly runs: ReadonlyArray<Run>
  /** also spawn `sessions replay --json` */
  readonly replay: boolean
}

const HANG_MARK = "FUZZ-HANG-MARK"
const SLEEP_MARK = "FUZZ-SLEEP-MARK"

const words = ["hello", "world", " ", "\n", "\n\n", "  ", "naïve", "日本", "😀", "\t", "{\"json\":1}", "a\u0000b", "é"]

const textOf = (r: Random): string => {
  const n = r.int(0, 5)
  let s = ""
  for (let i = 0; i < n; i++) s += r.pick(words)
  return s
}

/** Tool calls: valid, denied, failing, unknown, invalid JSON, schema-invalid. */
const toolCall = (r: Random, id: string): Item => {
  const calls: ReadonlyArray<readonly [string, string]> = [
    ["ls", "{}"],
    ["ls", "{\"path\":\"sub\"}"],
    ["ls", "{\"path\":\"../..\"}"],
    ["read", "{\"file_path\":\"a.txt\"}"],
    ["read", "{\"file_path\":\"missing.txt\"}"],
    ["read", "{\"file_path\":\"a.txt\",\"offset\":0}"],
    ["glob", "{\"pattern\":\"**/*.txt\"}"],
    ["grep", "{\"pattern\":\"hel+o\"}"],
    ["grep", "{\"pattern\":\"(\"}"],
    ["write", `{"file_path":"out-${r.int(0, 3)}.txt","content":"${textOf(r).replace(/[\\"\u0000-\u001f]/g, "")}"}`],
    ["edit", "{\"file_path\":\"a.txt\",\"old_string\":\"hello\",\"new_string\":\"hallo\"}"],
    ["edit", "{\"file_path\":\"a.txt\",\"old_string\":\"zzz\",\"new_string\":\"y\"}"],
    ["bash", "{\"command\":\"echo fuzz; exit 3\"}"],
    ["nope", "{}"],
    ["ls", "{"],
    ["ls", ""],
    ["read", "{\"file_path\":5}"],
    ["read", "[1,2]"]
  ]
  const [name, args] = r.pick(calls)
  return { toolCall: { id, name, arguments: args } }
}

const finishOf = (r: Random, hasCalls: boolean): Item => {
  const roll = r.int(0, 99)
  const finish: Record<string, unknown> = roll < 35
    ? { kind: "stop" }
    : roll < 75
    ? { kind: hasCalls ? "tool-calls" : "stop" }
    : roll < 85
    ? { kind: "max-tokens" }
    : roll < 89
    ? { kind: "aborted" }
    : roll < 93
    ? { kind: "error", message: "model stopped: content_filter", code: "CONTENT_FILTER" }
    : roll < 96
    ? { kind: "error", message: "something odd" }
    : { kind: "pause_turn" }
  return r.chance(0.25) ? { finish, replayState: { sig: `s${r.int(0, 99)}`, n: [1, "x", null] } } : { finish }
}

/** One model response. */
const response = (r: Random, callIds: { n: number }): ReadonlyArray<Item> => {
  const shape = r.int(0, 99)
  if (shape < 4) return []
  if (shape < 10) return [{ fail: { code: r.pick(["RATE_LIMIT", "SERVER"]), retryAfterMillis: r.int(0, 5) } }]
  if (shape < 13) return [{ fail: { code: r.pick(["AUTH", "INVALID_REQUEST", "CONTEXT_WINDOW_EXCEEDED"]) } }]
  const items: Array<Item> = []
  let calls = 0
  const blocks = r.int(0, 4)
  for (let i = 0; i < blocks; i++) {
    const kind = r.int(0, 9)
    if (kind < 3) items.push({ text: textOf(r) })
    else if (kind < 4) items.push({ reasoning: textOf(r) })
    else if (kind < 5) {
      // a raw delta-only block at a high index (never closed by block-end)
      items.push({ chunk: { type: r.pick(["text-delta", "reasoning-delta"]), index: 40 + i, text: textOf(r) } })
    } else if (kind < 6) {
      items.push({
        chunk: { type: "tool-call-delta", index: 60 + i, id: r.chance(0.5) ? `raw-${callIds.n++}` : "", name: "ls", argumentsDelta: "{}" }
      })
      calls++
    } else {
      const id = r.chance(0.1) ? "" : r.chance(0.1) ? "dup" : `c${callIds.n++}`
      items.push(toolCall(r, id))
      calls++
    }
    if (r.chance(0.1)) items.push({ delayMs: r.int(0, 20) })
  }
  if (r.chance(0.06)) {
    items.push({ fail: { code: r.pick(["SERVER", "STREAM_CLOSED", "TIMEOUT"]), message: "mid-stream failure" } })
    return items
  }
  if (r.chance(0.7)) items.push({ usage: { inputTokens: r.int(0, 500), outputTokens: r.int(0, 100), ...(r.chance(0.3) ? { cacheReadTokens: r.int(0, 50) } : {}) } })
  if (r.chance(0.9)) items.push(finishOf(r, calls > 0))
  return items
}

/** Generates the case of a seed. */
export const generate = (seed: number): Case => {
  const r = random(seed)
  const callIds = { n: 1 }
  const count = r.chance(0.6) ? 1 : r.int(2, 3)
  const runs: Array<Run> = []
  for (let p = 0; p < count; p++) {
    const responses: Array<ReadonlyArray<Item>> = []
    const n = r.int(0, 5)
    for (let i = 0; i < n; i++) responses.push(response(r, callIds))
    const roll = r.int(0, 99)
    let action: Action = { _tag: "Complete" }
    if (roll < 15) {
      // a hanging stream at a random response
      const at = r.int(0, responses.length)
      const before = r.chance(0.5) ? [{ text: textOf(r) }] : []
      responses.splice(at, 0, [...before, { chunk: { type: "text-delta", index: 90, text: HANG_MARK } }, { hang: true }])
      action = { _tag: "Signal", signal: r.chance(0.6) ? "SIGINT" : "SIGKILL", marker: HANG_MARK, twice: r.chance(0.2) }
    } else if (roll < 22) {
      // a tool call that sleeps, with a parallel sibling
      const at = r.int(0, responses.length)
      responses.splice(at, 0, [
        { toolCall: { id: `sleep-${callIds.n++}`, name: "bash", arguments: `{"command":"sleep 20; echo ${SLEEP_MARK}"}` } },
        toolCall(r, `c${callIds.n++}`),
        { finish: { kind: "tool-calls" } }
      ])
      action = {
        _tag: "Signal",
        signal: r.chance(0.6) ? "SIGINT" : "SIGKILL",
        marker: `"type":"tool/call".*${SLEEP_MARK}`,
        twice: r.chance(0.2)
      }
    } else if (roll < 30) {
      action = { _tag: "KillAfterLines", lines: r.int(1, 12) }
    }
    runs.push({ responses, prompt: r.pick(["hi", "list the files", "  spaced  ", "日本語"]), yes: r.chance(0.8), action })
  }
  return { seed, runs, replay: r.chance(0.34) }
}

// ---------------------------------------------------------------------------------------------
// Running and checking

/** What one case found: problems (empty when all held) and what it ran. */
export interface Outcome {
  readonly seed: number
  readonly problems: ReadonlyArray<string>
  readonly exits: ReadonlyArray<string>
}

const documented = new Set([0, 3, 4, 5, 130])

const parseLine = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown
  } catch {
    return undefined
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

const lastTurnEnd = (events: ReadonlyArray<SessionEvent>) => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    if (e?.type === "turn/end") return e
  }
  return undefined
}

const logProblems = (where: string, events: ReadonlyArray<SessionEvent>): Array<string> => [
  ...LogStructure.check(events).findings.map((f) => `${where}: verify: ${ReplayCheck.renderFinding(f)}`),
  ...ReplayCheck.check(events).findings.map((f) => `${where}: replay: ${ReplayCheck.renderFinding(f)}`)
]

/**
 * Runs one case in a fresh home and workspace; never fails (problems are returned). A process
 * still running after `timeoutMs` (default 180 s: generous, for a loaded machine) is a problem.
 */
export const runCase = (c: Case, timeoutMs = 180_000): Effect.Effect<Outcome> =>
  Effect.scoped(Effect.gen(function*() {
    const home = yield* Cli.tempDir("harness-fuzz-home-")
    const work = yield* Cli.tempDir("harness-fuzz-ws-")
    writeFileSync(join(work, "a.txt"), "hello world\nhello again\n")
    mkdirSync(join(work, "sub"))
    writeFileSync(join(work, "sub", "b.txt"), "nested hello\n")
    const problems: Array<string> = []
    const exits: Array<string> = []
    let id: string | undefined
    let lastKilled = false
    for (const [p, run] of c.runs.entries()) {
      const where = `process ${p + 1}`
      const script = join(home, `script-${p}.json`)
      writeFileSync(script, JSON.stringify({ responses: run.responses }))
      const before = id === undefined ? 0 : Cli.readLog(Cli.sessionLogs(home)[0]!).events.length
      const args = [
        "run",
        "--provider",
        "scripted",
        "--script",
        script,
        "--json",
        ...(run.yes ? ["--yes"] : []),
        ...(id === undefined ? [] : ["--resume", id]),
        run.prompt
      ]
      const child = yield* Cli.spawnCli(args, { cwd: work, home, timeoutMs })
      let signalled = false
      const action = run.action
      if (action._tag === "Signal") {
        const marker = new RegExp(action.marker)
        const text = yield* child.waitFor("stdout", (t) => marker.test(t))
        if (marker.test(text)) {
          signalled = true
          yield* child.kill(action.signal)
          if (action.twice && action.signal === "SIGINT") yield* child.kill("SIGINT")
        }
      } else if (action._tag === "KillAfterLines") {
        const text = yield* child.waitFor("stdout", (t) => t.split("\n").length > action.lines)
        if (text.split("\n").length > action.lines) {
          signalled = true
          yield* child.kill("SIGKILL")
        }
      }
      const result = yield* child.result
      const killed = result.signal === "SIGKILL" && signalled
      lastKilled = killed
      exits.push(`${where}: ${killed ? "killed" : `exit ${result.code}`}${signalled ? ` after ${action._tag === "Signal" ? action.signal : "SIGKILL"}` : ""}`)
      if (result.timedOut) {
        problems.push(`${where}: timed out`)
        break
      }
      if (!killed && (result.code === null || !documented.has(result.code))) {
        problems.push(`${where}: undocumented exit ${result.code ?? result.signal}: ${result.stderr.trim().slice(0, 400)}`)
      }
      if (result.stderr.match(Cli.stackFrame)) problems.push(`${where}: stack trace on stderr: ${result.stderr.slice(0, 400)}`)
      const logs = Cli.sessionLogs(home)
      if (logs.length !== 1) {
        problems.push(
          logs.length === 0 && killed && result.stdout !== ""
            ? `${where}: [printed-not-written] killed after printing events, but no session file exists (DEC-11)`
            : `${where}: ${logs.length} session logs`
        )
        break
      }
      const log = Cli.readLog(logs[0]!)
      id = log.header.id
      // stdout: JSON lines equal to the logged events, contiguous, to the end unless killed
      const lines = result.stdout.split("\n")
      const complete = lines.slice(0, -1)
      if (lines.at(-1) !== "" && !killed) problems.push(`${where}: stdout does not end with a newline`)
      const seqs: Array<number> = []
      complete.forEach((line, i) => {
        const parsed = parseLine(line)
        if (parsed === undefined || typeof parsed !== "object" || parsed === null) {
          problems.push(`${where}: [stdout-not-json] stdout line is not JSON: ${line.slice(0, 200)}`)
          return
        }
        const seq = (parsed as { readonly seq?: unknown }).seq
        if (typeof seq !== "number") {
          // the documented non-event lines of `--json` (docs/cli-json.md): `init` first, `result`
          // last, `notice/retry` anywhere
          const type = (parsed as { readonly type?: unknown }).type
          const placed = type === "notice/retry" || (type === "init" && i === 0) ||
            (type === "result" && i === complete.length - 1)
          if (!placed) problems.push(`${where}: [stdout-not-event] a stdout line is not a session event: ${line.slice(0, 200)}`)
          return
        }
        const logged = log.events[seq]
        if (logged === undefined) {
          problems.push(`${where}: [printed-not-written] stdout event ${seq} is not in the log (DEC-11: printed ⇒ written)`)
        } else if (!sameJson(parsed, logged)) {
          problems.push(`${where}: [stdout-differs] stdout event ${seq} differs from the log: ${line.slice(0, 200)}`)
        }
        seqs.push(seq)
      })
      seqs.forEach((s, i) => {
        if (i > 0 && s !== seqs[i - 1]! + 1) problems.push(`${where}: printed seqs jump from ${seqs[i - 1]} to ${s}`)
      })
      if (seqs.length > 0 && seqs[0]! < before) problems.push(`${where}: printed seq ${seqs[0]} was logged before the process`)
      if (!killed && seqs.at(-1) !== log.events.length - 1) {
        problems.push(`${where}: printed up to seq ${seqs.at(-1)} but the log ends at ${log.events.length - 1}`)
      }
      if (!killed && result.code !== null) {
        const end = lastTurnEnd(log.events)
        const printedEnd = end !== undefined && seqs.includes(end.seq)
        if (!printedEnd) problems.push(`${where}: exit ${result.code} without a printed turn/end`)
        else {
          const expected = TurnOutcome.outcome(end.data.reason).exitCode
          if (expected !== result.code) {
            problems.push(`${where}: exit ${result.code} but the turn ended ${JSON.stringify(end.data.reason)} (→ ${expected})`)
          }
        }
        const open = LogStructure.check(log.events).open
        if (open !== undefined) problems.push(`${where}: exit ${result.code} left turn ${open.turn} open`)
      }
      problems.push(...logProblems(where, log.events))
    }
    if (id !== undefined && problems.every((p) => knownGaps.has(signature(p)))) {
      const verify = yield* Cli.runCli(["sessions", "verify", "--json", id], { cwd: work, home, timeoutMs })
      const report = parseLine(verify.stdout.trim()) as { readonly ok?: unknown } | undefined
      if (verify.code !== 0 || report?.ok !== true) {
        problems.push(`sessions verify: exit ${verify.code}: ${verify.stdout.slice(0, 600)}${verify.stderr.slice(0, 300)}`)
      }
      if (c.replay) {
        const replay = yield* Cli.runCli(["sessions", "replay", "--json", id], { cwd: work, home, timeoutMs })
        const replayed = parseLine(replay.stdout.trim()) as { readonly ok?: unknown } | undefined
        if (replay.code !== 0 || replayed?.ok !== true) {
          problems.push(`sessions replay: exit ${replay.code}: ${replay.stdout.slice(0, 600)}${replay.stderr.slice(0, 300)}`)
        }
      }
      // readers never write (DEC-11): after a kill the file keeps its open tail until a writer
      // resumes the session; otherwise it must be closed
      const after = Cli.readLog(Cli.sessionLogs(home)[0]!)
      const open = LogStructure.check(after.events).open
      if (open !== undefined && !lastKilled) problems.push(`after verify: the log is still open in turn ${open.turn}`)
      problems.push(...logProblems("after verify", after.events))
    }
    return { seed: c.seed, problems, exits }
  }))

/**
 * A failure's signature for grouping: its `[kind]` tag, or the rule a verify/replay finding
 * names, else the text without numbers and quoted values.
 */
export const signature = (problem: string): string => {
  const kind = /\[([a-z-]+)\]/.exec(problem)?.[1]
  if (kind !== undefined) return kind
  const rule = /\(([a-z-]+), [A-Z]-[^)]*\)/.exec(problem)?.[1]
  const source = /^(?:process \d+|after verify): (verify|replay)/.exec(problem)?.[1]
  if (rule !== undefined) return `${source ?? "check"}: ${rule}`
  return problem.replace(/^process \d+: /, "").replace(/"[^"]*"/g, "\"…\"").replace(/\d+/g, "N").slice(0, 120)
}

/**
 * Failure kinds owned by a change that has not landed yet; they are reported on stderr but do not fail the
 * fuzzer. Empty: write-through persistence (DEC-11) closed the last one (`printed-not-written`).
 */
export const knownGaps: ReadonlySet<string> = new Set()
