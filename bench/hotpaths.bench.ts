/**
 * Hot paths (issue 17): every row of the issue's table, each a ratio to a plain baseline measured
 * in the same run (timings interleave value and baseline; best of the runs, so machine noise hits
 * both alike). Workloads: `text` = 200k text deltas of 4 chars; `tool` = one tool call of 50k
 * argument fragments; `mixed` = 100k deltas in 2,000 alternating reasoning/text blocks.
 *
 * - `hotpaths/sse/<w>`: SSE bytes (16 KiB reads) → `Sse.decode` → the translator →
 *   `BlockAssembler.sink`, × a `JSON.parse` loop over the same bytes (decode, split on blank lines,
 *   one `JSON.parse` per data line, concatenate the deltas). OpenAI-compatible wire (DeepSeek
 *   `reasoning_content` for reasoning: one reasoning and one text block, since that wire has no
 *   block boundaries); `hotpaths/sse-anthropic/mixed` is the 2,000-block mix on Anthropic's wire.
 *   Target ≤ 1.5.
 * - `hotpaths/e2e/<w>`: the same through the OpenAI-compatible adapter over loopback HTTP (its own
 *   undici client) × plain `fetch` + the same SSE split/parse loop, same server. Target ≤ 1.25.
 * - `hotpaths/append/<w>`: `Session.append` per `assistant/chunk` event × serialize-once (stamp
 *   seq/time, `JSON.stringify`, push). Target ≤ 1.5.
 * - `hotpaths/append-assembler/<w>`: what the loop does per chunk (batches of 32: `appendAll` of the
 *   batch + `BlockAssembler.sink`) × serialize-once. Target ≤ 2.
 * - `hotpaths/derive/<n>`: µs per `deriveMessages` after one more turn, logs of 1k/10k/100k events;
 *   baseline = the 1k figure (flatness); target ≤ 20 µs at every size (`targetUs`).
 * - `hotpaths/jsonl-load/100k`, `hotpaths/jsonl-resume/100k`: the JSONL backend's `load`, and
 *   load + seed (`Session.make` with the loaded log), × `readFile` + split + `JSON.parse`. Targets
 *   ≤ 1.3 / ≤ 2. `hotpaths/jsonl-write/100k`: the write path as it is (one fsync'd append per
 *   turn) × plain `fs` (append + fsync per turn on one open file). Target ≤ 2.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as Anthropic from "../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../src/Llm/BlockAssembler.js"
import * as Message from "../src/Llm/Message.js"
import type * as StreamChunk from "../src/Llm/StreamChunk.js"
import * as Jsonl from "../src/Session/persistence/Jsonl.js"
import * as Session from "../src/Session/Session.js"
import type { AppendInput } from "../src/Session/SessionEvent.js"
import * as FakeProvider from "../test/support/FakeProvider.js"
import { bigLog, header } from "../test/support/sessionLog.js"
import { jsonlBackend, turns as turnBatches } from "./Backends.js"
import { report } from "./Bench.js"

const RUNS = 3
const quick = process.env["HOTPATHS_QUICK"] === "1"
const scale = quick ? 0.1 : 1

type Workload = "text" | "tool" | "mixed"
const workloads: ReadonlyArray<Workload> = ["text", "tool", "mixed"]

// ---------------------------------------------------------------------------------------------
// Wire bodies

const openAiBody = (w: Workload): string => {
  const parts: Array<string> = []
  const frame = (delta: string) =>
    `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]}\n\n`
  if (w === "text") {
    const n = Math.round(200_000 * scale)
    for (let i = 0; i < n; i++) parts.push(frame(`{"content":"tk${i % 10} "}`))
  } else if (w === "tool") {
    const n = Math.round(50_000 * scale)
    parts.push(frame(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write","arguments":"{\\"k\\":\\""}}]}`))
    for (let i = 0; i < n; i++) parts.push(frame(`{"tool_calls":[{"index":0,"function":{"arguments":"x${i % 10}"}}]}`))
    parts.push(frame(`{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]}`))
  } else {
    const blocks = Math.round(2_000 * scale)
    for (let b = 0; b < blocks; b++) {
      for (let i = 0; i < 50; i++) parts.push(frame(b % 2 === 0 ? `{"reasoning_content":"r${i % 10}  "}` : `{"content":"t${i % 10}  "}`))
    }
  }
  parts.push(
    `data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"${w === "tool" ? "tool_calls" : "stop"}"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}\n\n`
  )
  parts.push("data: [DONE]\n\n")
  return parts.join("")
}

const anthropicMixedBody = (): string => {
  const parts: Array<string> = [
    `event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":10,"output_tokens":0}}}\n\n`
  ]
  const blocks = Math.round(2_000 * scale)
  for (let b = 0; b < blocks; b++) {
    const thinking = b % 2 === 0
    parts.push(
      `event: content_block_start\ndata: {"type":"content_block_start","index":${b},"content_block":${
        thinking ? `{"type":"thinking","thinking":""}` : `{"type":"text","text":""}`
      }}\n\n`
    )
    for (let i = 0; i < 50; i++) {
      parts.push(
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":${b},"delta":${
          thinking ? `{"type":"thinking_delta","thinking":"r${i % 10}  "}` : `{"type":"text_delta","text":"t${i % 10}  "}`
        }}\n\n`
      )
    }
    if (thinking) parts.push(`event: content_block_delta\ndata: {"type":"content_block_delta","index":${b},"delta":{"type":"signature_delta","signature":"sig"}}\n\n`)
    parts.push(`event: content_block_stop\ndata: {"type":"content_block_stop","index":${b}}\n\n`)
  }
  parts.push(`event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}\n\n`)
  parts.push(`event: message_stop\ndata: {"type":"message_stop"}\n\n`)
  return parts.join("")
}

/** One read per batch, as the HTTP body delivers them. */
const reads = (body: ReadonlyArray<Uint8Array>) => Stream.fromArrays(...body.map((b) => [b]))

const pieces = (body: string, size = 16 * 1024): Array<Uint8Array> => {
  const bytes = new TextEncoder().encode(body)
  const out: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

// ---------------------------------------------------------------------------------------------
// Baselines

/** The floor: decode, split on blank lines, one `JSON.parse` per data line, concatenate deltas. */
class PlainSse {
  private readonly decoder = new TextDecoder()
  private buffer = ""
  text = ""
  events = 0
  done = false
  feed(bytes: Uint8Array): void {
    this.buffer += this.decoder.decode(bytes, { stream: true })
    let start = 0
    let split = this.buffer.indexOf("\n\n")
    while (split >= 0) {
      const event = this.buffer.slice(start, split)
      start = split + 2
      split = this.buffer.indexOf("\n\n", start)
      const at = event.lastIndexOf("data: ")
      if (at < 0) continue
      const data = event.slice(at + 6)
      if (data === "[DONE]") {
        this.done = true
        return
      }
      const json = JSON.parse(data) as {
        choices?: Array<{ delta?: { content?: string; reasoning_content?: string; tool_calls?: Array<{ function?: { arguments?: string } }> } }>
        delta?: { text?: string; thinking?: string }
        type?: string
      }
      const delta = json.choices?.[0]?.delta
      if (delta !== undefined) {
        this.text += delta.content ?? delta.reasoning_content ?? delta.tool_calls?.[0]?.function?.arguments ?? ""
      } else if (json.delta !== undefined) {
        this.text += json.delta.text ?? json.delta.thinking ?? ""
      }
      if (json.type === "message_stop") this.done = true
      this.events++
    }
    this.buffer = this.buffer.slice(start)
  }
}

const plainLoop = (chunks: ReadonlyArray<Uint8Array>): number => {
  const p = new PlainSse()
  for (const c of chunks) {
    p.feed(c)
    if (p.done) break
  }
  if (!p.done || p.text.length === 0) throw new Error("plain loop read nothing")
  return p.events
}

const serializeOnce = (inputs: ReadonlyArray<AppendInput>): number => {
  const out: Array<string> = []
  let seq = 0
  for (const input of inputs) out.push(JSON.stringify({ type: input.type, seq: seq++, time: Date.now(), data: input.data }))
  return out.length
}

/** CPU milliseconds (user + system) of this process: robust to other processes on a loaded machine. */
const cpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** Interleaved timing of a value and a baseline; best (minimum) CPU ms of each. */
const interleaved = async (
  value: () => Promise<unknown> | unknown,
  baseline: () => Promise<unknown> | unknown,
  runs = RUNS
): Promise<{ value: number; baseline: number }> => {
  await value()
  await baseline()
  const v: Array<number> = []
  const b: Array<number> = []
  for (let i = 0; i < runs; i++) {
    let t0 = cpuMs()
    await value()
    v.push(cpuMs() - t0)
    t0 = cpuMs()
    await baseline()
    b.push(cpuMs() - t0)
  }
  return { value: Math.min(...v), baseline: Math.min(...b) }
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits

// ---------------------------------------------------------------------------------------------
// Rows

const sseRows = async () => {
  for (const w of workloads) {
    const body = pieces(openAiBody(w))
    const decode = OpenAiCompatible.decodeResponse(["reasoning_content"], "deepseek")
    const ours = () => Effect.runPromise(Stream.run(decode(reads(body)), BlockAssembler.sink))
    const check = await ours()
    if (check.blocks.length === 0) throw new Error(`sse/${w}: nothing assembled`)
    const t = await interleaved(ours, () => plainLoop(body))
    report({ bench: `hotpaths/sse/${w}`, unit: "CPU ms (lower is better)", value: round(t.value), baseline: round(t.baseline), target: "<= 1.5" })
  }
  const body = pieces(anthropicMixedBody())
  const ours = () => Effect.runPromise(Stream.run(Anthropic.decodeResponse("anthropic")(reads(body)), BlockAssembler.sink))
  const check = await ours()
  if (check.blocks.length !== Math.round(2_000 * scale)) throw new Error(`sse-anthropic: ${check.blocks.length} blocks`)
  const t = await interleaved(ours, () => plainLoop(body))
  report({ bench: "hotpaths/sse-anthropic/mixed", unit: "CPU ms (lower is better)", value: round(t.value), baseline: round(t.baseline), target: "<= 1.5" })
}

const plainFetch = async (url: string): Promise<number> => {
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true })
  })
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const p = new PlainSse()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (!p.done) p.feed(value)
  }
  if (!p.done) throw new Error("plain client saw no [DONE]")
  return p.events
}

const e2eRows = () =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const fake = yield* FakeProvider.make()
    const adapter = yield* OpenAiCompatible.make({ profile: "deepseek", apiKey: Redacted.make("bench"), baseUrl: fake.url })
    const request: Message.GenerateOptions = { provider: "deepseek", model: "deepseek-chat", messages: [Message.user("hi")] }
    for (const w of workloads) {
      const reply = FakeProvider.sse(openAiBody(w), { maxPiece: 16 * 1024 })
      const ours = () =>
        Effect.runPromise(Effect.flatMap(fake.enqueue(reply), () => Stream.run(adapter.stream(request), BlockAssembler.sink)))
      const plain = () => Effect.runPromise(fake.enqueue(reply)).then(() => plainFetch(fake.url))
      const t = yield* Effect.promise(() => interleaved(ours, plain))
      report({ bench: `hotpaths/e2e/${w}`, unit: "CPU ms (lower is better)", value: round(t.value), baseline: round(t.baseline), target: "<= 1.25" })
    }
  })))

/** The chunks the OpenAI-compatible translator emits for a workload (what the loop logs). */
const chunksOf = (w: Workload): Promise<ReadonlyArray<StreamChunk.StreamChunk>> =>
  Effect.runPromise(
    Stream.runCollect(OpenAiCompatible.decodeResponse(["reasoning_content"], "deepseek")(reads(pieces(openAiBody(w)))))
  )

const inputsOf = (chunks: ReadonlyArray<StreamChunk.StreamChunk>): Array<AppendInput> =>
  chunks.map((chunk) => ({ type: "assistant/chunk", data: { turn: 1, step: 1, chunk } }))

const appendRows = async () => {
  for (const w of workloads) {
    const chunks = await chunksOf(w)
    const inputs = inputsOf(chunks)
    // the session's own cost per event: `appendAll` over batches of 32 (as the loop hands them)
    const batchesOfInputs: Array<ReadonlyArray<AppendInput>> = []
    for (let i = 0; i < inputs.length; i += 32) batchesOfInputs.push(inputs.slice(i, i + 32))
    const perEvent = () =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const session = yield* Session.make({ id: "bench" })
        for (const batch of batchesOfInputs) yield* session.appendAll(batch)
      })))
    const t = await interleaved(perEvent, () => serializeOnce(inputs))
    report({ bench: `hotpaths/append/${w}`, unit: "CPU ms (lower is better)", value: round(t.value), baseline: round(t.baseline), events: inputs.length, target: "<= 1.5" })

    const batches: Array<ReadonlyArray<StreamChunk.StreamChunk>> = []
    for (let i = 0; i < chunks.length; i += 32) batches.push(chunks.slice(i, i + 32))
    const loopLike = () =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const session = yield* Session.make({ id: "bench" })
        return yield* Stream.fromArrays(...batches).pipe(
          Stream.mapArrayEffect((cs) =>
            Effect.as(session.appendAll(cs.map((chunk) => ({ type: "assistant/chunk" as const, data: { turn: 1, step: 1, chunk } }))), cs)
          ),
          Stream.run(BlockAssembler.sink)
        )
      })))
    const u = await interleaved(loopLike, () => serializeOnce(inputs))
    report({ bench: `hotpaths/append-assembler/${w}`, unit: "CPU ms (lower is better)", value: round(u.value), baseline: round(u.baseline), events: inputs.length, target: "<= 2" })
  }
}

/** One realistic turn: user prompt, a step streaming 40 chunks, the assistant message. */
const turnInputs = (turn: number): Array<AppendInput> => {
  const user = { kind: "user" } as const
  const out: Array<AppendInput> = [
    { type: "turn/start", data: { turn, trigger: { kind: "message", source: user } } },
    { type: "user/message", data: { content: [{ type: "text", text: `prompt ${turn}` }], source: user }, surfaceOp: "append" },
    { type: "step/start", data: { turn, step: 1 } }
  ]
  return out
}

const deriveRows = async () => {
  const sizes = [1_000, 10_000, 100_000].map((n) => Math.round(n * scale))
  const perSize: Array<number> = []
  for (const size of sizes) {
    const seed = bigLog(size)
    const us = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const session = yield* Session.make({ header: header("bench-derive"), seed })
      yield* session.deriveMessages
      const times: Array<number> = []
      let turn = (yield* session.nextTurn)
      for (let i = 0; i < 200; i++) {
        // one more turn: prompt, a step of 40 chunks, the assistant message, turn end
        const first = yield* session.nextSeq
        const inputs: Array<AppendInput> = turnInputs(turn)
        for (let c = 0; c < 40; c++) inputs.push({ type: "assistant/chunk", data: { turn, step: 1, chunk: { type: "text-delta", index: 0, text: "tok " } } })
        const sources = Array.from({ length: 40 }, (_, k) => first + 3 + k)
        inputs.push(
          {
            type: "assistant/message",
            data: { turn, step: 1, content: [{ type: "text", text: "tok ".repeat(40) }], provenance: { provider: "bench", model: "m" } },
            surfaceOp: "append",
            sourceEventSeqs: sources
          },
          { type: "step/end", data: { turn, step: 1 } },
          { type: "turn/end", data: { turn, reason: { kind: "completed" } } }
        )
        yield* session.appendAll(inputs)
        turn++
        const t0 = performance.now()
        const messages = yield* session.deriveMessages
        times.push(performance.now() - t0)
        if (messages.length === 0) throw new Error("no messages")
      }
      times.sort((a, b) => a - b)
      return (times[Math.floor(times.length / 2)] as number) * 1000
    })))
    perSize.push(us)
  }
  sizes.forEach((size, i) =>
    report({
      bench: `hotpaths/derive/${size}`,
      unit: "µs per deriveMessages after one more turn (lower is better); baseline = the smallest log",
      value: round(perSize[i] as number),
      baseline: round(perSize[0] as number),
      targetUs: 20
    })
  )
}

const jsonlRows = async () => {
  const N = Math.round(100_000 * scale)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "hotpaths-"))
  const id = "bench-hot" as never
  try {
    const events = bigLog(N)
    const head = header(id, "/bench")
    const backend = jsonlBackend(root)
    // write: one fsync'd append per turn (as the flush at each turn end does), then the open tail
    const turns = turnBatches(events)
    const cut = turns.reduce((n, t) => n + t.length, 0)
    if (cut < events.length) turns.push(events.slice(cut))
    let round_ = 0
    const writeOurs = () =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const p = yield* backend
        const sid = `bench-w${round_++}` as never
        yield* p.create(header(sid, "/bench"))
        for (const batch of turns) yield* p.append(sid, batch)
      })))
    const plainFile = path.join(root, "plain.jsonl")
    const writePlain = () => {
      const fd = fs.openSync(plainFile, "w")
      try {
        for (const batch of turns) {
          fs.writeSync(fd, batch.map((e) => JSON.stringify(e)).join("\n") + "\n")
          fs.fsyncSync(fd)
        }
      } finally {
        fs.closeSync(fd)
      }
    }
    const w = await interleaved(writeOurs, writePlain, 2)
    report({ bench: `hotpaths/jsonl-write/${N}`, unit: "CPU ms (lower is better)", value: round(w.value), baseline: round(w.baseline), target: "<= 2 (write path: jsonl-io's)" })

    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const p = yield* backend
      yield* p.create(head)
      yield* p.append(id, events)
    })))
    const file = path.join(root, Jsonl.bucketOf("/bench"), `${id}.jsonl`)
    const plainLoad = async () => {
      const text = await fsp.readFile(fs.existsSync(file) ? file : plainFile, "utf8")
      const out: Array<unknown> = []
      for (const line of text.split("\n")) if (line.length > 0) out.push(JSON.parse(line))
      return out.length
    }
    const load = () => Effect.runPromise(Effect.scoped(Effect.flatMap(backend, (p) => p.load(id))))
    const l = await interleaved(load, plainLoad)
    report({ bench: `hotpaths/jsonl-load/${N}`, unit: "CPU ms (lower is better)", value: round(l.value), baseline: round(l.baseline), target: "<= 1.3", file: fs.existsSync(file) ? "log" : "plain" })
    const resume = () =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const p = yield* backend
        const loaded = yield* p.load(id)
        const session = yield* Session.make({ header: loaded.header, seed: loaded.events })
        return yield* session.nextSeq
      })))
    const r = await interleaved(resume, plainLoad)
    report({ bench: `hotpaths/jsonl-resume/${N}`, unit: "CPU ms (lower is better)", value: round(r.value), baseline: round(r.baseline), target: "<= 2" })
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

/**
 * Runs the hot-path benchmarks. `HOTPATHS_QUICK=1`: a tenth of the sizes (smoke run);
 * `HOTPATHS_ONLY=sse,jsonl`: only those groups (sse, e2e, append, derive, jsonl).
 */
export async function run(): Promise<void> {
  const only = (process.env["HOTPATHS_ONLY"] ?? "").split(",").filter((x) => x !== "")
  const groups: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
    ["sse", sseRows],
    ["e2e", e2eRows],
    ["append", appendRows],
    ["derive", deriveRows],
    ["jsonl", jsonlRows]
  ]
  for (const [name, rows] of groups) if (only.length === 0 || only.includes(name)) await rows()
}
