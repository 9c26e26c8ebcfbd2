/**
 * The SessionStore (D-7, D-8, D-12) over the durable backends: the write path, resume and the
 * single-writer rule end to end, with real files and a real database.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as PlatformError from "effect/PlatformError"
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { SessionId } from "../../../src/Llm/Message.js"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import type * as Session from "../../../src/Session/Session.js"
import * as SessionStore from "../../../src/Session/SessionStore.js"
import type { Service } from "../../../src/Session/SessionPersistence.js"
import { SessionPersistence } from "../../../src/Session/SessionPersistence.js"
import { jsonl, sqlite } from "../../support/persistenceSubjects.js"

const storeOver = (p: Service) => SessionStore.make.pipe(Effect.provideService(SessionPersistence, p))

/** Appends one completed text turn through the live session. */
const turn = (session: Session.Session, prompt: string) =>
  Effect.gen(function*() {
    const events = yield* session.events
    let n = 0
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i]!
      if (e.type === "turn/start") {
        n = e.data.turn + 1
        break
      }
    }
    yield* session.append({ type: "turn/start", data: { turn: n, trigger: { kind: "message", source: { kind: "user" } } } })
    yield* session.append({
      type: "user/message",
      data: { content: [{ type: "text", text: prompt }], source: { kind: "user" } },
      surfaceOp: "append"
    })
    yield* session.append({ type: "turn/end", data: { turn: n, reason: { kind: "completed" } } })
  })

describe.each([jsonl, sqlite])("SessionStore over $name", (subject) => {
  it.live("AC-51 [D-7,D-8,D-12] flush at turn end, resume in a new store: seqs and turns continue, nothing duplicated", () =>
    Effect.gen(function*() {
      const storage = yield* subject.storage
      const store1 = yield* storeOver(yield* storage.open)
      const scope = yield* Scope.make()
      const s1 = yield* Scope.provide(store1.create({ id: "resume-me", cwd: "/work/x" }), scope)
      yield* turn(s1, "first")
      yield* store1.flush(s1.id)
      expect(yield* store1.pending(s1.id)).toBe(0)
      // a second writer (another store, another backend instance) is refused while s1 is live
      const store2 = yield* storeOver(yield* storage.open)
      expect((yield* Effect.flip(Effect.scoped(store2.open("resume-me")))).code).toBe("SESSION_LOCKED")
      yield* turn(s1, "second")
      yield* Scope.close(scope, Exit.void) // release drains
      const scope2 = yield* Scope.make()
      const s2 = yield* Scope.provide(store2.open("resume-me"), scope2)
      const events = yield* s2.events
      expect(events.length).toBe(6)
      expect(s2.header.cwd).toBe("/work/x")
      yield* turn(s2, "third")
      expect((yield* s2.events).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
      expect((yield* s2.events)[6]!.data).toMatchObject({ turn: 2 })
      yield* store2.flush(s2.id)
      const loaded = yield* (yield* storage.open).load("resume-me" as SessionId)
      expect(loaded.events.length).toBe(9)
      expect(loaded.events).toEqual(yield* s2.events)
      // while live, another store's create is refused by the lock; once released, by storage (D-8)
      const store3 = yield* storeOver(yield* storage.open)
      expect((yield* Effect.flip(Effect.scoped(store3.create({ id: "resume-me" })))).code).toBe("SESSION_LOCKED")
      yield* Scope.close(scope2, Exit.void)
      expect((yield* Effect.flip(Effect.scoped((yield* storeOver(yield* storage.open)).create({ id: "resume-me" })))).code)
        .toBe("SESSION_ALREADY_EXISTS")
    }))
})

describe("SessionStore over Jsonl with a failing disk", () => {
  it.live("AC-50 [DEC-11] a failing write fails the append PERSISTENCE_FAILED and keeps the events; the next flush persists them", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem.pipe(Effect.provide(NodeFileSystem.layer))
      const root = yield* fs.makeTempDirectoryScoped({ prefix: "harness-store-" })
      let failing = false
      const unplugged = (method: string, file: string | number) =>
        PlatformError.systemError({ _tag: "Unknown", module: "FileSystem", method, pathOrDescriptor: file, description: "disk unplugged (simulated)" })
      const flaky: FileSystem.FileSystem = {
        ...fs,
        open: (file, options) =>
          failing
            ? Effect.fail(unplugged("open", file))
            : Effect.map(fs.open(file, options), (handle): FileSystem.File => {
              // a handle kept open across appends fails too once the disk is gone
              const proxy = Object.create(handle) as FileSystem.File
              return Object.assign(proxy, {
                writeAll: (bytes: Uint8Array) => (failing ? Effect.fail(unplugged("writeAll", file)) : handle.writeAll(bytes))
              })
            })
      }
      const p = yield* Jsonl.make({ root }).pipe(Effect.provideService(FileSystem.FileSystem, flaky))
      const store = yield* storeOver(p)
      const s = yield* store.create({ id: "flaky" })
      yield* turn(s, "one")
      failing = true
      const err = yield* Effect.flip(s.append({ type: "turn/start", data: { turn: 2, trigger: { kind: "message", source: { kind: "user" } } } }))
      expect(err.code).toBe("PERSISTENCE_FAILED")
      expect(err.message).toContain("disk unplugged")
      expect(err.file).toBe(p.locate(s.header)!.path)
      expect((yield* Effect.flip(store.flush(s.id))).code).toBe("PERSISTENCE_FAILED")
      expect(yield* store.pending(s.id)).toBe(1)
      // the failure is never logged as an event
      expect((yield* s.events).length).toBe(4)
      failing = false
      yield* store.flush(s.id)
      expect(yield* store.pending(s.id)).toBe(0)
      // a reader's snapshot (the turn is still open: its closers exist in the snapshot's memory only)
      const snap = yield* (yield* Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer))).snapshot(s.id)
      expect(snap.events.slice(0, snap.events.length - snap.repaired.length)).toEqual(yield* s.events)
      expect(snap.repaired.map((e) => e.type)).toEqual(["turn/end"])
    }))
})
