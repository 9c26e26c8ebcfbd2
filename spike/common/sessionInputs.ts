/**
 * The session benches' inputs (`bench/session.bench.ts`'s realistic log) and the serialize-once
 * baseline (`bench/hotpaths.bench.ts`), typed structurally so both sides use them (no Effect import).
 */
export interface Input {
  readonly type: string
  readonly data: unknown
  readonly surfaceOp?: "append"
  readonly sourceEventSeqs?: ReadonlyArray<number>
}

const user = { kind: "user" } as const
const provenance = { provider: "bench", model: "bench-model" }

/** A realistic stream of append inputs: turns with 2 steps (a tool round trip, then text). */
export const realistic = <A>(n: number, chunksPerMessage = 40): Array<A> => {
  const out: Array<Input> = []
  let turn = 0
  while (out.length < n) {
    out.push({ type: "turn/start", data: { turn, trigger: { kind: "message", source: user } } })
    out.push({ type: "user/message", data: { content: [{ type: "text", text: `prompt ${turn}` }], source: user }, surfaceOp: "append" })
    for (let step = 1; step <= 2; step++) {
      out.push({ type: "step/start", data: { turn, step } })
      const first = out.length
      out.push({ type: "assistant/chunk", data: { turn, step, chunk: { type: "block-start", index: 0, blockType: "text" } } })
      for (let i = 0; i < chunksPerMessage - 2; i++) {
        out.push({ type: "assistant/chunk", data: { turn, step, chunk: { type: "text-delta", index: 0, text: "tok " } } })
      }
      out.push({
        type: "assistant/chunk",
        data: { turn, step, chunk: { type: "block-end", index: 0, block: { type: "text", text: "tok ".repeat(chunksPerMessage - 2) } } }
      })
      const sources = Array.from({ length: chunksPerMessage }, (_, i) => first + i)
      const callId = `call-${turn}`
      const content = step === 1
        ? [{ type: "text", text: "tok ".repeat(chunksPerMessage - 2) }, { type: "tool-call", id: callId, name: "echo", arguments: "{\"text\":\"ping\"}" }]
        : [{ type: "text", text: "tok ".repeat(chunksPerMessage - 2) }]
      out.push({ type: "assistant/message", data: { turn, step, content, provenance, usage: { inputTokens: 10, outputTokens: 40 } }, surfaceOp: "append", sourceEventSeqs: sources })
      if (step === 1) {
        out.push({ type: "tool/call", data: { turn, step, callId, name: "echo", arguments: "{\"text\":\"ping\"}" } })
        out.push({ type: "tool/result", data: { turn, step, callId, content: [{ type: "text", text: "echo: ping" }], isError: false }, surfaceOp: "append", sourceEventSeqs: [out.length - 1] })
      }
      out.push({ type: "step/end", data: { turn, step } })
    }
    out.push({ type: "turn/end", data: { turn, reason: { kind: "completed" } } })
    turn++
  }
  return out.slice(0, n) as Array<A>
}

/** Stamp seq/time, `JSON.stringify`, push: the floor of logging an event. */
export const serializeOnce = (inputs: ReadonlyArray<{ readonly type: string; readonly data: unknown }>): number => {
  const out: Array<string> = []
  let seq = 0
  for (const input of inputs) out.push(JSON.stringify({ type: input.type, seq: seq++, time: Date.now(), data: input.data }))
  return out.length
}
