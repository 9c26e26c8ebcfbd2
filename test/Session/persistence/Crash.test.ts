// vitest project: integration
/**
 * Crash recovery with real processes (D-4, D-5, DEC-4): a child appends through the real JSONL or
 * SQLite backend while holding the writer lock and is killed with SIGKILL; reopening must give
 * every event flushed before the kill, a repaired tail, a reclaimed lock and a log that accepts
 * new turns.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type * as Scope from "effect/Scope"
import type { SessionId } from "../../../src/Llm/Message.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import type { Service } from "../../../src/Session/SessionPersistence.js"
import * as Scenarios from "../../support/crashScenarios.js"
import { jsonlStorage, sqliteStorage, tempDir } from "../../support/persistenceSubjects.js"
import { LogBuilder } from "../../support/sessionLog.js"
import { bundleChild } from "../../support/ChildBundle.js"

const childSource = fileURLToPath(new URL("../../support/crash-child.ts", import.meta.url))
// the child is bundled once (esbuild) so each spawn starts in well under a second instead of
// paying tsx's transpile start-up; better-sqlite3 (native) stays external and resolves from
// the project's node_modules
const childBundle = path.join(
  fileURLToPath(new URL("../../../node_modules/.cache/effect-harness-tests/", import.meta.url)),
  `crash-child-${process.pid}.cjs`
)
const TIMEOUT = 60_000

beforeAll(async () => {
  await bundleChild(childSource, childBundle)
}, TIMEOUT)

afterAll(() => fsp.rm(childBundle, { force: true }))

type Backend = "jsonl" | "sqlite"

interface Child {
  readonly process: ChildProcess
  readonly lines: Array<string>
  readonly stderr: Array<string>
}

const spawnChild = (backend: Backend, location: string, scenario: Scenarios.Name) =>
  Effect.acquireRelease(
    Effect.sync((): Child => {
      const child = spawn(process.execPath, [childBundle, backend, location, scenario], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      const lines: Array<string> = []
      const stderr: Array<string> = []
      let pending = ""
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        pending += chunk
        const parts = pending.split("\n")
        pending = parts.pop()!
        lines.push(...parts)
        child.emit("line")
      })
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk))
      return { process: child, lines, stderr }
    }),
    (child) =>
      Effect.sync(() => {
        if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL")
      })
  )

/** Waits until the child printed a line satisfying `pred` (fails if it exits first). */
const waitFor = (child: Child, pred: (line: string) => boolean) =>
  Effect.callback<string>((resume) => {
    const check = () => {
      const hit = child.lines.find(pred)
      if (hit !== undefined) {
        cleanup()
        resume(Effect.succeed(hit))
      }
    }
    const onExit = () => {
      cleanup()
      resume(Effect.die(new Error(`child exited early: ${child.stderr.join("")}`)))
    }
    const cleanup = () => {
      child.process.off("line", check)
      child.process.off("exit", onExit)
    }
    child.process.on("line", check)
    child.process.on("exit", onExit)
    check()
    return Effect.sync(cleanup)
  })

const kill = (child: Child) =>
  Effect.callback<void>((resume) => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return resume(Effect.void)
    child.process.once("exit", () => resume(Effect.void))
    child.process.kill("SIGKILL")
  })

const storageOf = (backend: Backend) =>
  Effect.map(tempDir(`harness-crash-${backend}-`), (dir) =>
    backend === "jsonl" ? { location: dir, storage: jsonlStorage(dir) } : {
      location: path.join(dir, "sessions.sqlite"),
      storage: sqliteStorage(path.join(dir, "sessions.sqlite"))
    })

/** Asserts the writer lock of a live child in another process blocks this process. */
const expectLockedBy = (p: Service, id: SessionId, child: Child) =>
  Effect.gen(function*() {
    const e = yield* Effect.flip(Effect.scoped(p.lock(id)))
    expect(e.code).toBe("SESSION_LOCKED")
    expect(e.message).toContain(`pid ${child.process.pid}`)
    expect((yield* Effect.flip(p.load(id))).code).toBe("SESSION_LOCKED")
  })

/** Reopens after the kill: lock reclaimed, load, then a new turn is accepted and reloads. */
const reopen = (open: Effect.Effect<Service, unknown, Scope.Scope>, id: SessionId) =>
  Effect.gen(function*() {
    const p = yield* open
    return yield* Effect.scoped(Effect.gen(function*() {
      yield* p.lock(id)
      const loaded = yield* p.load(id)
      const next = new LogBuilder(loaded.events.at(-1)!.time + 1, loaded.events).completeTurn("after the crash")
      yield* p.append(id, next.from(loaded.events.length))
      const again = yield* (yield* open).load(id)
      expect(again.events).toEqual(next.events)
      expect(again.repaired).toEqual([])
      expect(again.truncated).toBe(0)
      return loaded
    }))
  })

const closers = (events: ReadonlyArray<SessionEvent>) => events.map((e) => [e.type, e.seq, e.data] as const)

describe.each(["jsonl", "sqlite"] as const)("crash recovery (%s, real processes, SIGKILL)", (backend) => {
  it.live(`[D-4,S-23,DEC-4] killed mid-stream after some assistant/chunk lines → every flushed event, step/end + turn/end interrupted`, () =>
    Effect.scoped(Effect.gen(function*() {
      const { location, storage } = yield* storageOf(backend)
      const scenario = Scenarios.make("mid-stream")
      const child = yield* spawnChild(backend, location, "mid-stream")
      yield* waitFor(child, (l) => l.startsWith("READY"))
      yield* expectLockedBy(yield* storage.open, scenario.header.id, child)
      yield* kill(child)
      const loaded = yield* reopen(storage.open, scenario.header.id)
      const flushed = Scenarios.flushed(scenario)
      const n = flushed.length
      expect(loaded.events.slice(0, n)).toEqual(flushed)
      expect(loaded.truncated).toBe(0)
      expect(closers(loaded.repaired)).toEqual([
        ["step/end", n, { turn: 1, step: 0 }],
        ["turn/end", n + 1, { turn: 1, reason: { kind: "interrupted" } }]
      ])
    })), TIMEOUT)

  it.live(`[D-4,S-23,DEC-7] killed mid-tool after a tool/call without result → INTERRUPTED result, step/end, turn/end`, () =>
    Effect.scoped(Effect.gen(function*() {
      const { location, storage } = yield* storageOf(backend)
      const scenario = Scenarios.make("mid-tool")
      const child = yield* spawnChild(backend, location, "mid-tool")
      yield* waitFor(child, (l) => l.startsWith("READY"))
      yield* kill(child)
      const loaded = yield* reopen(storage.open, scenario.header.id)
      const flushed = Scenarios.flushed(scenario)
      const n = flushed.length
      expect(loaded.events.slice(0, n)).toEqual(flushed)
      const [result, stepEnd, turnEnd] = loaded.repaired
      expect(result).toMatchObject({
        type: "tool/result",
        seq: n,
        data: { callId: "call_running", isError: true, error: { name: "InterruptedError", code: "INTERRUPTED" } },
        surfaceOp: "append",
        sourceEventSeqs: [n - 1]
      })
      expect(closers([stepEnd!, turnEnd!])).toEqual([
        ["step/end", n + 1, { turn: 1, step: 0 }],
        ["turn/end", n + 2, { turn: 1, reason: { kind: "interrupted" } }]
      ])
      // the answered call gets no synthetic result
      expect(loaded.repaired.filter((e) => e.type === "tool/result").length).toBe(1)
    })), TIMEOUT)

  it.live(`[D-5] killed while appending whole turns in a loop → a loadable, balanced prefix with every committed batch`, () =>
    Effect.scoped(Effect.gen(function*() {
      const { location, storage } = yield* storageOf(backend)
      const scenario = Scenarios.make("endless")
      const child = yield* spawnChild(backend, location, "endless")
      yield* waitFor(child, (l) => l.startsWith("COMMITTED") && Number(l.split(" ")[1]) > 3_000)
      yield* kill(child)
      const committed = Math.max(...child.lines.filter((l) => l.startsWith("COMMITTED")).map((l) => Number(l.split(" ")[1])))
      const loaded = yield* reopen(storage.open, scenario.header.id)
      const kept = loaded.events.length - loaded.repaired.length
      expect(kept).toBeGreaterThanOrEqual(committed)
      // the kept prefix is exactly what the child wrote
      let expected: ReadonlyArray<SessionEvent> = Scenarios.flushed(scenario)
      while (expected.length < kept) expected = expected.concat(Scenarios.nextTurn(expected))
      expect(loaded.events.slice(0, kept)).toEqual(expected.slice(0, kept))
      expect(loaded.events.at(-1)!.type).toBe("turn/end")
    })), TIMEOUT)
})

describe("crash recovery (jsonl, torn line)", () => {
  it.live("[D-5,D-9] killed in the middle of writing a line → the torn line is truncated, the tail repaired", () =>
    Effect.scoped(Effect.gen(function*() {
      const { location, storage } = yield* storageOf("jsonl")
      const scenario = Scenarios.make("mid-line")
      const child = yield* spawnChild("jsonl", location, "mid-line")
      yield* waitFor(child, (l) => l.startsWith("READY"))
      yield* kill(child)
      const loaded = yield* reopen(storage.open, scenario.header.id)
      const flushed = Scenarios.flushed(scenario)
      const n = flushed.length
      expect(loaded.truncated).toBe(1)
      expect(loaded.events.slice(0, n)).toEqual(flushed)
      expect(closers(loaded.repaired)).toEqual([
        ["step/end", n, { turn: 1, step: 0 }],
        ["turn/end", n + 1, { turn: 1, reason: { kind: "interrupted" } }]
      ])
    })), TIMEOUT)
})
