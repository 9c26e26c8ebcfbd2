/**
 * Helpers of the JSONL write-path tests: the Node file system counting what a backend asks of it,
 * and a log of whole turns cut into one batch per turn.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { LogBuilder } from "./sessionLog.js"

/** What the counting file system saw. */
export interface Counts {
  open: number
  stat: number
  readFile: number
  writes: number
  syncs: number
}

/** the Node file system, counting what the backend asks of it */
export const counting = Effect.gen(function*() {
  const fs = yield* Effect.provide(FileSystem.FileSystem, NodeFileSystem.layer)
  const counts: Counts = { open: 0, stat: 0, readFile: 0, writes: 0, syncs: 0 }
  const counted: FileSystem.FileSystem = {
    ...fs,
    stat: (file) => Effect.suspend(() => (counts.stat++, fs.stat(file))),
    readFile: (file) => Effect.suspend(() => (counts.readFile++, fs.readFile(file))),
    readFileString: (file, encoding) => Effect.suspend(() => (counts.readFile++, fs.readFileString(file, encoding))),
    open: (file, options) =>
      Effect.map(Effect.suspend(() => (counts.open++, fs.open(file, options))), (handle) =>
        Object.create(handle, {
          writeAll: { value: (bytes: Uint8Array) => Effect.suspend(() => (counts.writes++, handle.writeAll(bytes))) },
          sync: { get: () => Effect.suspend(() => (counts.syncs++, handle.sync)) }
        }) as FileSystem.File)
  }
  const reset = () => Object.assign(counts, { open: 0, stat: 0, readFile: 0, writes: 0, syncs: 0 })
  return { fs: counted, counts, reset }
})

/** `n` complete turns, one batch each. */
export const turnBatches = (n: number): { readonly all: Array<SessionEvent>; readonly batches: Array<ReadonlyArray<SessionEvent>> } => {
  const b = new LogBuilder()
  const batches: Array<ReadonlyArray<SessionEvent>> = []
  for (let i = 0; i < n; i++) {
    const from = b.nextSeq
    b.completeTurn(`turn ${i}`)
    batches.push(b.from(from))
  }
  return { all: b.events, batches }
}

