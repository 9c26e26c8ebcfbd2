/**
 * The JSONL backend's synchronous append (`append.now`, issue 20): a batch of a held, stored log
 * with its descriptor open goes out in one synchronous `write` (not through the file system's
 * effects); anything else answers "later" and goes the effectful way; a bad batch is refused as
 * `append` would refuse it. `make` leaves it off unless asked; `layer` turns it on.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { SessionId } from "../../../src/Llm/Message.js"
import * as Jsonl from "../../../src/Session/persistence/Jsonl.js"
import { SessionPersistence } from "../../../src/Session/SessionPersistence.js"
import { tempDir } from "../../support/persistenceSubjects.js"
import { counting, turnBatches } from "../../support/jsonlIo.js"
import { header } from "../../support/sessionLog.js"

describe("Jsonl append.now (issue 20)", () => {
  it.live("[DEC-11] held and open: one synchronous write per batch, none through the file system; fsync stays effectful", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-now-")
      const { counts, fs } = yield* counting
      const p = yield* Jsonl.make({ root, writeNow: true }).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      const now = p.append.now!
      const h = header("now", "/w")
      const { all, batches } = turnBatches(8)
      yield* p.lock(h.id)
      yield* p.create(h)
      // not stored yet: the first write (temporary file + link) is effectful
      expect(now(h.id, batches[0]!, { sync: false })).toBe("later")
      yield* p.append(h.id, batches[0]!)
      // stored, but no append descriptor open yet
      expect(now(h.id, batches[1]!, { sync: false })).toBe("later")
      yield* p.append(h.id, batches[1]!, { sync: false })
      const before = { ...counts }
      for (let i = 2; i < 6; i++) expect(now(h.id, batches[i]!, { sync: false })).toBe("written")
      expect(counts).toEqual(before)
      // a batch to fsync is not for now
      expect(now(h.id, batches[6]!)).toBe("later")
      // out of order: refused like `append` refuses it, nothing written
      const refused = now(h.id, batches[7]!, { sync: false })
      expect(typeof refused === "object" && refused.code).toBe("OUT_OF_SEQUENCE")
      yield* p.sync(h.id)
      expect(counts.syncs).toBe(before.syncs + 1)
      yield* p.append(h.id, batches[6]!)
      yield* p.append(h.id, batches[7]!, { sync: false })
      const reloaded = yield* Effect.flatMap(Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer)), (q) => q.snapshot(h.id))
      expect(reloaded.events).toEqual(all)
    }))

  it.live("[DEC-4] not held by this instance: \"later\"; make without writeNow has no append.now; layer has it", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("harness-jsonl-now-")
      const p = yield* Jsonl.make({ root, writeNow: true }).pipe(Effect.provide(NodeFileSystem.layer))
      const { batches } = turnBatches(1)
      expect(p.append.now!("nobody" as SessionId, batches[0]!, { sync: false })).toBe("later")
      const plain = yield* Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer))
      expect(plain.append.now).toBeUndefined()
      const layered = yield* Effect.provide(SessionPersistence, Jsonl.layer({ root }))
      expect(layered.append.now).toBeTypeOf("function")
    }))
})
