/**
 * End-to-end (DEC-16, issue 29): a turn survives its process. The kill matrix runs the real CLI
 * against a loopback OpenAI-compatible server whose answer depends only on the step a request is at,
 * kills it with SIGKILL at seeded moments of a four-step turn (streaming text, streaming tool
 * arguments, during `bash`, during `write`, between steps), then runs `harness run --resume <id>
 * --json` with no route flags: the same turn completes with the uninterrupted run's answer, the
 * request reaches the session's server (the route was restored), a bash call whose result was
 * logged never runs twice and one in doubt runs twice only under `--in-doubt rerun` (a marker file
 * per call counts executions), and every request after resuming is rebuilt from the log alone.
 * 10 moments per store by default (8 evenly spread over the turn, 2 seeded); `HARNESS_STRESS=1` runs 100 per store.
 *
 * Also: the hint printed after a SQLite run stopped by SIGTERM resumes it exactly as printed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as OpenAiCompatible from "../../../src/Adapter/OpenAiCompatible.js"
import * as Json from "../../../src/Llm/Json.js"
import * as Message from "../../../src/Llm/Message.js"
import * as Reconstruct from "../../../src/Session/Reconstruct.js"
import * as Repair from "../../../src/Session/Repair.js"
import * as ResumePlan from "../../../src/Session/ResumePlan.js"
import * as Sqlite from "../../../src/Session/persistence/Sqlite.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import { SessionPersistence } from "../../../src/Session/SessionPersistence.js"
import * as Cli from "../../support/Cli.js"
import * as StepServer from "../../support/StepServer.js"

const TIMEOUT = process.env["HARNESS_STRESS"] === "1" ? 3_600_000 : 600_000
const stress = process.env["HARNESS_STRESS"] === "1"
const MOMENTS = stress ? 100 : 10
const ANSWER = "ALL DONE: the bash calls ran and out.txt is written."

const steps: ReadonlyArray<StepServer.Step> = [
  {
    _tag: "Call",
    id: "c1",
    name: "bash",
    text: "First I run a slow command. ",
    args: JSON.stringify({ command: "echo run >> runs/c1; sleep 0.4; echo bash-one-ok" })
  },
  {
    _tag: "Call",
    id: "c2",
    name: "write",
    text: "Now I write the file with some content that takes a while to stream. ",
    args: JSON.stringify({ file_path: "out.txt", content: "hello from the resumed turn\n".repeat(8) })
  },
  { _tag: "Call", id: "c3", name: "bash", text: "One more quick command. ", args: JSON.stringify({ command: "echo run >> runs/c3" }) },
  { _tag: "Text", text: ANSWER }
]

/** A small seeded PRNG (mulberry32): the same seed picks the same moments. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6D2B79F5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const eventLines = (stdout: string): number =>
  Cli.linesOf(stdout).filter((l) => l.startsWith("{") && !l.includes("\"type\":\"init\"")).length

/** The stored log of session `id` (JSONL file, or a read-only snapshot of the SQLite database). */
const logOf = (home: string, store: "jsonl" | "sqlite", id: string): Effect.Effect<ReadonlyArray<SessionEvent>> =>
  store === "jsonl"
    ? Effect.sync(() => Cli.readLog(Cli.sessionLogs(home).find((f) => f.includes(id))!).events)
    : Effect.flatMap(SessionPersistence, (p) => p.snapshot(Message.sessionId(id))).pipe(
      Effect.map((loaded) => loaded.events),
      Effect.provide(Sqlite.layer({ filename: join(home, "sessions.sqlite") })),
      Effect.scoped,
      Effect.orDie
    )

const executions = (work: string, call: string): number => {
  const file = join(work, "runs", call)
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l === "run").length : 0
}

const realResult = (events: ReadonlyArray<SessionEvent>, callId: string): boolean =>
  events.some((e) => e.type === "tool/result" && e.data.callId === callId && e.data.error?.code !== "INTERRUPTED")

const finalText = (events: ReadonlyArray<SessionEvent>): string | undefined => {
  const last = events.filter((e) => e.type === "assistant/message").at(-1)
  if (last?.type !== "assistant/message") return undefined
  return last.data.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
}

/** Every request the server got after `from` equals a request rebuilt from the final log (in order). */
const rebuiltProblems = (
  events: ReadonlyArray<SessionEvent>,
  sessionId: string,
  bodies: ReadonlyArray<unknown>,
  url: string
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const resolved = yield* Effect.orDie(OpenAiCompatible.resolve({ profile: "generic", baseUrl: `${url}/v1` }))
    const resumedAt = events.findIndex((e) => e.type === "turn/start" && e.data.trigger.kind === "resume")
    const seqFrom = events[resumedAt]?.seq ?? Number.MAX_SAFE_INTEGER
    const rebuilt = Reconstruct.reconstruct(events).flatMap((s) =>
      s.stepStartSeq > seqFrom && s.request !== undefined
        ? [Json.canonical(OpenAiCompatible.buildBody(resolved, { ...s.request, sessionId: Message.sessionId(sessionId) }) as Json.Json)]
        : []
    )
    const wanted = bodies.map((b) => Json.canonical(b as Json.Json))
    const problems: Array<string> = []
    let k = 0
    for (const w of wanted) {
      while (k < rebuilt.length && rebuilt[k] !== w) k++
      if (k === rebuilt.length) problems.push(`request not rebuilt from the log: ${w.slice(0, 300)}`)
    }
    return problems
  })

interface Outcome {
  readonly moment: number
  readonly killedAt: string
  readonly resumed: boolean
}

const runMoment = (
  store: "jsonl" | "sqlite",
  inDoubt: "report" | "rerun",
  killAfter: number
): Effect.Effect<Outcome> =>
  Effect.scoped(Effect.gen(function*() {
    const home = yield* Cli.tempDir("harness-kill-home-")
    const work = yield* Cli.tempDir("harness-kill-ws-")
    mkdirSync(join(work, "runs"))
    const server = yield* StepServer.make(steps, { frameDelayMs: 3 })
    const opts = { cwd: work, home, timeoutMs: 60_000 }
    const route = ["--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`]
    const child = yield* Cli.spawnCli(["run", "--json", "--yes", "--store", store, ...route, "do the job"], opts)
    yield* child.waitFor("stdout", (out) => eventLines(out) >= killAfter)
    yield* child.kill("SIGKILL")
    const killed = yield* child.result
    const init = JSON.parse(Cli.linesOf(killed.stdout)[0] ?? "{}") as { readonly session_id?: string }
    const id = init.session_id
    expect(id, killed.stderr).toBeDefined()
    const before = yield* logOf(home, store, id!)
    const logged = new Set(["c1", "c3"].filter((c) => realResult(before, c)))
    const requestsBefore = server.requests().length
    const resumed = yield* Cli.runCli(
      ["run", "--resume", id!, "--json", "--yes", "--store", store, "--in-doubt", inDoubt],
      opts
    )
    const lines = Cli.linesOf(resumed.stdout)
    const result = JSON.parse(lines.at(-1) ?? "{}") as { readonly subtype?: string; readonly result?: string }
    const plan = ResumePlan.plan([...before, ...Repair.repair(before)])
    if (plan._tag === "Nothing") {
      // killed before the prompt was logged (nothing to continue) or after the turn had ended
      expect(resumed.code, `moment ${killAfter}`).not.toBe(0)
      expect(resumed.stderr).toContain("no interrupted turn")
      expect(plan.reason).toMatch(/logged no prompt|was not interrupted|has no turn/)
      if (plan.reason.includes("was not interrupted")) expect(finalText(before)).toBe(ANSWER)
      return { moment: killAfter, killedAt: plan.reason, resumed: false }
    }
    expect(resumed.code, resumed.stderr).toBe(0)
    // the result line is the turn's: a turn killed after its answer was logged only needs closing, and its
    // result is still that answer (RunSummary.ofLastTurn)
    expect(result.result, resumed.stderr).toContain(ANSWER)
    // the route was restored: the resumed requests reached this server
    expect(server.requests().length).toBeGreaterThan(requestsBefore)
    // every bash call ran at least once; at most once unless it was in doubt and the policy re-ran it
    const events = yield* logOf(home, store, id!)
    for (const call of ["c1", "c3"]) {
      const n = executions(work, call)
      const where = `moment ${killAfter}: ${call}`
      // a logged result says it ran; a call in doubt that was only reported may have run or not
      if (realResult(events, call)) expect(n, where).toBeGreaterThanOrEqual(1)
      // a logged result never runs again; a call in doubt runs again only when the policy said so
      const rerun = events.some((e) =>
        e.type === "tool/in-doubt" && e.data.callId === call && e.data.decision === "rerun" && e.data.by === "policy"
      )
      if (logged.has(call) || !rerun) expect(n, `${where} ran twice`).toBeLessThanOrEqual(1)
      else expect(n, where).toBeLessThanOrEqual(2)
      if (rerun) expect(inDoubt).toBe("rerun")
    }
    // the write ran when its result is logged; a write in doubt that was only reported may not have
    if (realResult(events, "c2")) {
      expect(readFileSync(join(work, "out.txt"), "utf8")).toBe("hello from the resumed turn\n".repeat(8))
    } else {
      expect(events.some((e) => e.type === "tool/in-doubt" && e.data.callId === "c2" && e.data.decision === "report")).toBe(true)
    }
    {
      expect(finalText(events)).toBe(ANSWER)
      const starts = events.filter((e) => e.type === "turn/start").map((e) => e.type === "turn/start" && e.data.turn)
      expect(new Set(starts)).toEqual(new Set([1]))
      const ends = events.filter((e) => e.type === "turn/end")
      expect(ends.at(-1)?.type === "turn/end" && ends.at(-1)?.data.reason).toEqual({ kind: "completed" })
      for (const e of events) {
        if (e.type === "tool/in-doubt" && e.data.by === "policy") expect(e.data.decision).toBe(inDoubt)
      }
      expect(Cli.enclosureProblems(events)).toEqual([])
      const bodies = server.requests().slice(requestsBefore).map((r) => r.body)
      expect(yield* rebuiltProblems(events, id!, bodies, server.url)).toEqual([])
    }
    return {
      moment: killAfter,
      killedAt: `step ${plan.fromStep - 1}${plan.superseded ? " (partial)" : ""}${plan.calls.length > 0 ? " (calls open)" : ""}`,
      resumed: true
    }
  }))

describe("harness CLI end to end: a turn survives its process (DEC-16)", () => {
  it.live("the uninterrupted run: the baseline answer and event count", () =>
    Effect.scoped(Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-kill-home-")
      const work = yield* Cli.tempDir("harness-kill-ws-")
      mkdirSync(join(work, "runs"))
      const server = yield* StepServer.make(steps, { frameDelayMs: 1 })
      const route = ["--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`]
      const run = yield* Cli.runCli(["run", "--json", "--yes", ...route, "do the job"], { cwd: work, home })
      expect(run.code, run.stderr).toBe(0)
      const result = JSON.parse(Cli.linesOf(run.stdout).at(-1)!) as { readonly result?: string }
      expect(result.result).toContain(ANSWER)
      expect(executions(work, "c1")).toBe(1)
      expect(executions(work, "c3")).toBe(1)
      expect(eventLines(run.stdout)).toBeGreaterThan(30)
    })), TIMEOUT)

  for (const store of ["jsonl", "sqlite"] as const) {
    it.live(`kill matrix (${store}): SIGKILL at ${MOMENTS} seeded moments, then --resume completes the same turn`, () =>
      Effect.gen(function*() {
        const baselineRun = yield* Effect.scoped(Effect.gen(function*() {
          const home = yield* Cli.tempDir("harness-kill-home-")
          const work = yield* Cli.tempDir("harness-kill-ws-")
          mkdirSync(join(work, "runs"))
          const server = yield* StepServer.make(steps, { frameDelayMs: 1 })
          const route = ["--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`]
          return yield* Cli.runCli(["run", "--json", "--yes", "--store", store, ...route, "do the job"], { cwd: work, home })
        }))
        const baseline = eventLines(baselineRun.stdout)
        const random = prng(store === "jsonl" ? 29 : 2029)
        const outcomes: Array<Outcome> = []
        for (let i = 0; i < MOMENTS; i++) {
          // spread over the whole turn: the first moments are evenly spaced, then seeded
          const at = i < 8 ? 2 + Math.floor((i * (baseline - 3)) / 8) : 2 + Math.floor(random() * (baseline - 3))
          outcomes.push(yield* runMoment(store, i % 2 === 0 ? "report" : "rerun", at))
        }
        const resumed = outcomes.filter((o) => o.resumed).length
        process.stderr.write(
          `kill matrix ${store}: ${outcomes.length} moments, ${resumed} resumed, killed at ${
            [...new Set(outcomes.map((o) => o.killedAt))].join(", ")
          }\n`
        )
        expect(resumed).toBeGreaterThan(MOMENTS / 2)
      }), TIMEOUT)
  }

  it.live("a gateway session on SQLite stopped by SIGTERM: the printed hint resumes it as printed, on the session's route", () =>
    Effect.scoped(Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-hint-home-")
      const work = yield* Cli.tempDir("harness-hint-ws-")
      const answer = `${"a long streamed answer ".repeat(40)}THE END`
      const server = yield* StepServer.make([{ _tag: "Text", text: answer }], { frameDelayMs: 15 })
      const opts = { cwd: work, home, timeoutMs: 60_000 }
      const route = ["--provider", "openai-compatible", "--model", "m", "--base-url", `${server.url}/v1`]
      const child = yield* Cli.spawnCli(["run", "--store", "sqlite", ...route, "tell me a long story"], opts)
      yield* child.waitFor("stdout", (out) => out.includes("a long streamed answer a long"))
      yield* child.kill("SIGTERM")
      const stopped = yield* child.result
      expect(stopped.code, stopped.stderr).toBe(143)
      const hint = Cli.linesOf(stopped.stderr).find((l) => l.startsWith("resume with: "))
      expect(hint).toMatch(/^resume with: harness run --resume \S+ --store sqlite$/)
      const argv = hint!.slice("resume with: harness ".length).split(" ")
      const before = server.requests().length
      // exactly as printed: no route flags, no prompt
      const resumed = yield* Cli.runCli(argv, opts)
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stdout).toContain("THE END")
      const requests = server.requests().slice(before)
      expect(requests).toHaveLength(1)
      expect(requests[0]?.path).toBe("/v1/chat/completions")
      expect(requests[0]?.body).toMatchObject({ model: "m" })
      // a flag overrides the logged route with one notice
      const id = argv[2]!
      const other = yield* Cli.runCli(["run", "--resume", id, "--store", "sqlite", "--model", "other", "and then?"], opts)
      expect(other.code, other.stderr).toBe(0)
      expect(Cli.linesOf(other.stderr)).toContain("effect-harness: --model other overrides the session's model m")
      expect(server.requests().at(-1)?.body).toMatchObject({ model: "other" })
    })), TIMEOUT)
})
