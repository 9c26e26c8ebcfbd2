/**
 * The spike's "mini agent" probe on Effect 3 (the repository's own modules under `src/`): N agents, each a
 * driver fiber on the fair scheduler taking prompts from an inbox, each turn logging what a tool-less turn
 * of the real loop logs (turn/start, user/message, step/start, request/header on the first request, one
 * `assistant/chunk` per streamed chunk through `Session.appendChunks`, assistant/message, step/end,
 * turn/end, flush) into the JSONL store, consuming the model stream as `Step.ts` does
 * (`runForEachChunk` → `appendChunks` → `BlockAssembler.Builder` → `Fairness.due`). What the real loop
 * adds per turn (hooks, system prompt, spans, tool scheduler, recording rules) is left out on both
 * sides: `spike/effect4/bench/probe.ts` is the same program on the Effect 4 port.
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as Message from "../../src/Llm/Message.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as Fairness from "../../src/Loop/internal/Fairness.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import type * as Session from "../../src/Session/Session.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as SessionStore from "../../src/Session/SessionStore.js"
import { heap, mainThreadCpu } from "../common/measure.js"
import type { ProbeOptions, ProbeResult } from "../common/probe-types.js"

const response = (chunks: number): ReadonlyArray<StreamChunk.StreamChunk> => {
  const deltas = Math.max(1, chunks - 4)
  const out: Array<StreamChunk.StreamChunk> = [StreamChunk.blockStart(0, "text")]
  let text = ""
  for (let i = 0; i < deltas; i++) {
    const word = `w${i % 10} `
    text += word
    out.push(StreamChunk.textDelta(0, word))
  }
  out.push(StreamChunk.blockEnd(0, ContentBlock.text(text)), StreamChunk.usage({ inputTokens: 10, outputTokens: deltas }))
  out.push(StreamChunk.finish({ kind: "stop" }))
  return out
}

type Model = (request: Message.GenerateOptions) => Stream.Stream<StreamChunk.StreamChunk>

const config = Object.freeze({ provider: "synthetic", model: "probe" })
const source = Object.freeze({ kind: "user" as const })

/** One tool-less turn, as the real loop logs it. */
const runTurn = (
  store: SessionStore.Service,
  session: Session.Session,
  model: Model,
  turn: number
): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    yield* session.append({ type: "turn/start", data: { turn, trigger: { kind: "message", source } } })
    yield* session.append({
      type: "user/message",
      data: { content: [ContentBlock.text(`turn ${turn}`)], source },
      surfaceOp: "append"
    })
    const step = 1
    const boundary = yield* session.deriveMessages
    yield* session.append({ type: "step/start", data: { turn, step } })
    const logged = yield* session.requestHeader
    if (logged === undefined) yield* session.append({ type: "request/header", data: { header: { config }, reason: "initial" } })
    const request: Message.GenerateOptions = Object.freeze({ ...config, messages: Object.freeze([...boundary]), sessionId: session.id })
    const seqs: Array<number> = []
    const builder = new BlockAssembler.Builder()
    const logBatch = (chunks: Chunk.Chunk<StreamChunk.StreamChunk>): Effect.Effect<void, unknown> => {
      if (chunks.length === 0) return Effect.void
      return Effect.flatMap(session.appendChunks(turn, step, Chunk.toReadonlyArray(chunks)), (events) => {
        for (let e = 0; e < events.length; e++) seqs.push((events[e] as SessionEvent).seq)
        builder.addAll(chunks)
        return Fairness.due() ? Fairness.yieldNow : Effect.void
      })
    }
    yield* Stream.runForEachChunk(model(request), logBatch)
    const assembled = yield* BlockAssembler.assemble(builder.snapshot())
    yield* session.append({
      type: "assistant/message",
      data: {
        turn,
        step,
        content: assembled.blocks,
        provenance: config,
        ...(assembled.usage === undefined ? {} : { usage: assembled.usage })
      },
      surfaceOp: "append",
      sourceEventSeqs: seqs
    })
    yield* session.append({ type: "step/end", data: { turn, step } })
    yield* session.append({ type: "turn/end", data: { turn, reason: { kind: "completed" } } })
    yield* store.flush(session.id)
  })

interface MiniAgent {
  readonly send: (turn: number) => Effect.Effect<void>
}

/** An agent: a session, and a driver fiber (daemon, on the fair scheduler) running the turns of its inbox. */
const makeAgent = (store: SessionStore.Service, model: Model) =>
  Effect.gen(function*() {
    const session = yield* store.create()
    const inbox = yield* Queue.unbounded<{ readonly turn: number; readonly done: Deferred.Deferred<void, unknown> }>()
    const driver = Effect.forever(
      Effect.flatMap(Queue.take(inbox), ({ done, turn }) =>
        Effect.flatMap(Effect.exit(Effect.suspend(() => runTurn(store, session, model, turn))), (exit) => Deferred.done(done, exit)))
    )
    const fiber = yield* Effect.forkDaemon(Fairness.fair(driver))
    yield* Effect.addFinalizer(() => Fiber.interrupt(fiber))
    const agent: MiniAgent = {
      send: (turn) =>
        Effect.flatMap(Deferred.make<void, unknown>(), (done) =>
          Effect.zipRight(Queue.offer(inbox, { turn, done }), Effect.orDie(Deferred.await(done))))
    }
    return agent
  })

export const probe = (options: ProbeOptions): Promise<ProbeResult> => {
  const root = mkdtempSync(join(tmpdir(), "e4spike-v3-"))
  const chunks = response(options.chunks)
  const model: Model = () => Stream.fromIterable(chunks).pipe(Stream.rechunk(options.batch))
  const store = SessionStore.layer.pipe(Layer.provide(Layer.orDie(Jsonl.layer({ root }))))
  const program = Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    const baseline = heap()
    const agents = yield* Fairness.fair(Effect.forEach(
      Array.from({ length: options.agents }, (_, i) => i),
      () => makeAgent(sessions, model),
      { concurrency: "unbounded" }
    ))
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const main0 = mainThreadCpu()
    const t0 = performance.now()
    yield* Effect.forEach(
      agents,
      (agent) =>
        Effect.gen(function*() {
          for (let turn = 1; turn <= options.turns; turn++) yield* agent.send(turn)
        }),
      { concurrency: "unbounded", discard: true }
    )
    const seconds = (performance.now() - t0) / 1000
    const main = mainThreadCpu() - main0
    delay.disable()
    const idle = heap()
    const totalChunks = options.agents * options.turns * options.chunks
    return {
      ...options,
      side: "v3-mini",
      totalChunks,
      seconds: Math.round(seconds * 1000) / 1000,
      cpuMicrosPerChunk: Math.round((main / totalChunks) * 100) / 100,
      timerP99Ms: Math.round(delay.percentile(99) / 1e4) / 100,
      idleHeapPerAgentBytes: Math.round((idle - baseline) / options.agents)
    } satisfies ProbeResult
  })
  return Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(store))).finally(() => {
    // E4SPIKE_KEEP=1 keeps the session files (to compare what both sides wrote)
    if (process.env["E4SPIKE_KEEP"] === "1") process.stderr.write(`kept ${root}\n`)
    else rmSync(root, { recursive: true, force: true })
  })
}
