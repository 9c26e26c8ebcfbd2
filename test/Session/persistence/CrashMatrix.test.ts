// vitest project: integration
/**
 * The write-through crash matrix (DEC-11, issue 10): a real child process runs the store's write
 * path (`test/support/durable-child.ts`: turns streamed in chunk batches, tool calls, step and
 * turn ends, flushes; every event printed as a JSON line when it is published) and is killed
 * with SIGKILL at a seeded random moment — right after it starts (the first, atomic write), or
 * after a random number of printed events (streaming, tool execution, the fsync of a step or turn
 * end, long logs). For every kill, on JSONL and SQLite:
 * - printed ⇒ written: every event the child printed is on disk, byte-for-byte the same event;
 * - the reopened log is balanced (repaired tail: `INTERRUPTED` results, `step/end`, `turn/end`);
 * - no orphaned `.tmp` survives the next open or list;
 * - the next turn succeeds and reloads.
 * Default: 16 kills per backend; `HARNESS_STRESS=1`: 200 per backend. A failure names its seed
 * (`HARNESS_CRASH_SEED=<seed>` replays just that kill).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import * as Sqlite from "../../../src/Session/persistence/Sqlite.js"
import * as Repair from "../../../src/Session/Repair.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import type { SessionPersistence } from "../../../src/Session/SessionPersistence.js"
import * as SessionStore from "../../../src/Session/SessionStore.js"
import { asInput } from "../../support/sessionInputs.js"
import { LogBuilder } from "../../support/sessionLog.js"
import { bundleChild } from "../../support/ChildBundle.js"

/** a child process misbehaved (exited early, failed a check) */
class ChildFailed extends Data.TaggedError("ChildFailed")<{ readonly message: string; readonly cause?: unknown }> {}

const SESSION_ID = "durable-matrix"
const STRESS = process.env["HARNESS_STRESS"] === "1"
const KILLS = STRESS ? 200 : 16
const ONLY = process.env["HARNESS_CRASH_SEED"]
const TIMEOUT = STRESS ? 1_800_000 : 120_000

const childSource = fileURLToPath(new URL("../../support/durable-child.ts", import.meta.url))
const childBundle = path.join(
  fileURLToPath(new URL("../../../node_modules/.cache/effect-harness-tests/", import.meta.url)),
  `durable-child-${process.pid}.cjs`
)

beforeAll(async () => {
  await bundleChild(childSource, childBundle)
}, 60_000)

afterAll(() => fsp.rm(childBundle, { force: true }))

type Backend = "jsonl" | "sqlite"

/** A kill plan: after `afterLines` printed events, or `delayMs` after READY when `afterLines` is 0. */
interface Plan {
  readonly seed: number
  readonly afterLines: number
  readonly delayMs: number
}

const planOf = (seed: number): Plan => {
  // a cheap hash of the seed picks the moment
  let h = Math.imul(seed ^ 0x9E3779B9, 0x85EBCA6B) >>> 0
  const next = () => (h = (Math.imul(h ^ (h >>> 13), 0xC2B2AE35) + 0x6B43A9B5) >>> 0)
  const pick = next() % 8
  // 1 in 4: the first moments (first write, first fsync); else anywhere in the first events
  // (a few turns: streaming, tool runs, step and turn ends; the stress run goes further)
  const span = STRESS ? 1200 : 300
  return pick < 2 ? { seed, afterLines: 0, delayMs: next() % 25 } : { seed, afterLines: 1 + (next() % span), delayMs: 0 }
}

interface Killed {
  readonly printed: ReadonlyArray<SessionEvent>
  readonly stderr: string
}

/** Runs the child until the plan's moment, kills it with SIGKILL, returns what it printed. */
const runAndKill = (backend: Backend, location: string, plan: Plan) =>
  Effect.callback<Killed, ChildFailed>((resume) => {
    const child = spawn(process.execPath, [childBundle, backend, location, String(plan.seed)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    const lines: Array<string> = []
    let pending = ""
    let stderr = ""
    let events = 0
    let killed = false
    const kill = () => {
      if (killed) return
      killed = true
      child.kill("SIGKILL")
    }
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      pending += chunk
      const parts = pending.split("\n")
      pending = parts.pop()!
      for (const line of parts) {
        lines.push(line)
        if (line === "READY") {
          if (plan.afterLines === 0) setTimeout(kill, plan.delayMs)
        } else if (++events >= plan.afterLines && plan.afterLines > 0) kill()
      }
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL") {
        return resume(Effect.fail(new ChildFailed({ message: `child exited on its own (code ${code}, signal ${signal}): ${stderr}` })))
      }
      // a line cut by the kill was never printed whole: it does not count
      const printed = lines.filter((l) => l !== "READY").map((l) => JSON.parse(l) as SessionEvent)
      resume(Effect.succeed({ printed, stderr }))
    })
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  })

const persistenceOf = (backend: Backend, location: string): Layer.Layer<SessionPersistence, unknown> =>
  backend === "jsonl" ? Jsonl.layer({ root: location }) : Sqlite.layer({ filename: location })

const listTmp = (dir: string): Promise<Array<string>> =>
  fsp.readdir(dir, { recursive: true }).then((names) => names.filter((n) => String(n).endsWith(".tmp")).map(String))

/** Reopens the killed session as a writer, checks it, runs the next turn; returns a failure or undefined. */
const verify = (backend: Backend, location: string, dir: string, killed: Killed) =>
  Effect.gen(function*() {
    const store = yield* SessionStore.SessionStore
    // `list` recovers an orphaned first write (JSONL) before anything else looks
    const listed = yield* store.stored()
    if (backend === "jsonl") expect(yield* Effect.promise(() => listTmp(dir))).toEqual([])
    if (listed.length === 0) {
      // never materialized: then nothing may have been printed
      expect(killed.printed).toEqual([])
      return
    }
    const session = yield* store.open(SESSION_ID)
    const events = yield* session.events
    // printed ⇒ written: every printed event is stored, identical
    for (const e of killed.printed) expect(events[e.seq]).toEqual(e)
    // balanced: nothing left to repair, the last event closes a turn, every turn closed
    expect(Repair.repair(events)).toEqual([])
    expect(events.at(-1)?.type).toBe("turn/end")
    const starts = events.filter((e) => e.type === "turn/start").length
    expect(events.filter((e) => e.type === "turn/end").length).toBe(starts)
    // the next turn works
    const next = new LogBuilder(events.at(-1)!.time + 1, events).completeTurn("after the crash", { tool: true, pieces: ["a", "b"] })
    for (const e of next.from(events.length)) yield* session.append(asInput(e))
    yield* store.flush(session.id)
    const after = yield* store.snapshot(SESSION_ID)
    expect(after.repaired).toEqual([])
    expect(after.events.length).toBe(next.events.length)
    expect(after.events.slice(0, events.length)).toEqual(events)
  }).pipe(
    Effect.scoped,
    Effect.provide(SessionStore.layer),
    Effect.provide(Layer.orDie(persistenceOf(backend, location))),
    Effect.provide(NodeFileSystem.layer)
  )

const seeds = (backend: Backend): ReadonlyArray<number> => {
  if (ONLY !== undefined) return [Number(ONLY)]
  const base = backend === "jsonl" ? 1000 : 5000
  return Array.from({ length: KILLS }, (_, i) => base + i)
}

describe.each(["jsonl", "sqlite"] as const)("[DEC-11] crash matrix: SIGKILL at seeded random moments (%s)", (backend) => {
  it.live(`printed ⇒ written, balanced after reopen, next turn works (${KILLS} kills)`, () =>
    Effect.gen(function*() {
      let phases = { first: 0, later: 0 }
      for (const seed of seeds(backend)) {
        const plan = planOf(seed)
        const dir = yield* Effect.promise(() => fsp.mkdtemp(path.join(process.env["TMPDIR"] ?? "/tmp", `harness-matrix-${backend}-`)))
        const location = backend === "jsonl" ? dir : path.join(dir, "sessions.sqlite")
        const outcome = yield* Effect.result(
          Effect.flatMap(runAndKill(backend, location, plan), (killed) => verify(backend, location, dir, killed)).pipe(
            Effect.catchDefect((d) => Effect.fail(new ChildFailed({ message: d instanceof Error ? d.message : String(d), cause: d })))
          )
        )
        yield* Effect.promise(() => fsp.rm(dir, { recursive: true, force: true }))
        if (outcome._tag === "Failure") {
          const e = outcome.failure
          throw new Error(
            `crash matrix (${backend}) failed for seed ${seed} (kill ${JSON.stringify(plan)}; replay with HARNESS_CRASH_SEED=${seed}): ${e.message}`,
            { cause: e }
          )
        }
        phases = plan.afterLines === 0 ? { ...phases, first: phases.first + 1 } : { ...phases, later: phases.later + 1 }
      }
      // the default run covers both the first moments and later ones
      if (ONLY === undefined) expect(phases.first > 0 && phases.later > 0).toBe(true)
    }), TIMEOUT)
})
