/**
 * What both sides of the Effect 4 spike measure with (no Effect import, so v3 and v4 processes run the
 * same measuring code): main-thread CPU from schedstat (as `scratchpad/many-agents.ts`), heap after GC,
 * the plain SSE baselines of `bench/hotpaths.bench.ts`, and a plain loopback SSE server in the manner
 * of `test/support/FakeProvider.ts` (pieces of 1..16 KiB, a tick between writes).
 */
import { readFileSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

export const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

/** Main-thread CPU in µs (Linux schedstat, ns resolution; else process CPU). */
export const mainThreadCpu = (): number => {
  try {
    const schedstat = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8")
    const ns = Number(schedstat.split(" ")[0])
    if (Number.isFinite(ns) && ns > 0) return ns / 1000
  } catch {
    // below
  }
  const u = process.cpuUsage()
  return u.user + u.system
}

export const heap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Process CPU in ms (user + system). */
export const cpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits

/** Interleaved timing of a value and a baseline; best (minimum) CPU ms of each (as hotpaths.bench.ts). */
export const interleaved = async (
  value: () => Promise<unknown> | unknown,
  baseline: () => Promise<unknown> | unknown,
  runs = 3
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

// ---------------------------------------------------------------------------------------------
// Wire bodies (bench/hotpaths.bench.ts)

export type Workload = "text" | "tool" | "mixed"
export const workloads: ReadonlyArray<Workload> = ["text", "tool", "mixed"]

export const openAiBody = (w: Workload, scale = 1): string => {
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

export const pieces = (body: string, size = 16 * 1024): Array<Uint8Array> => {
  const bytes = new TextEncoder().encode(body)
  const out: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

/** The floor: decode, split on blank lines, one `JSON.parse` per data line, concatenate deltas. */
export class PlainSse {
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
      }
      const delta = json.choices?.[0]?.delta
      if (delta !== undefined) {
        this.text += delta.content ?? delta.reasoning_content ?? delta.tool_calls?.[0]?.function?.arguments ?? ""
      }
      this.events++
    }
    this.buffer = this.buffer.slice(start)
  }
}

export const plainLoop = (chunks: ReadonlyArray<Uint8Array>): number => {
  const p = new PlainSse()
  for (const c of chunks) {
    p.feed(c)
    if (p.done) break
  }
  if (!p.done || p.text.length === 0) throw new Error("plain loop read nothing")
  return p.events
}

export const plainFetch = async (url: string): Promise<number> => {
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

// ---------------------------------------------------------------------------------------------
// A loopback SSE server (the FakeProvider's `sse` reply: pieces of 1..maxPiece bytes, a tick between)

const prng = (seed: number) => {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

export interface SseServer {
  readonly url: string
  /** the body the next requests get */
  setBody(body: string): void
  close(): Promise<void>
}

export const sseServer = async (maxPiece = 16 * 1024): Promise<SseServer> => {
  let body = new Uint8Array(0)
  const server = Http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.flushHeaders()
      const random = prng(42)
      const data = body
      void (async () => {
        let offset = 0
        while (offset < data.length) {
          if (res.destroyed) return
          const size = 1 + Math.floor(random() * maxPiece)
          res.write(data.subarray(offset, offset + size))
          offset += size
          await new Promise((resolve) => setImmediate(resolve))
        }
        res.end()
      })()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    setBody: (text) => {
      body = new TextEncoder().encode(text)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** `--name value` from argv. */
export const flag = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback
}
