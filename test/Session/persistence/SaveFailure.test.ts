// vitest project: integration
/**
 * Save failures are loud (DEC-11, issue 10): a full disk (a 200 KB tmpfs mounted by the test when
 * running as root) and a read-only file system (the same tmpfs remounted read-only) make the
 * append fail `PERSISTENCE_FAILED` naming the file and the OS error; the log on disk stays valid
 * (no torn line), the in-memory session keeps the unsaved events, and the next flush point writes
 * them once space (or write access) returns. Without mount permission the real-disk cases are
 * skipped with a notice; the loop case (a save failure reaches the turn outcome typed) always runs.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Scripted from "../../../src/Adapter/Scripted.js"
import * as Hooks from "../../../src/Loop/Hooks.js"
import * as TestKit from "../../../src/Loop/TestKit.js"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import * as Memory from "../../../src/Session/persistence/Memory.js"
import * as Sqlite from "../../../src/Session/persistence/Sqlite.js"
import * as SessionError from "../../../src/Session/SessionError.js"
import type { AppendInput } from "../../../src/Session/SessionEvent.js"
import * as SessionPersistence from "../../../src/Session/SessionPersistence.js"
import * as SessionStore from "../../../src/Session/SessionStore.js"
import { turnEnd, turnStart, userMessage } from "../../support/sessionInputs.js"

/** Mounts a 200 KB tmpfs on a fresh directory; `undefined` (with the reason) when not permitted. */
const mountTmpfs = (): { readonly dir?: string; readonly why?: string } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-tinyfs-"))
  if (process.getuid?.() !== 0) return { why: "not running as root" }
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=200k,mode=0700", "tmpfs", dir], { stdio: "pipe" })
    return { dir }
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true })
    return { why: `mount not permitted (${e instanceof Error ? e.message.split("\n")[0] : String(e)})` }
  }
}

const mounted = mountTmpfs()
const tiny = mounted.dir

afterAll(() => {
  if (tiny === undefined) return
  try {
    execFileSync("umount", [tiny], { stdio: "pipe" })
  } finally {
    fs.rmSync(tiny, { recursive: true, force: true })
  }
})

const remount = (mode: "ro" | "rw") => execFileSync("mount", ["-o", `remount,${mode}`, tiny!], { stdio: "pipe" })

/** A completed turn whose prompt is `size` characters. */
const bigTurn = (turn: number, size: number): ReadonlyArray<AppendInput> => [
  turnStart(turn),
  userMessage(`${turn}:${"x".repeat(size)}`),
  turnEnd(turn)
]

type Backend = "jsonl" | "sqlite"

const persistenceOf = (backend: Backend, dir: string): Layer.Layer<SessionPersistence.SessionPersistence> =>
  Layer.orDie(backend === "jsonl" ? Jsonl.layer({ root: path.join(dir, "sessions") }) : Sqlite.layer({ filename: path.join(dir, "sessions.sqlite") }))

/** A fresh reader's view of the stored log (no lock, nothing written). */
const storedView = (backend: Backend, dir: string, id: string) =>
  Effect.flatMap(SessionPersistence.SessionPersistence, (p) => p.snapshot(id as never)).pipe(
    Effect.provide(persistenceOf(backend, dir)),
    Effect.scoped
  )

const fill = (dir: string, name: string): string => {
  // occupy what is left but ~24 KB with a filler file (tmpfs: whole pages)
  const file = path.join(dir, name)
  const free = Number(execFileSync("df", ["-B1", "--output=avail", dir]).toString().trim().split("\n")[1])
  fs.writeFileSync(file, Buffer.alloc(Math.max(0, free - 24 * 1024)))
  return file
}

describe.each(["jsonl", "sqlite"] as const)("[DEC-11] save failures on a real file system (%s)", (backend) => {
  it.live("disk full (tmpfs) → PERSISTENCE_FAILED ENOSPC naming the file; the log stays valid; retried at the next flush once space returns", () => {
    if (tiny === undefined) {
      console.warn(`[notice] skipped: the tiny tmpfs could not be mounted: ${mounted.why}`)
      return Effect.void
    }
    const dir = fs.mkdtempSync(path.join(tiny, `full-${backend}-`))
    return Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const session = yield* store.create({ id: `full-${backend}`, cwd: "/work/full" })
      yield* Effect.forEach(bigTurn(1, 2000), (i) => session.append(i))
      const filler = fill(tiny, `filler-${backend}`)
      let failure: SessionError.SessionError | undefined
      for (let turn = 2; turn < 400 && failure === undefined; turn++) {
        for (const input of bigTurn(turn, 3000)) {
          const r = yield* Effect.result(session.append(input))
          if (r._tag === "Failure") {
            failure = r.failure
            break
          }
        }
      }
      expect(failure?.code).toBe("PERSISTENCE_FAILED")
      expect(failure?.osCode).toBe("ENOSPC")
      expect(failure?.file).toBeDefined()
      expect(failure?.message).toContain(failure!.file!)
      expect(failure?.message).toContain("no space left on device")
      expect(failure?.file!.startsWith(dir)).toBe(true)
      const unsaved = yield* store.pending(session.id)
      expect(unsaved).toBeGreaterThan(0)
      // the log on disk is valid: a prefix of the session, no torn record
      const all = yield* session.events
      const view = yield* storedView(backend, dir, session.id)
      expect(view.truncated).toBe(0)
      const stored = view.events.slice(0, view.events.length - view.repaired.length)
      expect(stored).toEqual(all.slice(0, all.length - unsaved))
      // still full: the flush point fails loudly again, nothing lost
      expect((yield* Effect.flip(store.flush(session.id))).code).toBe("PERSISTENCE_FAILED")
      // space returns: the next flush point writes the unsaved events
      fs.rmSync(filler)
      yield* store.flush(session.id)
      expect(yield* store.pending(session.id)).toBe(0)
      const after = yield* storedView(backend, dir, session.id)
      expect(after.events.slice(0, after.events.length - after.repaired.length)).toEqual(yield* session.events)
    }).pipe(Effect.scoped, Effect.provide(SessionStore.layer), Effect.provide(persistenceOf(backend, dir)))
  }, 60_000)

  it.live("read-only file system → PERSISTENCE_FAILED EROFS naming the file; retried once writable again", () => {
    if (backend === "sqlite") {
      // an open database holds its files open for writing, so the tmpfs cannot be remounted read-only
      console.warn("[notice] skipped for sqlite: a live database cannot be remounted read-only (EROFS mapping: SaveFailure)")
      return Effect.void
    }
    if (tiny === undefined) {
      console.warn(`[notice] skipped: the tiny tmpfs could not be mounted: ${mounted.why}`)
      return Effect.void
    }
    const dir = fs.mkdtempSync(path.join(tiny, `ro-${backend}-`))
    return Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const session = yield* store.create({ id: `ro-${backend}`, cwd: "/work/ro" })
      // read-only before the first write (nothing is open for writing, so the remount is allowed);
      // the bucket exists, so the failing call is the write of the log itself
      fs.mkdirSync(path.join(dir, "sessions", Jsonl.bucketOf("/work/ro")), { recursive: true })
      remount("ro")
      const error = yield* Effect.ensuring(
        Effect.flip(session.append(turnStart(1))),
        Effect.sync(() => remount("rw"))
      )
      expect(error.code).toBe("PERSISTENCE_FAILED")
      expect(error.osCode).toBe("EROFS")
      expect(error.file!.startsWith(dir)).toBe(true)
      expect(error.message).toContain(error.file!)
      expect(yield* store.pending(session.id)).toBe(1)
      yield* store.flush(session.id)
      yield* Effect.forEach(bigTurn(1, 100).slice(1), (i) => session.append(i))
      expect(yield* store.pending(session.id)).toBe(0)
      const view = yield* storedView(backend, dir, session.id)
      expect(view.events.slice(0, view.events.length - view.repaired.length)).toEqual(yield* session.events)
    }).pipe(Effect.scoped, Effect.provide(SessionStore.layer), Effect.provide(persistenceOf(backend, dir)))
  }, 60_000)
})

describe("[DEC-11] a save failure reaches the turn outcome, typed", () => {
  it.effect("PERSISTENCE_FAILED during a turn: the turn ends error{code: PERSISTENCE_FAILED}, one agent error carries the SessionError; the next turn works", () =>
    Effect.gen(function*() {
      const failing = yield* Ref.make(false)
      const persistence = Layer.effect(
        SessionPersistence.SessionPersistence,
        Effect.map(Memory.make(), (inner): SessionPersistence.Service => ({
          ...inner,
          append: (id, events, options) =>
            Effect.flatMap(Ref.get(failing), (fail) =>
              fail && events.some((e) => e.type === "assistant/chunk")
                ? Effect.tapError(
                  Effect.fail(SessionError.make("PERSISTENCE_FAILED", "could not save the session: append to /x.jsonl failed: no space left on device (ENOSPC)", {
                    sessionId: id,
                    file: "/x.jsonl",
                    osCode: "ENOSPC"
                  })),
                  () => Ref.set(failing, false)
                )
                : inner.append(id, events, options))
        }))
      )
      yield* Effect.gen(function*() {
        const hooks = yield* Hooks.LoopHooks
        const errors = yield* Ref.make<ReadonlyArray<Hooks.AgentFailure>>([])
        yield* hooks.error.register((i) => Ref.update(errors, (e) => [...e, i.error]))
        const t = yield* TestKit.agent()
        yield* Ref.set(failing, true)
        yield* t.prompt("first")
        const reported = yield* Ref.get(errors)
        expect(reported).toHaveLength(1)
        expect(reported[0]).toMatchObject({ code: "PERSISTENCE_FAILED" })
        expect(reported[0]!.cause).toBeInstanceOf(SessionError.SessionError)
        expect((reported[0]!.cause as SessionError.SessionError).file).toBe("/x.jsonl")
        expect((yield* t.turnEnds)[0]).toMatchObject({ kind: "error", code: "PERSISTENCE_FAILED" })
        yield* t.prompt("second")
        expect((yield* t.turnEnds)[1]).toEqual({ kind: "completed" })
      }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("one"), Scripted.text("two")], persistence })))
    }))
})
