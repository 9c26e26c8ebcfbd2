// Profiling helper (issue 17): the OpenAI-compatible adapter over loopback vs plain fetch, text workload.
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as OpenAiCompatible from "../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as Message from "../src/Llm/Message.js"
import * as FakeProvider from "../test/support/FakeProvider.js"

const parts: Array<string> = []
for (let i = 0; i < 50_000; i++) parts.push(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tk${i % 10} "},"logprobs":null,"finish_reason":null}]}\n\n`)
parts.push(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`)
const body = parts.join("")
const mode = process.argv[2] ?? "both"
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const fake = yield* FakeProvider.make()
  const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: Redacted.make("k"), baseUrl: fake.url })
  const request: Message.GenerateOptions = { provider: "deepseek", model: "deepseek-chat", messages: [Message.user("hi")] }
  const reply = FakeProvider.sse(body, { maxPiece: 16 * 1024 })
  const ours = Effect.flatMap(fake.enqueue(reply), () => Stream.run(adapter.stream(request), BlockAssembler.sink))
  const plain = Effect.flatMap(fake.enqueue(reply), () => Effect.promise(async () => {
    const r = await fetch(`${fake.url}/chat/completions`, { method: "POST", body: "{}" })
    const reader = (r.body as ReadableStream<Uint8Array>).getReader(); const d = new TextDecoder(); let buf = ""; let text = ""; let reads = 0
    for (;;) { const { done, value } = await reader.read(); if (done) break; reads++
      buf += d.decode(value, { stream: true }); let start = 0; let split = buf.indexOf("\n\n")
      while (split >= 0) { const ev = buf.slice(start, split); start = split + 2; split = buf.indexOf("\n\n", start); const data = ev.slice(6); if (data === "[DONE]") continue; const j = JSON.parse(data); text += j.choices[0].delta.content ?? "" }
      buf = buf.slice(start) }
    return reads
  }))
  for (let i = 0; i < 2; i++) { yield* ours; yield* plain }
  const a: number[] = [], b: number[] = []
  for (let i = 0; i < 4; i++) {
    if (mode !== "plain") { const t = cpu(); yield* ours; a.push(cpu() - t) }
    if (mode !== "ours") { const t = cpu(); yield* plain; b.push(cpu() - t) }
  }
  console.log("ours", Math.min(...a).toFixed(1), "plain", Math.min(...b).toFixed(1))
})))
