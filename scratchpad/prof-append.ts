// Profiling helper (issue 17): Session.appendAll over batches of 32 assistant/chunk inputs vs serialize-once.
import * as Effect from "effect/Effect"
import * as Session from "../src/Session/Session.js"
import type { AppendInput } from "../src/Session/SessionEvent.js"
import * as S from "../src/Llm/StreamChunk.js"

const w = process.argv[2] ?? "text"
const inputs: Array<AppendInput> = []
for (let i = 0; i < 100_000; i++) {
  const chunk = w === "text" ? S.textDelta(0, `tk${i % 10} `) : w === "tool" ? S.toolCallDelta(0, "call_1", `x${i % 10}`, "write") : (Math.floor(i / 50) % 2 === 0 ? S.reasoningDelta(0, "r  ") : S.textDelta(1, "t  "))
  inputs.push({ type: "assistant/chunk", data: { turn: 1, step: 1, chunk } })
}
const batches: Array<ReadonlyArray<AppendInput>> = []
for (let i = 0; i < inputs.length; i += 32) batches.push(inputs.slice(i, i + 32))
const ours = () => Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const session = yield* Session.make({ id: "bench" })
  for (const b of batches) yield* session.appendAll(b)
})))
const plain = () => { const out: string[] = []; let seq = 0; for (const x of inputs) out.push(JSON.stringify({ type: x.type, seq: seq++, time: Date.now(), data: x.data })); return out.length }
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
for (let i = 0; i < 3; i++) { await ours(); plain() }
const a: number[] = [], b: number[] = []
for (let i = 0; i < 8; i++) { let t = cpu(); await ours(); a.push(cpu() - t); t = cpu(); plain(); b.push(cpu() - t) }
console.log(w, "ours", Math.min(...a).toFixed(1), "plain", Math.min(...b).toFixed(1), "ratio", (Math.min(...a) / Math.min(...b)).toFixed(2))
