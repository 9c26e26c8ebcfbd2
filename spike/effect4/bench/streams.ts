/**
 * Stream and session rows of the spike, v4 side (the port under `spike/effect4/src`): the same code as
 * `spike/effect3/streams.ts` (Effect 4 renames only; the adapter over `NodeHttpClient.layerUndici`).
 * There: stream and session rows of the spike, v3 side (the repository's own modules), in the shapes of
 * `bench/hotpaths.bench.ts` and `bench/session.bench.ts`; `spike/effect4/bench/streams.ts` is the same
 * code on the port. Every row: CPU ms of the value and of a plain baseline, interleaved, best of 3.
 *
 * - `sse/<w>`: SSE bytes (16 KiB reads) → `OpenAiCompatible.decodeResponse` → `BlockAssembler.sink` ×
 *   a `JSON.parse` loop over the same bytes.
 * - `e2e/<w>`: the OpenAI-compatible adapter (undici) over loopback × plain `fetch` + the same split.
 * - `append-assembler/<w>`: batches of 32 `appendAll` + `BlockAssembler.sink` × serialize-once.
 * - `session.append`: `Session.append` one event at a time (109k realistic events) × serialize-once;
 *   `session.append.observed` with one no-op observer.
 *
 * Prints one JSON line per row.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as OpenAiCompatible from "../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as Message from "../src/Llm/Message.js"
import type * as StreamChunk from "../src/Llm/StreamChunk.js"
import * as Session from "../src/Session/Session.js"
import type { AppendInput } from "../src/Session/SessionEvent.js"
import { flag, interleaved, openAiBody, pieces, plainFetch, plainLoop, round, sseServer, workloads } from "../../common/measure.js"
import { realistic, serializeOnce } from "../../common/sessionInputs.js"

const side = "v4"
const scale = Number(flag("scale", "1"))
const only = flag("only", "")
const out = (row: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ side, ...row })}\n`)
const ratio = (t: { value: number; baseline: number }) => ({ value: round(t.value), baseline: round(t.baseline), ratio: round(t.value / t.baseline, 3) })

const reads = (body: ReadonlyArray<Uint8Array>) => Stream.fromArrays(...body.map((b) => [b]))

const sseRows = async () => {
  for (const w of workloads) {
    const body = pieces(openAiBody(w, scale))
    const decode = OpenAiCompatible.decodeResponse(["reasoning_content"], "deepseek")
    const ours = () => Effect.runPromise(Stream.run(decode(reads(body)), BlockAssembler.sink))
    if ((await ours()).blocks.length === 0) throw new Error(`sse/${w}: nothing assembled`)
    out({ bench: `sse/${w}`, unit: "CPU ms", ...ratio(await interleaved(ours, () => plainLoop(body))) })
  }
}

const e2eRows = async () => {
  const server = await sseServer()
  // the client lives as long as the rows (as the v3 adapter's process-wide default client)
  const scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(NodeHttpClient.layerUndici, scope))
  const client = Context.get(context, HttpClient.HttpClient)
  const adapter = OpenAiCompatible.make({
    provider: "deepseek",
    url: `${server.url}/chat/completions`,
    apiKey: Redacted.make("bench"),
    reasoningFields: ["reasoning_content"],
    sendReasoningContent: false,
    profile: { maxTokensField: "max_tokens" }
  }, client)
  const request: Message.GenerateOptions = { provider: "deepseek", model: "deepseek-chat", messages: [Message.user("hi")] }
  for (const w of workloads) {
    server.setBody(openAiBody(w, scale))
    const ours = () => Effect.runPromise(Stream.run(adapter.stream(request), BlockAssembler.sink))
    if ((await ours()).blocks.length === 0) throw new Error(`e2e/${w}: nothing assembled`)
    out({ bench: `e2e/${w}`, unit: "CPU ms", ...ratio(await interleaved(ours, () => plainFetch(server.url))) })
  }
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await server.close()
}

const chunksOf = (w: (typeof workloads)[number]): Promise<ReadonlyArray<StreamChunk.StreamChunk>> =>
  Effect.runPromise(
    Stream.runCollect(OpenAiCompatible.decodeResponse(["reasoning_content"], "deepseek")(reads(pieces(openAiBody(w, scale)))))
  )

const appendAssemblerRows = async () => {
  for (const w of workloads) {
    const chunks = await chunksOf(w)
    const inputs: Array<AppendInput> = chunks.map((chunk) => ({ type: "assistant/chunk", data: { turn: 1, step: 1, chunk } }))
    const batches: Array<Array<StreamChunk.StreamChunk>> = []
    for (let i = 0; i < chunks.length; i += 32) batches.push(chunks.slice(i, i + 32))
    const loopLike = () =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const session = yield* Session.make({ id: "bench" })
        return yield* Stream.fromArrays(...batches).pipe(
          Stream.mapArrayEffect((cs) => Effect.as(session.appendChunks(1, 1, cs), cs)),
          Stream.run(BlockAssembler.sink)
        )
      })))
    out({ bench: `append-assembler/${w}`, unit: "CPU ms", events: inputs.length, ...ratio(await interleaved(loopLike, () => serializeOnce(inputs))) })
  }
}

const sessionRows = async () => {
  const inputs = realistic<AppendInput>(Math.round(109_000 * scale))
  const sessionLoop = (observed: boolean) => () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const session = yield* Session.make({ id: "bench" })
      if (observed) yield* session.observe(() => Effect.void)
      for (const input of inputs) yield* session.append(input)
      if ((yield* session.nextSeq) !== inputs.length) throw new Error("lost events")
    })))
  out({ bench: "session.append", unit: "CPU ms", events: inputs.length, ...ratio(await interleaved(sessionLoop(false), () => serializeOnce(inputs))) })
  out({ bench: "session.append.observed", unit: "CPU ms", events: inputs.length, ...ratio(await interleaved(sessionLoop(true), () => serializeOnce(inputs))) })
}

const rows: Record<string, () => Promise<void>> = { sse: sseRows, e2e: e2eRows, appendAssembler: appendAssemblerRows, session: sessionRows }
for (const [name, row] of Object.entries(rows)) if (only === "" || only === name) await row()
