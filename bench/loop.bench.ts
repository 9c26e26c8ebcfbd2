/**
 * Loop benchmark (issue 6): harness overhead per step.
 *
 * One turn of 50 steps; each step streams 2,000 chunks from the scripted adapter with no delay
 * (a 1,992-character text block, one tool call, usage, finish) and runs that tool call (`echo`);
 * a continuation listener stops the turn after step 50. Measured end to end through the real
 * layers: `Llm` routing, the chunk log (`assistant/chunk` appends with full validation), the
 * `BlockAssembler` sink folding the same stream, `assistant/message` recording, the tool scheduler
 * and the in-memory session store flush.
 *
 * - `loop.chunks-per-second`: 100,000 chunks / end-to-end seconds, against the assembler-only
 *   figure of the same chunks (`BlockAssembler.sink` over the same 50 responses, played as the
 *   scripted adapter plays them). ratio = end-to-end / assembler-only (the share of throughput
 *   left after the harness overhead).
 * - `loop.step-overhead`: milliseconds per step spent outside the assembler (end-to-end minus
 *   assembler-only, divided by 50), against the assembler-only milliseconds per step.
 * - `loop.tracing-overhead` (issue 19): the same end-to-end run with the OTLP exporter the CLI uses (spans,
 *   metrics and logs batched to an HTTP client that answers at once) against the run with tracing disabled
 *   (`Effect.withTracerEnabled(false)`); spans are per request and per tool call, never per chunk.
 */
import * as Otlp from "effect/observability/Otlp"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Schema from "effect/Schema"
import * as Scripted from "../src/Adapter/Scripted.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../src/Llm/ContentBlock.js"
import * as Hooks from "../src/Loop/Hooks.js"
import * as Scheduling from "../src/Loop/Scheduling.js"
import * as TestKit from "../src/Loop/TestKit.js"
import * as Tool from "../src/Loop/Tool.js"
import { median, report, timeMs } from "./Bench.js"

const STEPS = 50
const CHUNKS_PER_STEP = 2_000
// a text block of n characters is n + 2 chunks; the tool call is 4, usage 1, finish 1
const TEXT_LENGTH = CHUNKS_PER_STEP - 2 - 4 - 2

const echo = Tool.make({
  name: "echo",
  description: "Echoes its text",
  parameters: Schema.Struct({ text: Schema.String }),
  execute: (args: { readonly text: string }) => Effect.succeed([ContentBlock.text(`echo: ${args.text}`)])
})

const reply = (step: number): Scripted.Reply => [
  Scripted.say("x".repeat(TEXT_LENGTH)),
  Scripted.toolCall(`call-${step}`, "echo", `{"text":"step ${step}"}`),
  Scripted.usage(10, CHUNKS_PER_STEP),
  Scripted.finish("tool-calls")
]

const replies = Array.from({ length: STEPS }, (_, i) => reply(i + 1))

const endToEnd = Effect.gen(function*() {
  const hooks = yield* Hooks.LoopHooks
  yield* hooks.turnContinuation.register((i, next) =>
    i.step >= STEPS ? Effect.succeed(Hooks.ContinuationDecision.Stop()) : next()
  )
  const t = yield* TestKit.agent({ tools: [echo] })
  yield* t.prompt("go")
  const events = yield* t.events
  const chunks = events.filter((e) => e.type === "assistant/chunk").length
  const results = events.filter((e) => e.type === "tool/result").length
  if (chunks !== STEPS * CHUNKS_PER_STEP || results !== STEPS) {
    return yield* Effect.die(new Error(`unexpected run: ${chunks} chunks, ${results} tool results`))
  }
}).pipe(Effect.scoped, Effect.provide(Layer.merge(TestKit.layer({ script: replies }), Scheduling.layer))) // the CLI's scheduler

const chunkLists = replies.map((r) => Scripted.toChunks(r))

const assemblerOnly = Effect.forEach(
  chunkLists,
  (chunks) => Stream.run(Stream.fromArray(chunks.slice()), BlockAssembler.sink),
  { discard: true }
)

const sink = HttpClient.make((request) => Effect.succeed(HttpClientResponse.fromWeb(request, new Response("{}"))))
const traced = endToEnd.pipe(
  Effect.provide(Otlp.layerJson({ baseUrl: "http://127.0.0.1:9", resource: { serviceName: "bench" } })),
  Effect.provide(Layer.succeed(HttpClient.HttpClient, sink))
)
const untraced = endToEnd.pipe(Effect.withTracerEnabled(false))

export async function run(): Promise<void> {
  const total = STEPS * CHUNKS_PER_STEP
  // interleaved rounds so both figures see the same machine load; medians of each
  const e2e: Array<number> = []
  const asm: Array<number> = []
  await Effect.runPromise(endToEnd) // warm-up
  for (let round = 0; round < 4; round++) {
    e2e.push(await timeMs(1, () => Effect.runPromise(endToEnd)))
    asm.push(await timeMs(3, () => Effect.runPromise(assemblerOnly)))
  }
  const e2eMs = median(e2e)
  const asmMs = median(asm)
  report({
    bench: "loop.chunks-per-second",
    unit: "chunks/s (higher is better)",
    value: Math.round(total / (e2eMs / 1000)),
    baseline: Math.round(total / (asmMs / 1000)),
    steps: STEPS,
    chunksPerStep: CHUNKS_PER_STEP
  })
  const plain: Array<number> = []
  const withTracing: Array<number> = []
  await Effect.runPromise(traced) // warm-up
  for (let round = 0; round < 4; round++) {
    plain.push(await timeMs(1, () => Effect.runPromise(untraced)))
    withTracing.push(await timeMs(1, () => Effect.runPromise(traced)))
  }
  report({
    bench: "loop.tracing-overhead",
    unit: "ms per 100k-chunk turn, traced (lower is better); baseline = untraced",
    value: Math.round(median(withTracing)),
    baseline: Math.round(median(plain)),
    spansPerTurn: 1 + 2 * STEPS
  })
  report({
    bench: "loop.step-overhead",
    unit: "ms per step outside the assembler (lower is better); baseline = assembler ms per step",
    value: Math.round(((e2eMs - asmMs) / STEPS) * 1000) / 1000,
    baseline: Math.round((asmMs / STEPS) * 1000) / 1000
  })
}
