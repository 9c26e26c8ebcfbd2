// Profiling helper (issue 17): the SSE → translator → assembler path on one workload, warm loops.
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as OpenAiCompatible from "../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"

const w = process.argv[2] ?? "text"
const frame = (delta: string) =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]}\n\n`
const parts: Array<string> = []
for (let i = 0; i < 100_000; i++) {
  parts.push(
    w === "text" ? frame(`{"content":"tk${i % 10} "}`)
    : w === "tool" ? frame(`{"tool_calls":[{"index":0,${i === 0 ? `"id":"c1","function":{"name":"x","arguments":"a"}` : `"function":{"arguments":"x${i % 10}"}`}}]}`)
    : frame(Math.floor(i / 50) % 2 === 0 ? `{"reasoning_content":"r${i % 10}  "}` : `{"content":"t${i % 10}  "}`)
  )
}
parts.push(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`)
const bytes = new TextEncoder().encode(parts.join(""))
const pieces: Array<Uint8Array> = []
for (let i = 0; i < bytes.length; i += 16384) pieces.push(bytes.subarray(i, i + 16384))
const decode = OpenAiCompatible.decodeResponse(["reasoning_content"], "deepseek")
const ours = () => Effect.runPromise(Stream.run(decode(Stream.fromArrays(...pieces.map((p) => [p]))), BlockAssembler.sink))
const plain = () => {
  const d = new TextDecoder(); let buf = ""; let text = ""
  for (const p of pieces) {
    buf += d.decode(p, { stream: true })
    let start = 0; let split = buf.indexOf("\n\n")
    while (split >= 0) {
      const ev = buf.slice(start, split); start = split + 2; split = buf.indexOf("\n\n", start)
      const data = ev.slice(6); if (data === "[DONE]") break
      const j = JSON.parse(data); const de = j.choices[0].delta
      text += de.content ?? de.reasoning_content ?? de.tool_calls?.[0]?.function?.arguments ?? ""
    }
    buf = buf.slice(start)
  }
  return text
}
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
for (let i = 0; i < 3; i++) { await ours(); plain() }
const a: number[] = [], b: number[] = []
for (let i = 0; i < 8; i++) {
  let t = cpu(); await ours(); a.push(cpu() - t)
  t = cpu(); plain(); b.push(cpu() - t)
}
console.log(w, "ours", Math.min(...a).toFixed(1), "plain", Math.min(...b).toFixed(1), "ratio", (Math.min(...a) / Math.min(...b)).toFixed(2))
