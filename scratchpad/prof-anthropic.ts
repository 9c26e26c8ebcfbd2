// Profiling helper (issue 17): Anthropic SSE → translator → assembler, 2,000 alternating thinking/text blocks.
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Anthropic from "../src/Adapter/Anthropic.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"

const parts: Array<string> = [`event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":10,"output_tokens":0}}}\n\n`]
for (let b = 0; b < 2000; b++) {
  const th = b % 2 === 0
  parts.push(`event: content_block_start\ndata: {"type":"content_block_start","index":${b},"content_block":${th ? `{"type":"thinking","thinking":""}` : `{"type":"text","text":""}`}}\n\n`)
  for (let i = 0; i < 50; i++) parts.push(`event: content_block_delta\ndata: {"type":"content_block_delta","index":${b},"delta":${th ? `{"type":"thinking_delta","thinking":"r${i % 10}  "}` : `{"type":"text_delta","text":"t${i % 10}  "}`}}\n\n`)
  parts.push(`event: content_block_stop\ndata: {"type":"content_block_stop","index":${b}}\n\n`)
}
parts.push(`event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`)
const bytes = new TextEncoder().encode(parts.join(""))
const pieces: Array<Uint8Array> = []
for (let i = 0; i < bytes.length; i += 16384) pieces.push(bytes.subarray(i, i + 16384))
const ours = () => Effect.runPromise(Stream.run(Anthropic.decodeResponse("anthropic")(Stream.fromArrays(...pieces.map((p) => [p]))), BlockAssembler.sink))
const plain = () => {
  const d = new TextDecoder(); let buf = ""; let text = ""
  for (const p of pieces) {
    buf += d.decode(p, { stream: true })
    let start = 0; let split = buf.indexOf("\n\n")
    while (split >= 0) {
      const ev = buf.slice(start, split); start = split + 2; split = buf.indexOf("\n\n", start)
      const at = ev.lastIndexOf("data: "); const j = JSON.parse(ev.slice(at + 6))
      text += j.delta?.text ?? j.delta?.thinking ?? ""
    }
    buf = buf.slice(start)
  }
  return text
}
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
for (let i = 0; i < 3; i++) { await ours(); plain() }
const a: number[] = [], b: number[] = []
for (let i = 0; i < 8; i++) { let t = cpu(); await ours(); a.push(cpu() - t); t = cpu(); plain(); b.push(cpu() - t) }
console.log("anthropic mixed ours", Math.min(...a).toFixed(1), "plain", Math.min(...b).toFixed(1), "ratio", (Math.min(...a) / Math.min(...b)).toFixed(2))
