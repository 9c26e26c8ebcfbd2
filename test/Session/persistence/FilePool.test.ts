/**
 * The bounded pool of open files (issue 20): what an evicted handle leaves behind.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as path from "node:path"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as FilePool from "../../../src/Session/persistence/FilePool.js"

const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

class Marker extends Context.Service<Marker, { readonly payload: Array<number> }>()("test/FilePool/Marker") {}

describe("FilePool", () => {
  it.effect("an LRU eviction by another fiber keeps nothing of the fiber that opened the evicted handle", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const pool = FilePool.make(1)
      const open = (name: string) => fs.open(path.join(dir, name), { flag: "a" })
      const bytes = new TextEncoder().encode("x\n")
      // another fiber (a session's driver) opens "a" with a marker in its context; the handle stays idle
      const weak = yield* Effect.suspend(() => {
        const marker = { payload: Array.from({ length: 1000 }, (_, i) => i) }
        const write = pool.withFile("a", open("a"), (f) => f.writeAll(bytes))
        return Effect.as(Effect.flatMap(Effect.forkChild(Effect.provideService(write, Marker, marker)), Fiber.await), new WeakRef(marker))
      })
      expect(pool.idle()).toBe(1)
      // this fiber (another driver, alive throughout) needs the only descriptor: "a" is closed (LRU)
      yield* pool.withFile("b", open("b"), (f) => f.writeAll(bytes))
      expect(pool.idle()).toBe(1)
      gc()
      gc()
      expect(weak.deref()).toBeUndefined()
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
