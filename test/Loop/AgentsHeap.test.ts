/**
 * Many agents in one process (issue 20): the heap an idle agent keeps does not grow with the number of its turns,
 * over the JSONL store with a small pool of descriptors (every batch of one agent evicts another agent's log).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as SessionStore from "../../src/Session/SessionStore.js"

const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

const heap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** One response of `chunks` chunks: a text block of one-word deltas, usage and finish. */
const response = (chunks: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const deltas = chunks - 4
  const out: Array<StreamChunk.StreamChunk> = [StreamChunk.blockStart(0, "text")]
  for (let i = 0; i < deltas; i++) out.push(StreamChunk.textDelta(0, `w${i % 10} `))
  out.push(StreamChunk.blockEnd(0, ContentBlock.text(Array.from({ length: deltas }, (_, i) => `w${i % 10} `).join(""))))
  out.push(StreamChunk.usage({ inputTokens: 10, outputTokens: deltas }), StreamChunk.finish({ kind: "stop" }))
  return out
}

describe("many agents: idle heap", () => {
  it("[issue 20] 24 JSONL agents sharing 4 descriptors: the heap kept per agent and turn stays small from turn 2 to turn 8", async () => {
    const agents = 24
    const root = mkdtempSync(join(tmpdir(), "agents-heap-"))
    const chunks = response(100)
    const store = SessionStore.layer.pipe(Layer.provide(Layer.orDie(Jsonl.layer({ root, maxOpenFiles: 4 }))))
    const services = Layer.provideMerge(
      Agent.layer,
      Layer.mergeAll(Llm.layer, Hooks.layer, SystemPrompt.layerEmpty, ToolRuntime.layerDefault, store)
    )
    const program = Effect.gen(function*() {
      yield* Llm.register([{ id: "synthetic" }], {
        providers: [{ id: "synthetic", name: "Synthetic" }],
        models: [],
        stream: () => Stream.fromIterable(chunks).pipe(Stream.rechunk(8))
      })
      const made = yield* Effect.forEach(
        Array.from({ length: agents }),
        () => Agent.make({ provider: "synthetic", model: "probe" }),
        { concurrency: "unbounded" }
      )
      const turns = (n: number) =>
        Effect.forEach(made, (agent) =>
          Effect.gen(function*() {
            for (let t = 0; t < n; t++) {
              yield* agent.send([ContentBlock.text(`turn ${t}`)])
              yield* agent.whenIdle
            }
          }), { concurrency: "unbounded", discard: true })
      yield* turns(2)
      const after2 = heap()
      yield* turns(6)
      const after8 = heap()
      return (after8 - after2) / (agents * 6)
    })
    try {
      const perAgentTurn = await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(services)))
      // the turn's own events (without its chunks) are a few KB; an eviction that chained one agent's fiber
      // state onto another's kept every turn's contexts and spans (~27 KB per agent and turn at N = 100)
      expect(perAgentTurn).toBeLessThan(12_000)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 60_000)
})
