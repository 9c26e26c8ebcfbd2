/**
 * A session's log folded into the records every export format shows: user, steering and context
 * messages, assistant messages with their tool calls and the results answering them, the end of
 * every turn, compactions and the title. Each record names the log events (`seqs`) it comes from,
 * so an exported line, step or block is traceable to the log (the source of truth).
 *
 * Decisions (DEC-10): streamed `assistant/chunk` events are not records of their own: the
 * `assistant/message` they assemble into carries their seqs (the range from the step's first chunk);
 * a tool result is attached to the assistant message that made the call (by call id); a result
 * without a known call (a repaired log) stays a record of its own. Events from a fork's seed (the
 * first `seedLength` events, copied from the parent) are marked `copied`.
 *
 * @since 0.1.0
 */
import type * as ContentBlock from "../Llm/ContentBlock.js"
import type * as Message from "../Llm/Message.js"
import type { SessionEvent, SessionHeader, TurnEndReason } from "../Session/SessionEvent.js"

/**
 * A tool call with its result (when logged).
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  readonly callId: string
  readonly name: string
  /** the model's raw argument text */
  readonly arguments: string
  /** the `tool/call` event, when logged */
  readonly seq?: number
  readonly result?: {
    readonly seq: number
    readonly time: number
    readonly text: string
    readonly isError: boolean
    readonly code?: string
  }
}

/**
 * One record of the timeline.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry =
  | {
    readonly kind: "user" | "steering" | "context"
    readonly seqs: ReadonlyArray<number>
    readonly time: number
    readonly turn: number
    readonly text: string
    readonly source: string
    readonly copied: boolean
  }
  | {
    readonly kind: "assistant"
    readonly seqs: ReadonlyArray<number>
    readonly time: number
    readonly turn: number
    readonly step: number
    readonly text: string
    readonly reasoning: string
    readonly provider: string
    readonly model: string
    readonly calls: ReadonlyArray<Call>
    readonly usage?: Message.TokenUsage
    readonly cost?: number
    readonly copied: boolean
  }
  | {
    readonly kind: "orphan-result"
    readonly seqs: ReadonlyArray<number>
    readonly time: number
    readonly turn: number
    readonly callId: string
    readonly text: string
    readonly isError: boolean
    readonly copied: boolean
  }
  | {
    readonly kind: "turn-end"
    readonly seqs: ReadonlyArray<number>
    readonly time: number
    readonly turn: number
    readonly reason: TurnEndReason
    readonly copied: boolean
  }
  | {
    readonly kind: "compaction"
    readonly seqs: ReadonlyArray<number>
    readonly time: number
    readonly turn: number
    readonly summary: string
    readonly shadowedSeqs: readonly [number, number]
    readonly copied: boolean
  }

/**
 * A session's lineage: the session itself, then its parent, grandparent, … (as far as readable).
 *
 * @since 0.1.0
 * @category models
 */
export type Lineage = ReadonlyArray<{ readonly id: string; readonly seedLength?: number }>

/**
 * What an export is made from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly header: SessionHeader
  readonly events: ReadonlyArray<SessionEvent>
  /** the fork ancestors, nearest (the parent) first, each with its own seed length, when known */
  readonly ancestors?: Lineage
  /** the exporting program's version (for ATIF's `agent.version`) */
  readonly version?: string
}

/**
 * The text of a list of blocks: text blocks as they are, other blocks as compact JSON.
 *
 * @since 0.1.0
 * @category utils
 */
export const textOf = (blocks: ReadonlyArray<ContentBlock.ContentBlock>): string =>
  blocks.map((b) => b.type === "text" || b.type === "reasoning" ? b.text : JSON.stringify(b)).join("\n")

const sourceOf = (source: Message.MessageSource): string => source.kind === "plugin" ? `plugin:${source.plugin}` : source.kind

/**
 * The session title stored with `sessions rename` (the last one wins), if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const titleOf = (events: ReadonlyArray<SessionEvent>): string | undefined => {
  let title: string | undefined
  for (const e of events) {
    // the title event is declared by the CLI (`sessions rename`), not by the core event map
    const type: string = e.type
    const data: unknown = e.data
    if (type === "session/title" && typeof data === "object" && data !== null && "title" in data && typeof data.title === "string") {
      title = data.title
    }
  }
  return title
}

interface Pending {
  readonly index: number
  readonly chunkSeqs: Array<number>
}

/**
 * Folds a log into its timeline (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (input: Input): ReadonlyArray<Entry> => {
  const seed = input.header.seedLength ?? 0
  const entries: Array<Entry> = []
  const callOwner = new Map<string, number>()
  const callSeq = new Map<string, number>()
  let chunks: Pending | undefined
  let turn = 0
  input.events.forEach((e, position) => {
    const copied = position < seed
    switch (e.type) {
      case "turn/start":
        turn = e.data.turn
        return
      case "user/message":
      case "context/message":
        entries.push({
          kind: e.type === "user/message" ? "user" : "context",
          seqs: [e.seq],
          time: e.time,
          turn,
          text: textOf(e.data.content),
          source: sourceOf(e.data.source),
          copied
        })
        return
      case "steering/message":
        entries.push({ kind: "steering", seqs: [e.seq], time: e.time, turn: e.data.turn, text: textOf(e.data.content), source: sourceOf(e.data.source), copied })
        return
      case "assistant/chunk":
        if (chunks === undefined) chunks = { index: entries.length, chunkSeqs: [] }
        chunks.chunkSeqs.push(e.seq)
        return
      case "assistant/message": {
        const first = chunks?.chunkSeqs[0]
        const last = chunks?.chunkSeqs.at(-1)
        chunks = undefined
        const calls: Array<Call> = []
        for (const b of e.data.content) {
          if (b.type !== "tool-call") continue
          callOwner.set(b.id, entries.length)
          calls.push({ callId: b.id, name: b.name, arguments: b.arguments })
        }
        entries.push({
          kind: "assistant",
          seqs: first === undefined || last === undefined ? [e.seq] : [first, last, e.seq],
          time: e.time,
          turn: e.data.turn,
          step: e.data.step,
          text: e.data.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
          reasoning: e.data.content.filter((b) => b.type === "reasoning").map((b) => b.text).join(""),
          provider: e.data.provenance.provider,
          model: e.data.provenance.model,
          calls,
          ...(e.data.usage === undefined ? {} : { usage: e.data.usage }),
          ...(e.data.cost === undefined ? {} : { cost: e.data.cost }),
          copied
        })
        return
      }
      case "tool/call":
        callSeq.set(e.data.callId, e.seq)
        attach(entries, callOwner, e.data.callId, (c) => ({ ...c, seq: e.seq }))
        return
      case "tool/result": {
        const result = {
          seq: e.seq,
          time: e.time,
          text: textOf(e.data.content),
          isError: e.data.isError,
          ...(e.data.error === undefined ? {} : { code: e.data.error.code })
        }
        if (!attach(entries, callOwner, e.data.callId, (c) => ({ ...c, result }))) {
          entries.push({ kind: "orphan-result", seqs: [e.seq], time: e.time, turn: e.data.turn, callId: e.data.callId, text: result.text, isError: result.isError, copied })
        }
        return
      }
      case "turn/end":
        chunks = undefined
        entries.push({ kind: "turn-end", seqs: [e.seq], time: e.time, turn: e.data.turn, reason: e.data.reason, copied })
        return
      case "compact/summary":
        entries.push({ kind: "compaction", seqs: [e.seq], time: e.time, turn: e.data.turn, summary: e.data.summary, shadowedSeqs: e.data.shadowedSeqs, copied })
        return
      default:
        return
    }
  })
  return entries
}

const attach = (
  entries: Array<Entry>,
  owner: ReadonlyMap<string, number>,
  callId: string,
  update: (call: Call) => Call
): boolean => {
  const at = owner.get(callId)
  const entry = at === undefined ? undefined : entries[at]
  if (at === undefined || entry === undefined || entry.kind !== "assistant") return false
  const extra = (call: Call): ReadonlyArray<number> => [call.seq, call.result?.seq].filter((s): s is number => s !== undefined)
  const calls = entry.calls.map((c) => c.callId === callId ? update(c) : c)
  const seqs = [...new Set([...entry.seqs, ...calls.flatMap(extra)])].sort((a, b) => a - b)
  entries[at] = { ...entry, calls, seqs }
  return true
}

/**
 * The usage and cost of a timeline, summed over assistant messages (the cost of the priced ones;
 * `undefined` when none is priced).
 *
 * @since 0.1.0
 * @category utils
 */
export const totals = (entries: ReadonlyArray<Entry>): {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly cost: number | undefined
  readonly messages: number
} => {
  let input = 0, output = 0, cacheRead = 0, cacheWrite = 0, cost = 0, priced = false, messages = 0
  for (const e of entries) {
    if (e.kind !== "assistant") continue
    messages++
    input += e.usage?.inputTokens ?? 0
    output += e.usage?.outputTokens ?? 0
    cacheRead += e.usage?.cacheReadTokens ?? 0
    cacheWrite += e.usage?.cacheWriteTokens ?? 0
    if (e.cost !== undefined) {
      priced = true
      cost += e.cost
    }
  }
  return { input, output, cacheRead, cacheWrite, cost: priced ? Math.round(cost * 1e10) / 1e10 : undefined, messages }
}

/**
 * The lineage of an input: the session itself, then its ancestors nearest first (`ancestors` when
 * given, else the header's parent alone).
 *
 * @since 0.1.0
 * @category utils
 */
export const lineageOf = (input: Input): Lineage => {
  const self = { id: input.header.id, ...(input.header.seedLength === undefined ? {} : { seedLength: input.header.seedLength }) }
  const parent = input.header.parentSession
  return [self, ...(input.ancestors ?? (parent === undefined ? [] : [{ id: parent }]))]
}
