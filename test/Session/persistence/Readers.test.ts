// vitest project: integration
/**
 * Readers never need the lock nor change the file (DEC-11, issue 10), and every file the store
 * creates is private (issue 10 §7).
 *
 * - A writer child (`test/support/durable-child.ts`, real write path) holds a session open and is
 *   paused mid-turn (SIGSTOP, so the bytes cannot move); the bundled CLI's `sessions show`,
 *   `sessions list` and `sessions fork` of that session exit 0 while the writer holds the lock,
 *   show the open turn's prompt and partial answer, and leave the log byte-identical.
 * - File modes: JSONL log, lock, directories; SQLite database, `-wal`, `-shm`.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import * as Sqlite from "../../../src/Session/persistence/Sqlite.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import * as SessionStore from "../../../src/Session/SessionStore.js"
import { runCli, tempDir } from "../../support/Cli.js"
import { turnEnd, turnStart, userMessage } from "../../support/sessionInputs.js"
import { bundleChild } from "../../support/ChildBundle.js"

/** a child process misbehaved (exited early, failed a check) */
class ChildFailed extends Data.TaggedError("ChildFailed")<{ readonly message: string; readonly cause?: unknown }> {}

const SESSION_ID = "durable-matrix"
const childSource = fileURLToPath(new URL("../../support/durable-child.ts", import.meta.url))
const childBundle = path.join(
  fileURLToPath(new URL("../../../node_modules/.cache/effect-harness-tests/", import.meta.url)),
  `durable-reader-child-${process.pid}.cjs`
)

beforeAll(async () => {
  await bundleChild(childSource, childBundle)
}, 60_000)

afterAll(() => fs.promises.rm(childBundle, { force: true }))

/** Starts a writer child, waits until it printed `events` events inside an open turn, then SIGSTOPs it. */
const pausedWriter = (backend: "jsonl" | "sqlite", location: string, events: number) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly pid: number; readonly printed: Array<SessionEvent> }, ChildFailed>((resume) => {
      const child = spawn(process.execPath, [childBundle, backend, location, "42"], { stdio: ["ignore", "pipe", "pipe"] })
      const printed: Array<SessionEvent> = []
      let pending = ""
      let stderr = ""
      let done = false
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        pending += chunk
        const parts = pending.split("\n")
        pending = parts.pop()!
        for (const line of parts) {
          if (done || line === "READY") continue
          const event = JSON.parse(line) as SessionEvent
          printed.push(event)
          // pause inside a turn, right after a streamed chunk: a partial answer is on disk
          if (printed.length >= events && event.type === "assistant/chunk" && printed.some((e) => e.type === "turn/end")) {
            done = true
            child.kill("SIGSTOP")
            resume(Effect.succeed({ pid: child.pid!, printed }))
          }
        }
      })
      child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c))
      child.on("exit", (code, signal) => {
        if (!done) resume(Effect.fail(new ChildFailed({ message: `writer exited early (${code ?? signal}): ${stderr}` })))
      })
    }),
    ({ pid }) =>
      Effect.sync(() => {
        try {
          process.kill(pid, "SIGKILL")
          process.kill(pid, "SIGCONT")
        } catch {
          // already gone
        }
      })
  )

const textOf = (events: ReadonlyArray<SessionEvent>): string =>
  events.flatMap((e) =>
    e.type === "assistant/chunk" && e.data.chunk.type === "text-delta" ? [e.data.chunk.text] : []
  ).join("")

describe("[DEC-11] readers of a session held by a running writer", () => {
  it.live("sessions show | list | fork work without the lock, show the open turn, and leave the log byte-identical (jsonl)", () =>
    Effect.gen(function*() {
      const home = yield* tempDir("harness-readers-")
      const root = path.join(home, "sessions")
      const writer = yield* pausedWriter("jsonl", root, 40)
      const bucket = path.join(root, Jsonl.bucketOf("/work/durable"))
      const log = path.join(bucket, `${SESSION_ID}.jsonl`)
      const lock = path.join(root, "locks", `${SESSION_ID}.lock`)
      const before = fs.readFileSync(log)
      const lockBefore = fs.readFileSync(lock)

      const show = yield* runCli(["sessions", "show", SESSION_ID], { cwd: home, home })
      expect(show.stderr).toBe("")
      expect(show.code).toBe(0)
      expect(show.stdout).toContain(`session ${SESSION_ID}`)
      // the open turn's prompt and the partial answer streamed so far are visible
      let start = writer.printed.length - 1
      while (writer.printed[start]!.type !== "turn/start") start--
      const openTurn = writer.printed.slice(start)
      const prompt = openTurn.find((e) => e.type === "user/message")!
      const promptText = (prompt.data as { content: ReadonlyArray<{ text: string }> }).content[0]!.text
      expect(show.stdout).toContain(promptText.slice(0, 20))
      expect(show.stdout).toContain(textOf(openTurn).trim().slice(0, 12))

      const list = yield* runCli(["sessions", "list"], { cwd: home, home })
      expect(list.code).toBe(0)
      expect(list.stdout).toContain(SESSION_ID)

      const fork = yield* runCli(["sessions", "fork", SESSION_ID], { cwd: home, home })
      expect(fork.stderr).toBe("")
      expect(fork.code).toBe(0)
      const childId = fork.stdout.trim()
      expect(childId.length).toBeGreaterThan(0)
      // the child holds the parent's completed turns
      const childLog = fs.readdirSync(bucket).find((n) => n.startsWith(childId))!
      const childLines = fs.readFileSync(path.join(bucket, childLog), "utf8").trim().split("\n")
      const lastEnd = writer.printed.filter((e) => e.type === "turn/end").at(-1)!
      expect(childLines.length - 1).toBe(lastEnd.seq + 1)

      // the writer's log and lock are untouched
      expect(fs.readFileSync(log).equals(before)).toBe(true)
      expect(fs.readFileSync(lock).equals(lockBefore)).toBe(true)
      expect(fs.readdirSync(bucket).filter((n) => n.endsWith(".tmp"))).toEqual([])
    }), 120_000)

  it.live("a store snapshot of a session held by a writer in another process (sqlite): no lock needed, nothing written", () =>
    Effect.gen(function*() {
      const home = yield* tempDir("harness-readers-sqlite-")
      const file = path.join(home, "sessions.sqlite")
      const writer = yield* pausedWriter("sqlite", file, 30)
      const bytes = () => [file, `${file}-wal`].map((f) => (fs.existsSync(f) ? fs.readFileSync(f) : Buffer.alloc(0)))
      const before = bytes()
      const snap = yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.snapshot(SESSION_ID)).pipe(
        Effect.provide(SessionStore.layer),
        Effect.provide(Layer.orDie(Sqlite.layer({ filename: file })))
      )
      const stored = snap.events.slice(0, snap.events.length - snap.repaired.length)
      for (const e of writer.printed) expect(stored[e.seq]).toEqual(e)
      expect(snap.repaired.at(-1)?.type).toBe("turn/end")
      const after = bytes()
      expect(after[0]!.equals(before[0]!)).toBe(true)
      expect(after[1]!.equals(before[1]!)).toBe(true)
    }), 120_000)
})

const mode = (file: string) => fs.statSync(file).mode & 0o777

describe("[issue 10 §7] every file the store creates is private", () => {
  it.live("JSONL: directories 0700, log and lock 0600", () =>
    Effect.gen(function*() {
      const home = yield* tempDir("harness-modes-")
      const root = path.join(home, "deep", "sessions")
      yield* Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        const s = yield* store.create({ id: "private", cwd: "/work/modes" })
        for (const input of [turnStart(1), userMessage("secret"), turnEnd(1)]) yield* s.append(input)
        const bucket = path.join(root, Jsonl.bucketOf("/work/modes"))
        for (const dir of [path.join(home, "deep"), root, bucket, path.join(root, "locks")]) expect([dir, mode(dir)]).toEqual([dir, 0o700])
        for (const f of [path.join(bucket, "private.jsonl"), path.join(root, "locks", "private.lock")]) expect([f, mode(f)]).toEqual([f, 0o600])
      }).pipe(Effect.scoped, Effect.provide(SessionStore.layer), Effect.provide(Layer.orDie(Jsonl.layer({ root }))))
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("SQLite: directory 0700, database, -wal and -shm 0600", () =>
    Effect.gen(function*() {
      const home = yield* tempDir("harness-modes-sqlite-")
      const file = path.join(home, "data", "sessions.sqlite")
      yield* Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        const s = yield* store.create({ id: "private", cwd: "/work/modes" })
        for (const input of [turnStart(1), userMessage("secret")]) yield* s.append(input)
        expect(mode(path.dirname(file))).toBe(0o700)
        for (const f of [file, `${file}-wal`, `${file}-shm`]) expect([f, mode(f)]).toEqual([f, 0o600])
      }).pipe(Effect.scoped, Effect.provide(SessionStore.layer), Effect.provide(Layer.orDie(Sqlite.layer({ filename: file }))))
    }))
})
