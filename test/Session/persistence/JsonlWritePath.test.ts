/**
 * The JSONL write path (issue 17) seen through a counting file system: while the writer lock is
 * held, one open per log and one `write` per batch (no `stat`, no lock re-read); fsync only where
 * the caller asks (the store asks with `step/end`, `turn/end` and at flush points, DEC-11);
 * appends that arrive while a write is in flight go out together; a bounded pool of descriptors
 * (LRU) serves more live logs than it holds open.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { SessionId } from "../../../src/Llm/Message.js"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import { tempDir } from "../../support/persistenceSubjects.js"
import { counting, turnBatches } from "../../support/jsonlIo.js"
import { header } from "../../support/sessionLog.js"

const reload = (root: string, id: string) =>
  Effect.flatMap(Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer)), (p) =>
    Effect.map(p.load(id as SessionId), (l) => l.events))

describe("Jsonl write path", () => {
  it("[DEC-11] the default bound of open files is a quarter of the process limit, from 64 to 1,024", () => {
    expect(Jsonl.defaultMaxOpenFiles(undefined)).toBe(Jsonl.DEFAULT_MAX_OPEN_FILES)
    expect(Jsonl.defaultMaxOpenFiles(100)).toBe(64)
    expect(Jsonl.defaultMaxOpenFiles(1024)).toBe(256)
    expect(Jsonl.defaultMaxOpenFiles(20_000)).toBe(1024)
  })

  it.live("[DEC-11,DEC-4] lock held: one open per log, one write per batch, no stat and no lock re-read; fsync only when asked", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-io-")
      const { counts, fs, reset } = yield* counting
      const p = yield* Jsonl.make({ root }).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      const h = header("lean", "/w")
      const { all, batches } = turnBatches(21)
      yield* p.lock(h.id)
      yield* p.create(h)
      yield* p.append(h.id, batches[0]!)
      reset()
      for (let i = 1; i <= 10; i++) yield* p.append(h.id, batches[i]!, { sync: false })
      expect(counts).toEqual({ open: 1, stat: 0, readFile: 0, writes: 10, syncs: 0 })
      yield* p.sync(h.id)
      expect(counts.syncs).toBe(1)
      // nothing written since: nothing to fsync
      yield* p.sync(h.id)
      expect(counts.syncs).toBe(1)
      for (let i = 11; i <= 20; i++) yield* p.append(h.id, batches[i]!)
      expect(counts).toEqual({ open: 1, stat: 0, readFile: 0, writes: 20, syncs: 11 })
      expect(yield* reload(root, h.id)).toEqual(all)
    }))

  it.live("[DEC-11] appends that arrive while a write is in flight go out in one write, in order; a bad batch fails alone", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-io-")
      const { counts, fs, reset } = yield* counting
      const p = yield* Jsonl.make({ root }).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      const h = header("burst", "/w")
      const { all, batches } = turnBatches(11)
      yield* p.lock(h.id)
      yield* p.create(h)
      yield* p.append(h.id, batches[0]!)
      reset()
      // ten callers at once, plus one whose batch repeats stored seqs (rejected, nothing of it written)
      const results = yield* Effect.all(
        [
          ...batches.slice(1, 6).map((batch) => Effect.result(p.append(h.id, batch, { sync: false }))),
          Effect.result(p.append(h.id, batches[0]!, { sync: false })),
          ...batches.slice(6).map((batch) => Effect.result(p.append(h.id, batch)))
        ],
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => r._tag)).toEqual([...Array(5).fill("Success"), "Failure", ...Array(5).fill("Success")])
      expect(results[5]!._tag === "Failure" && results[5]!.failure.code).toBe("OUT_OF_SEQUENCE")
      // the first caller's write, then everyone who arrived meanwhile together (fsynced once)
      expect(counts.writes).toBe(2)
      expect(counts.syncs).toBe(1)
      expect(yield* reload(root, h.id)).toEqual(all)
    }))

  it.live("[DEC-11] a pool of 2 descriptors serves 5 live logs written in turn (LRU); all saved, none left open after release", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-io-")
      const p = yield* Jsonl.make({ root, maxOpenFiles: 2 }).pipe(Effect.provide(NodeFileSystem.layer))
      const { all, batches } = turnBatches(4)
      const ids = ["a", "b", "c", "d", "e"].map((x) => header(`pool-${x}`, "/w"))
      const scope = yield* Scope.make()
      let most = 0
      for (const h of ids) {
        yield* Scope.provide(p.lock(h.id), scope)
        yield* p.create(h)
      }
      for (const batch of batches) {
        for (const h of ids) {
          yield* p.append(h.id, batch)
          most = Math.max(most, p.tracked().openFiles)
        }
      }
      expect(most).toBeLessThanOrEqual(2)
      expect(p.tracked().openFiles).toBe(2)
      yield* Scope.close(scope, Exit.void)
      expect(p.tracked()).toEqual({ sessions: 0, serializing: 0, held: 0, openFiles: 0 })
      for (const h of ids) expect(yield* reload(root, h.id)).toEqual(all)
    }))
})
