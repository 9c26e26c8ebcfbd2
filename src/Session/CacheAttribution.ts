/**
 * Prefix attribution (DEC-17, issue 30): how much of a model request is a prefix of the previous request of the
 * session — the part a provider's prompt cache can serve — where it first diverged and why.
 *
 * The canonical provider request is a list of segments, in the order providers cache them (Anthropic:
 * tools → system → messages; OpenAI and DeepSeek cache the rendered prompt from its start):
 * 1. the route (`provider` and `model`: a cache belongs to one model; temperature, output cap and stop
 *    sequences are not part of the prompt and are left out),
 * 2. the tool definitions, 3. the system prompt, 4. one segment per message (session prefix, then history).
 *
 * Each segment is canonical JSON (object keys sorted). The shared prefix is counted in UTF-8 bytes: every
 * leading segment equal to the previous request's, plus the common leading characters of the first unequal
 * one. Tokens are estimated at {@link BYTES_PER_TOKEN} bytes per token.
 *
 * The cause of a break, first match wins:
 * - `model-changed`: the route differs;
 * - `tool-list-changed`: the tool definitions differ (an MCP server's list, a registry change);
 * - `system-prompt-changed`: the system prompt differs, or a message of the session prefix (workspace context)
 *   does;
 * - a message of the previous request that is not in the new one at the same position:
 *   `compaction` when a compaction ran since the previous request (`compact/start` or `compact/summary` in the
 *   log between them); `provider-rule-repair` when the new message comes from the same log event as the old one
 *   (the event is the same, its projection for the provider changed); `history-rewritten` otherwise (a surface
 *   replace by a hook or an embedder);
 * - `ttl-expired`: nothing diverged, but more than the provider's cache TTL passed since the previous request.
 *
 * An unbroken request (the previous one is a prefix of it, within the TTL) has no cause; the first request of a
 * session has no previous one and no cause (`prefixBytes` 0).
 *
 * {@link ofLog} derives the attribution of every request of a log from the log alone, so the `request/cache`
 * events the loop writes are reconstructable (they are checked against it in tests).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Json from "../Llm/Json.js"
import type { GenerateOptions, Message } from "../Llm/Message.js"
import * as Reconstruct from "./Reconstruct.js"
import type { SessionEvent } from "./SessionEvent.js"
import * as Surface from "./Surface.js"

declare module "./SessionEvent.js" {
  interface SessionEventMap {
    /** the prefix attribution of the step's model request (issue 30), logged after its `request/header` */
    readonly "request/cache": {
      readonly turn: number
      readonly step: number
    } & Attribution
  }
}

/**
 * Why a request's cached prefix broke.
 *
 * @since 0.1.0
 * @category models
 */
export type Cause =
  | "model-changed"
  | "tool-list-changed"
  | "system-prompt-changed"
  | "compaction"
  | "history-rewritten"
  | "provider-rule-repair"
  | "ttl-expired"

/**
 * The causes, in the order they are tested.
 *
 * @since 0.1.0
 * @category constants
 */
export const causes: ReadonlyArray<Cause> = [
  "model-changed",
  "tool-list-changed",
  "system-prompt-changed",
  "compaction",
  "history-rewritten",
  "provider-rule-repair",
  "ttl-expired"
]

/**
 * Where a request first differs from the previous one: the segment, and for a message its index in the
 * request and the seq of the log event it came from (absent for a session-prefix message).
 *
 * @since 0.1.0
 * @category models
 */
export interface Divergence {
  readonly part: "route" | "tools" | "system" | "messages"
  readonly messageIndex?: number
  readonly eventSeq?: number
}

/**
 * The attribution of one request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Attribution {
  /** bytes of the canonical request shared with the previous request as a prefix */
  readonly prefixBytes: number
  /** bytes of the canonical request */
  readonly requestBytes: number
  readonly prefixTokens: number
  readonly requestTokens: number
  readonly divergence?: Divergence
  readonly cause?: Cause
}

/**
 * A request as sent: the request, the seq of the log event each message came from (`undefined` for a
 * session-prefix message) and when it was sent (epoch ms).
 *
 * @since 0.1.0
 * @category models
 */
export interface Sent {
  readonly request: GenerateOptions
  readonly messageSeqs: ReadonlyArray<number | undefined>
  readonly time: number
}

/**
 * Bytes per estimated token (a typical tokenizer's average on JSON, code and English).
 *
 * @since 0.1.0
 * @category constants
 */
export const BYTES_PER_TOKEN = 4

const encoder = new TextEncoder()
const byteLength = (s: string): number => encoder.encode(s).length

const canonicalText = (value: unknown): string => Json.isJson(value) ? Json.canonical(value) : JSON.stringify(value) ?? ""

// message objects are frozen and shared between requests: their canonical text is computed once
const memo = new WeakMap<object, { readonly text: string; readonly bytes: number }>()
const segment = (value: object): { readonly text: string; readonly bytes: number } => {
  const hit = memo.get(value)
  if (hit !== undefined) return hit
  const text = canonicalText(value)
  const out = { text, bytes: byteLength(text) }
  if (Object.isFrozen(value)) memo.set(value, out)
  return out
}

const headSegments = (request: GenerateOptions): ReadonlyArray<string> => [
  canonicalText({ provider: request.provider, model: request.model }),
  canonicalText(request.tools ?? []),
  canonicalText(request.system ?? "")
]

const commonBytes = (a: string, b: string): number => {
  let i = 0
  const n = Math.min(a.length, b.length)
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return byteLength(a.slice(0, i))
}

const tokens = (bytes: number): number => Math.ceil(bytes / BYTES_PER_TOKEN)

/**
 * The bytes of a request's canonical form.
 *
 * @since 0.1.0
 * @category attribution
 */
export const requestBytes = (request: GenerateOptions): number => {
  let total = 0
  for (const s of headSegments(request)) total += byteLength(s)
  for (const m of request.messages) total += segment(m).bytes
  return total
}

const parts = ["route", "tools", "system"] as const
const headCauses: Record<(typeof parts)[number], Cause> = {
  route: "model-changed",
  tools: "tool-list-changed",
  system: "system-prompt-changed"
}

const messageCause = (
  previous: Sent,
  next: Sent,
  index: number,
  between: ReadonlyArray<SessionEvent>
): Cause => {
  const seq = next.messageSeqs[index]
  if (seq === undefined) return "system-prompt-changed"
  if (between.some((e) => e.type === "compact/start" || e.type === "compact/summary")) return "compaction"
  return previous.messageSeqs[index] === seq ? "provider-rule-repair" : "history-rewritten"
}

/**
 * Attributes `next` against `previous` (see the module doc). `between` = the log events after the previous
 * request was sent and up to this one; `ttlMs` = the provider's cache TTL (`undefined`: not checked).
 *
 * @since 0.1.0
 * @category attribution
 */
export const attribute = (
  previous: Sent | undefined,
  next: Sent,
  between: ReadonlyArray<SessionEvent>,
  ttlMs: number | undefined
): Attribution => {
  const total = requestBytes(next.request)
  const result = (prefixBytes: number, divergence?: Divergence, cause?: Cause): Attribution => ({
    prefixBytes,
    requestBytes: total,
    prefixTokens: tokens(prefixBytes),
    requestTokens: tokens(total),
    ...(divergence === undefined ? {} : { divergence }),
    ...(cause === undefined ? {} : { cause })
  })
  if (previous === undefined) return result(0)
  const before = headSegments(previous.request)
  const after = headSegments(next.request)
  let prefix = 0
  for (let i = 0; i < parts.length; i++) {
    const a = before[i] as string
    const b = after[i] as string
    const part = parts[i] as (typeof parts)[number]
    if (a !== b) return result(prefix + commonBytes(a, b), { part }, headCauses[part])
    prefix += byteLength(b)
  }
  const old = previous.request.messages
  const now = next.request.messages
  for (let i = 0; i < old.length; i++) {
    const o = old[i] as Message
    const n = now[i]
    if (n === o) {
      prefix += segment(n).bytes
      continue
    }
    const so = segment(o)
    const sn = n === undefined ? undefined : segment(n)
    if (sn !== undefined && sn.text === so.text) {
      prefix += sn.bytes
      continue
    }
    const seq = next.messageSeqs[i]
    const divergence: Divergence = seq === undefined
      ? { part: "messages", messageIndex: i }
      : { part: "messages", messageIndex: i, eventSeq: seq }
    return result(prefix + (sn === undefined ? 0 : commonBytes(so.text, sn.text)), divergence, messageCause(previous, next, i, between))
  }
  const expired = ttlMs !== undefined && next.time - previous.time > ttlMs
  return expired ? result(prefix, undefined, "ttl-expired") : result(prefix)
}

/**
 * The seq of the event each message of a derivation came from: surface nodes that project to nothing are
 * skipped, as `Projection.deriveMessages` skips them.
 *
 * @since 0.1.0
 * @category attribution
 */
export const messageSeqs = (nodes: ReadonlyArray<SessionEvent>): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i] as SessionEvent
    if (projects(node)) out.push(node.seq)
  }
  return out
}

// `Projection.deriveEventMessage(node) !== undefined` without building the message (this runs before every request)
const projects = (node: SessionEvent): boolean => {
  switch (node.type) {
    case "user/message":
    case "context/message":
    case "steering/message":
    case "tool/result":
      return true
    case "assistant/message":
      return node.data.content.length > 0
    default:
      return false
  }
}

/**
 * One attributed request of a log.
 *
 * @since 0.1.0
 * @category models
 */
export interface Logged {
  readonly turn: number
  readonly step: number
  readonly stepStartSeq: number
  readonly attribution: Attribution
}

/**
 * The attribution of every step of a log that sent a request (a header precedes it), derived from the log alone:
 * each request is rebuilt as `Reconstruct` rebuilds it, sent at its `step/start` time; `ttlMs(provider)` gives
 * the TTL of the request's provider.
 *
 * @since 0.1.0
 * @category attribution
 */
export const ofLog = (
  events: ReadonlyArray<SessionEvent>,
  ttlMs: (provider: string) => number | undefined = () => undefined
): ReadonlyArray<Logged> => {
  const rebuilt = Reconstruct.reconstruct(events)
  const bySeq = new Map<number, number>()
  for (let i = 0; i < events.length; i++) bySeq.set((events[i] as SessionEvent).seq, i)
  const out: Array<Logged> = []
  let previous: Sent | undefined
  let previousAt = 0
  for (const r of rebuilt) {
    if (r.request === undefined) continue
    const at = bySeq.get(r.stepStartSeq) ?? 0
    const start = events[at] as SessionEvent
    const nodes = Surface.foldSurface(events.slice(0, at)).nodes
    const seqs = messageSeqs(nodes)
    const prefixLength = r.request.messages.length - seqs.length
    const sent: Sent = {
      request: r.request,
      messageSeqs: [...Array.from({ length: prefixLength }, () => undefined), ...seqs],
      time: start.time
    }
    const attribution = attribute(previous, sent, events.slice(previousAt, at), ttlMs(r.request.provider))
    out.push({ turn: r.turn, step: r.step, stepStartSeq: r.stepStartSeq, attribution })
    previous = sent
    previousAt = at
  }
  return out
}

/**
 * The cache TTL assumed for a provider route when none is configured: Anthropic's default five minutes, OpenAI's
 * five to ten minutes of inactivity (ten), none for others (DeepSeek keeps its disk cache for hours).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTtlMs = (provider: string): number | undefined =>
  provider === "anthropic" ? 5 * 60_000 : provider === "openai" ? 10 * 60_000 : undefined

/**
 * The prompt-cache TTL of a provider route in milliseconds, as the loop's attribution assumes it (`undefined`:
 * never expires as far as attribution knows). Default {@link defaultTtlMs}; the CLI's `--cache-ttl 1h` provides
 * one hour for `anthropic`.
 *
 * @since 0.1.0
 * @category references
 */
export const Ttl: Context.Reference<(provider: string) => number | undefined> = Context.Reference(
  "effect-harness/Session/CacheAttribution/Ttl",
  { defaultValue: () => defaultTtlMs }
)
