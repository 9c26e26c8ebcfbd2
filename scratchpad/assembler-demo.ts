/**
 * Demo: streams a scripted chunk sequence (reasoning, text, a tool call) through the one
 * BlockAssembler, printing the live view as it grows and the assembled response at the end.
 * Run with `npm run demo`.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as StreamChunk from "../src/Llm/StreamChunk.js"

const chunks: ReadonlyArray<StreamChunk.StreamChunk> = [
  StreamChunk.blockStart(0, "reasoning"),
  ...["The user ", "wants the ", "weather."].map((t) => StreamChunk.reasoningDelta(0, t)),
  ...["Let me ", "check ", "Paris."].map((t) => StreamChunk.textDelta(1, t)),
  StreamChunk.toolCallDelta(2, "call_1", "", "weather"),
  StreamChunk.toolCallDelta(2, "call_1", "{\"city\":"),
  StreamChunk.toolCallDelta(2, "", " \"Paris\"}"),
  StreamChunk.usage({ inputTokens: 12, outputTokens: 9, cacheReadTokens: 256 }),
  StreamChunk.finish({ kind: "tool-calls" })
]

const program = Effect.gen(function*() {
  const source = Stream.fromIterable(chunks)
  yield* BlockAssembler.scan(source).pipe(
    Stream.runForEach((state) =>
      Console.log(`live: ${JSON.stringify(BlockAssembler.partialBlocks(state).map((b) => b.type))}`)
    )
  )
  const assembled = yield* Stream.run(source, BlockAssembler.sink)
  yield* Console.log(JSON.stringify(
    { blocks: assembled.blocks, usage: assembled.usage, finish: assembled.finish },
    null,
    2
  ))
})

Effect.runPromise(program).catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
