/**
 * End-to-end adapter throughput: N chat-completions chunks streamed by the local fake provider
 * (real `node:http` on 127.0.0.1, body written in pieces of up to 16 KiB) through
 * `HttpClient` (undici) + `Sse.decode` + the DeepSeek translator + `BlockAssembler.sink`, against a
 * plain client in the same run: `fetch`, split on blank lines, `JSON.parse`, concatenate deltas.
 * Both read the same body from the same server; value and baseline are events per second
 * (median of the timed runs). Target: ratio ≥ 0.5.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as OpenAiCompatible from "../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as Message from "../src/Llm/Message.js"
import * as FakeProvider from "../test/support/FakeProvider.js"
import { median, report } from "./Bench.js"

const N = 50_000
const RUNS = 5

const makeBody = (n: number): string => {
  const parts: Array<string> = []
  for (let i = 0; i < n; i++) {
    parts.push(
      `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-chat","choices":[{"index":0,"delta":{"content":"tok${
        i % 10
      } "},"logprobs":null,"finish_reason":null}],"usage":null}\n\n`
    )
  }
  parts.push(
    `data: {"id":"c","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":${n}}}\n\n`
  )
  parts.push("data: [DONE]\n\n")
  return parts.join("")
}

const plainClient = async (url: string): Promise<number> => {
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ model: "deepseek-chat", messages: [{ role: "user", content: "hi" }], stream: true })
  })
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let text = ""
  let events = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let split = buffer.indexOf("\n\n")
    while (split >= 0) {
      const event = buffer.slice(0, split)
      buffer = buffer.slice(split + 2)
      split = buffer.indexOf("\n\n")
      if (!event.startsWith("data: ")) continue
      const data = event.slice(6)
      if (data === "[DONE]") return events
      const json = JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }
      text += json.choices[0]?.delta.content ?? ""
      events++
    }
  }
  if (text.length === 0) throw new Error("plain client read nothing")
  return events
}

export async function run(): Promise<void> {
  const body = makeBody(N)
  const program = Effect.gen(function*() {
    const fake = yield* FakeProvider.make()
    const reply = FakeProvider.sse(body, { maxPiece: 16 * 1024 })
    const adapter = yield* OpenAiCompatible.make({
      profile: "deepseek",
      apiKey: Redacted.make("bench"),
      baseUrl: fake.url
    })
    const request: Message.GenerateOptions = {
      provider: "deepseek",
      model: "deepseek-chat",
      messages: [Message.user("hi")]
    }
    const viaAdapter = Effect.gen(function*() {
      yield* fake.enqueue(reply)
      const t0 = performance.now()
      const assembled = yield* adapter.stream(request).pipe(Stream.run(BlockAssembler.sink))
      const ms = performance.now() - t0
      if (assembled.blocks.length !== 1 || assembled.usage?.outputTokens !== N) {
        return yield* Effect.die(new Error("adapter assembled the wrong response"))
      }
      return ms
    })
    const viaPlain = Effect.gen(function*() {
      yield* fake.enqueue(reply)
      const t0 = performance.now()
      const events = yield* Effect.promise(() => plainClient(fake.url))
      const ms = performance.now() - t0
      if (events !== N + 1) return yield* Effect.die(new Error(`plain client saw ${events} events`))
      return ms
    })
    // warm-up, then interleaved timed runs
    yield* viaAdapter
    yield* viaPlain
    const adapterTimes: Array<number> = []
    const plainTimes: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      adapterTimes.push(yield* viaAdapter)
      plainTimes.push(yield* viaPlain)
    }
    return { adapter: median(adapterTimes), plain: median(plainTimes) }
  }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

  const { adapter, plain } = await Effect.runPromise(program)
  report({
    bench: "adapter.e2e-events-per-s",
    unit: "events/s (higher is better)",
    value: Math.round((N + 1) / (adapter / 1000)),
    baseline: Math.round((N + 1) / (plain / 1000)),
    events: N + 1,
    bodyBytes: body.length,
    adapterMs: Math.round(adapter),
    plainMs: Math.round(plain)
  })
}
