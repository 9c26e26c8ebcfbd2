import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as PlatformError from "effect/PlatformError"
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { SessionId } from "../../../src/Llm/Message.js"
import * as IdEncoding from "../../../src/Session/persistence/IdEncoding.js"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import type { SessionError } from "../../../src/Session/SessionError.js"
import type { SessionEvent } from "../../../src/Session/SessionEvent.js"
import { jsonlFile, tempDir, writeJsonl } from "../../support/persistenceSubjects.js"
import { header, LogBuilder } from "../../support/sessionLog.js"

const id = (s: string) => s as SessionId
const open = (root: string) => Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer))
const read = (file: string) => Effect.promise(() => fsp.readFile(file, "utf8"))
const failure = <A>(effect: Effect.Effect<A, SessionError>) =>
  Effect.map(Effect.flip(effect), (e) => e)
const lines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>)
const deadPid = (): number => {
  const r = spawnSync(process.execPath, ["-e", ""])
  return r.pid!
}

describe("Jsonl backend", () => {
  it.live("[D-9,DEC-9] layout: <root>/cwd-<12 hex>/<encoded id>.jsonl, header line then one event per line, no temp files", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const p = yield* open(root)
      const h = header("../evil/id~é", "/work/proj")
      const digest = crypto.createHash("sha256").update("/work/proj").digest("hex").slice(0, 12)
      const expected = path.join(root, `cwd-${digest}`, `${Result.getOrThrow(IdEncoding.encode(h.id))}.jsonl`)
      expect(p.locate(h)).toEqual({ kind: "jsonl", path: expected })
      expect(p.locate(header("x"))!.path).toBe(path.join(root, "_no-cwd", "x.jsonl"))
      yield* p.create(h)
      const b = new LogBuilder().completeTurn("hi")
      yield* p.append(h.id, b.events)
      const text = yield* read(expected)
      expect(text.endsWith("\n")).toBe(true)
      const [first, ...rest] = lines(text)
      expect(first).toEqual({ type: "session", version: 0, id: h.id, createdAt: h.createdAt, cwd: "/work/proj" })
      expect(rest).toEqual(b.events)
      // the line format is the envelope in order, nothing else
      expect(text.split("\n")[1]).toBe(
        `{"type":"turn/start","seq":0,"time":${b.events[0]!.time},"data":{"turn":0,"trigger":{"kind":"message","source":{"kind":"user"}}}}`
      )
      expect(yield* Effect.promise(() => fsp.readdir(path.dirname(expected)))).toEqual([path.basename(expected)])
      // [DECISION] private: conversations are the user's
      expect((yield* Effect.promise(() => fsp.stat(expected))).mode & 0o777).toBe(0o600)
      expect((yield* Effect.promise(() => fsp.stat(path.dirname(expected)))).mode & 0o777).toBe(0o700)
      expect((yield* p.list()).map((s) => s.header.id)).toEqual([h.id])
      expect((yield* p.list())[0]!.location).toEqual({ kind: "jsonl", path: expected })
    }))

  it.live("AC-49 [D-5,D-9] a torn last line (no newline) after the last turn/end is truncated physically, then repaired", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const b = new LogBuilder().completeTurn("one")
      const n = b.events.length
      b.turnStart(1).user("two")
      const cut = JSON.stringify({ type: "step/start", seq: n + 2, time: 1, data: { turn: 1, step: 0 } })
      const file = yield* writeJsonl(root, { version: 0, id: "torn", createdAt: 1 }, b.events, cut.slice(0, 20))
      const loaded = yield* (yield* open(root)).load(id("torn"))
      expect(loaded.truncated).toBe(1)
      expect(loaded.events.slice(0, n + 2)).toEqual(b.events)
      expect(loaded.repaired.map((e) => e.type)).toEqual(["turn/end"])
      const text = yield* read(file)
      expect(text.endsWith("\n")).toBe(true)
      expect(text.split("\n").length).toBe(n + 2 + 1 + 1 + 1) // header, kept events, the closer, final ""
      expect(lines(text).slice(1)).toEqual(loaded.events)
      // a complete JSON record without its newline is torn too
      const c = new LogBuilder().completeTurn("one")
      const last = JSON.stringify({ type: "turn/start", seq: c.events.length, time: 5, data: { turn: 1, trigger: { kind: "message", source: { kind: "user" } } } })
      yield* writeJsonl(root, { version: 0, id: "no-newline", createdAt: 1 }, c.events, last)
      const l2 = yield* (yield* open(root)).load(id("no-newline"))
      expect(l2.truncated).toBe(1)
      expect(l2.events).toEqual(c.events)
      const again = yield* (yield* open(root)).load(id("no-newline"))
      expect(again.truncated).toBe(0)
      expect(again.events).toEqual(c.events)
    }))

  it.live("[D-5] bad input: a garbage line, a wrong version, a duplicate seq → typed error naming file and line; the file is unchanged", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const p = yield* open(root)
      const b = new LogBuilder().completeTurn("one").completeTurn("two")
      const records: Array<unknown> = [...b.events]

      // garbage on line 6 (header = line 1, event 3 = line 5)
      const garbage = [...records.slice(0, 4), "this is not json", ...records.slice(4)]
      const f1 = yield* writeJsonl(root, { version: 0, id: "garbage", createdAt: 1 }, [])
      yield* Effect.promise(() =>
        fsp.writeFile(
          f1,
          [JSON.stringify({ type: "session", version: 0, id: "garbage", createdAt: 1 }), ...garbage.map((r) => typeof r === "string" ? r : JSON.stringify(r))]
            .map((l) => `${l}\n`).join("")
        )
      )
      const before1 = yield* read(f1)
      const e1 = yield* failure(p.load(id("garbage")))
      expect(e1.code).toBe("CORRUPT_LOG")
      expect(e1.file).toBe(f1)
      expect(e1.line).toBe(6)
      expect(e1.message).toContain(`${f1}:6`)
      expect(yield* read(f1)).toBe(before1)
      // appending adopts first, so it fails the same way and writes nothing
      expect((yield* failure(p.append(id("garbage"), [b.events[0]!]))).code).toBe("CORRUPT_LOG")
      expect(yield* read(f1)).toBe(before1)

      // wrong version
      const f2 = yield* writeJsonl(root, { version: 7, id: "v7", createdAt: 1 }, b.events)
      const before2 = yield* read(f2)
      const e2 = yield* failure(p.load(id("v7")))
      expect(e2.code).toBe("UNSUPPORTED_VERSION")
      expect([e2.file, e2.line]).toEqual([f2, 1])
      expect(yield* read(f2)).toBe(before2)

      // duplicate seq before a later turn/end
      const dup = [...records.slice(0, 5), records[4], ...records.slice(5)]
      const f3 = yield* writeJsonl(root, { version: 0, id: "dup", createdAt: 1 }, dup)
      const before3 = yield* read(f3)
      const e3 = yield* failure(p.load(id("dup")))
      expect(e3.code).toBe("CORRUPT_LOG")
      expect([e3.file, e3.line]).toEqual([f3, 7])
      expect(e3.message).toContain("out of sequence")
      expect(yield* read(f3)).toBe(before3)

      // header of another session
      const f4 = yield* writeJsonl(root, { version: 0, id: "x", createdAt: 1 }, b.events)
      yield* Effect.promise(() => fsp.rename(f4, path.join(path.dirname(f4), "renamed.jsonl")))
      const e4 = yield* failure(p.load(id("renamed")))
      expect([e4.code, e4.line]).toEqual(["CORRUPT_LOG", 1])

      // [DECISION] a complete, in-sequence but invalid record is never dropped, even after the last turn/end
      const invalid = [...records, { type: "turn/start", seq: records.length, time: 1, data: { turn: 2, trigger: { kind: "message", source: { kind: "user" } } }, surfaceOp: "append" }]
      const f5 = yield* writeJsonl(root, { version: 0, id: "invalid-tail", createdAt: 1 }, invalid)
      const e5 = yield* failure(p.load(id("invalid-tail")))
      expect([e5.code, e5.line]).toEqual(["CORRUPT_LOG", records.length + 2])
      expect(e5.rule).toContain("S-5")
      expect(yield* read(f5)).toContain("\"surfaceOp\":\"append\"")

      // garbage after the last turn/end is a torn tail: dropped
      const f6 = yield* writeJsonl(root, { version: 0, id: "garbage-tail", createdAt: 1 }, [...records], "{\"type\":\"turn/st\n@@@\n")
      const l6 = yield* p.load(id("garbage-tail"))
      expect(l6.truncated).toBe(2)
      expect(l6.events).toEqual(b.events)
      expect(lines(yield* read(f6)).slice(1)).toEqual(b.events)
    }))

  it.live("[D-9] a failed append truncates its partial bytes; the next append succeeds", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const base = yield* Effect.provide(FileSystem.FileSystem, NodeFileSystem.layer)
      let failNext = false
      const flaky: FileSystem.FileSystem = {
        ...base,
        open: (file, options) =>
          Effect.map(base.open(file, options), (handle) =>
            options?.flag === "a" && failNext
              ? Object.assign(Object.create(handle) as FileSystem.File, {
                writeAll: (bytes: Uint8Array) => {
                  failNext = false
                  return Effect.andThen(
                    handle.writeAll(bytes.subarray(0, Math.floor(bytes.byteLength / 2))),
                    Effect.fail(
                      PlatformError.systemError({ _tag: "Unknown", module: "FileSystem", method: "writeAll", pathOrDescriptor: file, description: "disk full (simulated)" })
                    )
                  )
                }
              })
              : handle)
      }
      const p = yield* Jsonl.make({ root }).pipe(Effect.provideService(FileSystem.FileSystem, flaky))
      const h = header("flaky")
      yield* p.create(h)
      const b = new LogBuilder().completeTurn("one")
      yield* p.append(h.id, b.events)
      const file = p.locate(h)!.path
      const before = yield* read(file)
      const n = b.events.length
      b.completeTurn("two")
      failNext = true
      const err = yield* failure(p.append(h.id, b.from(n)))
      expect(err.code).toBe("PERSISTENCE_FAILED")
      expect(err.file).toBe(file)
      expect(err.message).toContain("disk full")
      expect(yield* read(file)).toBe(before)
      yield* p.append(h.id, b.from(n))
      expect((yield* (yield* open(root)).load(h.id)).events).toEqual(b.events)
    }))

  it.live("[D-6] list skips empty, header-less, foreign-version and foreign-name files; reads heads and tails of big logs", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const p = yield* open(root)
      const dir = path.join(root, "_no-cwd")
      yield* Effect.promise(async () => {
        await fsp.mkdir(dir, { recursive: true })
        await fsp.mkdir(path.join(root, "not-a-bucket"), { recursive: true })
        await fsp.writeFile(path.join(dir, "empty.jsonl"), "")
        await fsp.writeFile(path.join(dir, "headerless.jsonl"), "{\"type\":\"turn/start\",\"seq\":0}\n")
        await fsp.writeFile(path.join(dir, ".tmpfile.jsonl.abc.tmp"), "x")
        await fsp.writeFile(path.join(dir, "bad~zz.jsonl"), "x")
        await fsp.writeFile(path.join(root, "not-a-bucket", "x.jsonl"), "x")
      })
      yield* writeJsonl(root, { version: 3, id: "future", createdAt: 1 }, [])
      // a big log: a first prompt longer than the 64 KiB head, a last turn with a 200 KiB line, a torn tail
      const b = new LogBuilder(10)
      b.completeTurn(`please summarize\n${"x".repeat(100_000)}`)
      b.turnStart(1).user("second").stepStart(1, 0)
      b.assistant(1, 0, "", [{ id: "c1", name: "read", args: "{}" }])
      b.toolResult(1, 0, "c1", "y".repeat(200_000))
      b.stepEnd(1, 0).turnEnd(1)
      const lastTime = b.events.at(-1)!.time
      yield* writeJsonl(root, { version: 0, id: "big", createdAt: 1 }, b.events, "{\"type\":\"turn/start\",\"seq\":")
      const listed = yield* p.list()
      expect(listed.map((s) => [s.header.id, s.turns, s.updatedAt, s.firstPrompt])).toEqual([
        ["big", 2, lastTime, "please summarize"]
      ])
      // a missing root lists nothing
      expect(yield* (yield* open(path.join(root, "missing"))).list()).toEqual([])
    }))

  it.live("[DEC-4] lock file holds pid, hostname and token; removed at scope close; stale locks are reclaimed", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const p = yield* open(root)
      const h = header("lk")
      yield* p.create(h)
      const b = new LogBuilder().completeTurn("one")
      yield* p.append(h.id, b.events)
      const lockFile = path.join(root, "locks", "lk.lock")
      yield* Effect.scoped(Effect.gen(function*() {
        yield* p.lock(h.id)
        const owner = JSON.parse(yield* read(lockFile)) as Record<string, unknown>
        expect(owner["pid"]).toBe(process.pid)
        expect(owner["hostname"]).toBe(os.hostname())
        expect(typeof owner["token"]).toBe("string")
      }))
      expect(yield* Effect.promise(() => fsp.stat(lockFile).then(() => true, () => false))).toBe(false)

      const plant = (owner: unknown) =>
        Effect.promise(() => fsp.writeFile(lockFile, typeof owner === "string" ? owner : JSON.stringify(owner)))
      // a dead process
      yield* plant({ pid: deadPid(), hostname: os.hostname(), token: "dead", acquiredAt: 1 })
      yield* p.append(h.id, new LogBuilder(0, b.events).completeTurn("two").from(b.events.length))
      yield* Effect.scoped(p.lock(h.id))
      // this process, but no live holder has the token
      yield* plant({ pid: process.pid, hostname: os.hostname(), token: "forgotten", acquiredAt: 1 })
      yield* Effect.scoped(p.lock(h.id))
      // garbage (a power loss can leave an empty lock)
      yield* plant("")
      yield* Effect.scoped(p.lock(h.id))
      // another host: cannot be checked, so it holds
      yield* plant({ pid: 1, hostname: `${os.hostname()}-elsewhere`, token: "remote", acquiredAt: 1 })
      const file = p.locate(h)!.path
      const before = yield* read(file)
      const locked = yield* failure(Effect.scoped(p.lock(h.id)))
      expect(locked.code).toBe("SESSION_LOCKED")
      expect(locked.message).toContain("elsewhere")
      expect(locked.message).toContain(lockFile)
      expect((yield* failure(p.load(h.id))).code).toBe("SESSION_LOCKED")
      expect((yield* failure((yield* open(root)).append(h.id, [b.events[0]!]))).code).toBe("SESSION_LOCKED")
      expect((yield* p.list()).length).toBe(1)
      expect(yield* read(file)).toBe(before)
      expect(JSON.parse(yield* read(lockFile))).toMatchObject({ token: "remote" })
    }))

  it.live("[D-3] a log changed behind this instance's back is re-adopted before appending", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-")
      const p = yield* open(root)
      const q = yield* open(root)
      const h = header("shared")
      yield* p.create(h)
      const b = new LogBuilder().completeTurn("one")
      yield* p.append(h.id, b.events)
      yield* q.load(h.id)
      const n = b.events.length
      b.completeTurn("two")
      yield* q.append(h.id, b.from(n))
      // p's cached next seq is stale; it re-reads and rejects the duplicate
      const err = yield* failure(p.append(h.id, b.from(n) as ReadonlyArray<SessionEvent>))
      expect(err.code).toBe("OUT_OF_SEQUENCE")
      const m = b.events.length
      b.completeTurn("three")
      yield* p.append(h.id, b.from(m))
      expect((yield* (yield* open(root)).load(h.id)).events).toEqual(b.events)
      expect(yield* jsonlFile(root, "shared")).toBe(p.locate(h)!.path)
    }))
})
