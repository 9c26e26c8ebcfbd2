/**
 * Fake providers that simulate prompt caching the way the services describe it, and answer in their real wire
 * formats (issue 30). A real `node:http` server on `127.0.0.1:0`, scoped.
 *
 * Token model (both): a request is rendered to text, one token per 4 characters (a typical tokenizer's average);
 * a cache entry is keyed by the model and a chained SHA-1 of the rendered text up to a position.
 *
 * - DeepSeek (`POST /chat/completions`, chat-completions SSE): the rendered prompt is the tool list, then each
 *   message, as JSON. DeepSeek's context cache matches the longest prefix shared with EARLIER requests, in units
 *   of {@link deepSeekBlockTokens} tokens; every block-aligned prefix of a request is stored for later ones.
 *   Usage: `prompt_tokens`, `prompt_cache_hit_tokens` (the matched blocks), `prompt_cache_miss_tokens`,
 *   `completion_tokens`, on the last chunk (`stream_options.include_usage`).
 * - Anthropic (`POST /v1/messages`, Messages SSE): the prompt is a list of blocks in the order tools → system →
 *   messages (each tool definition, system text block and content block is one block, without its
 *   `cache_control`). Only positions marked by a `cache_control` breakpoint are written, and only when the prefix
 *   up to them reaches the model's minimum cacheable length ({@link anthropicMinTokens}: 1024, Haiku 2048); a
 *   read looks for an entry at each breakpoint and up to 20 blocks before it (the API's lookback) and takes the
 *   longest; an entry lives for its TTL (5 minutes, or `ttl: "1h"`) and a read refreshes it. Usage on
 *   `message_start`: `input_tokens` (after the last breakpoint and not read), `cache_read_input_tokens`,
 *   `cache_creation_input_tokens` (from the read point to the last breakpoint).
 *
 * What the model answers is decided by a {@link Responder}; the simulated clock advances by `stepMs` per
 * request (TTL expiry without waiting).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** DeepSeek's cache unit. */
export const deepSeekBlockTokens = 64

/** Anthropic's minimum cacheable prompt by model (Haiku 2048, others 1024). */
export const anthropicMinTokens = (model: string): number => model.includes("haiku") ? 2048 : 1024

/** The API's lookback for cache hits before a breakpoint, in blocks. */
export const anthropicLookbackBlocks = 20

const tokens = (text: string): number => Math.ceil(text.length / 4)
const chain = (previous: string, text: string): string => createHash("sha1").update(previous).update(text).digest("hex")

type Json = unknown
type Rec = Record<string, unknown>
const isRec = (u: unknown): u is Rec => typeof u === "object" && u !== null && !Array.isArray(u)
const arr = (u: unknown): ReadonlyArray<unknown> => Array.isArray(u) ? u : []

/** The usage a simulated request was charged, in the provider's own field names (as sent on the wire). */
export type WireUsage = Readonly<Record<string, number>>

/** DeepSeek's prefix cache: the longest block-aligned prefix shared with an earlier request. */
export const makeDeepSeekCache = () => {
  const stored = new Set<string>()
  return (body: Rec): WireUsage => {
    const rendered = [JSON.stringify(body["tools"] ?? []), ...arr(body["messages"]).map((m) => JSON.stringify(m))].join("")
    const total = tokens(rendered)
    const blockChars = deepSeekBlockTokens * 4
    let hash = String(body["model"])
    let hit = 0
    let matching = true
    for (let at = 0; at + blockChars <= rendered.length; at += blockChars) {
      hash = chain(hash, rendered.slice(at, at + blockChars))
      if (matching && stored.has(hash)) hit += deepSeekBlockTokens
      else matching = false
      stored.add(hash)
    }
    return { prompt_tokens: total, prompt_cache_hit_tokens: hit, prompt_cache_miss_tokens: total - hit }
  }
}

const withoutControl = (block: unknown): unknown => {
  if (!isRec(block)) return block
  const { cache_control: _, ...rest } = block
  return rest
}

interface Block {
  readonly hash: string
  /** tokens up to and including this block */
  readonly cumulative: number
  readonly ttlMs: number | undefined
}

/** Anthropic's breakpoint cache (see the module doc); `now()` is the simulated clock. */
export const makeAnthropicCache = (now: () => number) => {
  const entries = new Map<string, { expires: number; ttlMs: number }>()
  return (body: Rec): WireUsage => {
    const model = String(body["model"])
    const flat: Array<{ readonly text: string; readonly control: unknown }> = []
    for (const t of arr(body["tools"])) flat.push({ text: JSON.stringify(withoutControl(t)), control: isRec(t) ? t["cache_control"] : undefined })
    const system = body["system"]
    if (typeof system === "string") flat.push({ text: JSON.stringify({ type: "text", text: system }), control: undefined })
    for (const s of arr(system)) flat.push({ text: JSON.stringify(withoutControl(s)), control: isRec(s) ? s["cache_control"] : undefined })
    for (const m of arr(body["messages"])) {
      if (!isRec(m)) continue
      const content = m["content"]
      const blocks = typeof content === "string" ? [{ type: "text", text: content }] : arr(content)
      blocks.forEach((b, i) =>
        flat.push({ text: (i === 0 ? `${String(m["role"])}:` : "") + JSON.stringify(withoutControl(b)), control: isRec(b) ? b["cache_control"] : undefined })
      )
    }
    const blocks: Array<Block> = []
    let hash = model
    let cumulative = 0
    for (const b of flat) {
      hash = chain(hash, b.text)
      cumulative += tokens(b.text)
      const ttlMs = isRec(b.control) ? (b.control["ttl"] === "1h" ? 3_600_000 : 300_000) : undefined
      blocks.push({ hash, cumulative, ttlMs })
    }
    const t = now()
    const fresh = (h: string) => {
      const e = entries.get(h)
      return e !== undefined && e.expires > t ? e : undefined
    }
    const breakpoints = blocks.flatMap((b, i) => b.ttlMs === undefined ? [] : [i])
    let read = 0
    for (const p of breakpoints) {
      for (let q = p; q >= Math.max(0, p - anthropicLookbackBlocks); q--) {
        const block = blocks[q] as Block
        const entry = fresh(block.hash)
        if (entry === undefined) continue
        entry.expires = t + entry.ttlMs
        read = Math.max(read, block.cumulative)
        break
      }
    }
    const min = anthropicMinTokens(model)
    let written = read
    for (const p of breakpoints) {
      const block = blocks[p] as Block
      if (block.cumulative < min || block.ttlMs === undefined) continue
      const entry = fresh(block.hash)
      if (entry === undefined) entries.set(block.hash, { expires: t + block.ttlMs, ttlMs: block.ttlMs })
      written = Math.max(written, block.cumulative)
    }
    const total = cumulative
    const creation = written - read
    return {
      input_tokens: total - read - creation,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: creation
    }
  }
}

/** What the simulated model answers. */
export type Answer =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly id: string; readonly name: string; readonly arguments: string }

/** Decides the answer from the request body (already parsed) and the 0-based request number. */
export type Responder = (body: Rec, index: number) => Answer

const sseData = (payload: Json): string => `data: ${JSON.stringify(payload)}\n\n`
const sseEvent = (type: string, payload: Rec): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`

const openAiStream = (model: string, answer: Answer, usage: WireUsage): string => {
  const output = answer._tag === "Text" ? tokens(answer.text) : tokens(answer.arguments) + 5
  const chunk = (delta: Rec, finish: string | null) =>
    sseData({ id: "chatcmpl-sim", object: "chat.completion.chunk", model, choices: [{ index: 0, delta, finish_reason: finish }] })
  const body = answer._tag === "Text"
    ? chunk({ role: "assistant", content: answer.text }, null) + chunk({}, "stop")
    : chunk({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: answer.id, type: "function", function: { name: answer.name, arguments: answer.arguments } }]
    }, null) + chunk({}, "tool_calls")
  const wireUsage = { ...usage, completion_tokens: output, total_tokens: (usage["prompt_tokens"] ?? 0) + output }
  return body + sseData({ id: "chatcmpl-sim", object: "chat.completion.chunk", model, choices: [], usage: wireUsage }) + "data: [DONE]\n\n"
}

const anthropicStream = (model: string, answer: Answer, usage: WireUsage): string => {
  const output = answer._tag === "Text" ? tokens(answer.text) : tokens(answer.arguments) + 5
  const start = sseEvent("message_start", {
    message: { id: "msg_sim", type: "message", role: "assistant", content: [], model, usage: { ...usage, output_tokens: 1 } }
  })
  const block = answer._tag === "Text"
    ? sseEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
      sseEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: answer.text } })
    : sseEvent("content_block_start", { index: 0, content_block: { type: "tool_use", id: answer.id, name: answer.name, input: {} } }) +
      sseEvent("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: answer.arguments } })
  return start + block + sseEvent("content_block_stop", { index: 0 }) +
    sseEvent("message_delta", {
      delta: { stop_reason: answer._tag === "Text" ? "end_turn" : "tool_use", stop_sequence: null },
      usage: { output_tokens: output }
    }) +
    sseEvent("message_stop", {})
}

/** One simulated request: its parsed body and the usage the server reported for it. */
export interface Exchange {
  readonly path: string
  readonly body: Rec
  readonly rawBody: string
  readonly usage: WireUsage
}

/** The server handle. */
export interface CacheSimServer {
  readonly url: string
  /** every request so far, in order */
  readonly exchanges: () => ReadonlyArray<Exchange>
}

/** Options of {@link serve}. */
export interface ServeOptions {
  readonly provider: "deepseek" | "anthropic"
  readonly respond: Responder
  /** simulated time passing per request (default 20 s) */
  readonly stepMs?: number
}

/** Starts a simulating server (closed with the scope). */
export const serve = (options: ServeOptions): Effect.Effect<CacheSimServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly handle: CacheSimServer }>((resume) => {
      let clock = 0
      const stepMs = options.stepMs ?? 20_000
      const cache = options.provider === "deepseek" ? makeDeepSeekCache() : makeAnthropicCache(() => clock)
      const exchanges: Array<Exchange> = []
      const server = Http.createServer((req, res) => {
        const parts: Array<Buffer> = []
        req.on("data", (c: Buffer) => parts.push(c))
        req.on("end", () => {
          const rawBody = Buffer.concat(parts).toString("utf8")
          let parsed: unknown
          try {
            parsed = JSON.parse(rawBody)
          } catch {
            parsed = undefined
          }
          if (!isRec(parsed)) {
            res.writeHead(400, { "content-type": "application/json" })
            res.end("{\"error\":{\"message\":\"bad JSON\"}}")
            return
          }
          clock += stepMs
          const usage = cache(parsed)
          const answer = options.respond(parsed, exchanges.length)
          exchanges.push({ path: req.url ?? "", body: parsed, rawBody, usage })
          const model = String(parsed["model"])
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.end(options.provider === "deepseek" ? openAiStream(model, answer, usage) : anthropicStream(model, answer, usage))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({ server, handle: { url: `http://127.0.0.1:${port}`, exchanges: () => exchanges.slice() } }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ handle }) => handle))

/** Input tokens of a wire usage record, and the part read from the cache. */
export const inputOf = (usage: WireUsage): { readonly input: number; readonly cached: number } =>
  usage["prompt_tokens"] !== undefined
    ? { input: usage["prompt_tokens"], cached: usage["prompt_cache_hit_tokens"] ?? 0 }
    : {
      input: (usage["input_tokens"] ?? 0) + (usage["cache_read_input_tokens"] ?? 0) + (usage["cache_creation_input_tokens"] ?? 0),
      cached: usage["cache_read_input_tokens"] ?? 0
    }

/** The cache-read share of input tokens over a list of exchanges. */
export const readShare = (exchanges: ReadonlyArray<Exchange>): number => {
  let input = 0
  let cached = 0
  for (const e of exchanges) {
    const u = inputOf(e.usage)
    input += u.input
    cached += u.cached
  }
  return input === 0 ? 0 : cached / input
}
