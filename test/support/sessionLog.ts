/**
 * Builders of realistic session logs for persistence tests, crash children and benchmarks.
 */
import type { SessionId } from "../../src/Llm/Message.js"
import type { SessionEvent, SessionHeader } from "../../src/Session/SessionEvent.js"

/** A header for `id` (cwd optional). */
export const header = (id: string, cwd?: string, createdAt = 1_700_000_000_000): SessionHeader =>
  cwd === undefined
    ? { version: 0, id: id as SessionId, createdAt }
    : { version: 0, id: id as SessionId, createdAt, cwd }

/** Appends events with contiguous seqs and increasing times. */
export class LogBuilder {
  readonly events: Array<SessionEvent> = []
  time: number

  constructor(startTime = 1_700_000_000_000, events: ReadonlyArray<SessionEvent> = []) {
    this.time = startTime
    for (const e of events) this.events.push(e)
  }

  get nextSeq(): number {
    return this.events.length
  }

  /** Number of the next turn (S-17). */
  get nextTurn(): number {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i]!
      if (e.type === "turn/start") return (e.data as { turn: number }).turn + 1
    }
    return 0
  }

  push(type: string, data: unknown, extra: { surfaceOp?: unknown; sourceEventSeqs?: ReadonlyArray<number> } = {}): SessionEvent {
    const event: Record<string, unknown> = { type, seq: this.events.length, time: this.time++, data }
    if (extra.surfaceOp !== undefined) event["surfaceOp"] = extra.surfaceOp
    if (extra.sourceEventSeqs !== undefined) event["sourceEventSeqs"] = extra.sourceEventSeqs
    const e = event as unknown as SessionEvent
    this.events.push(e)
    return e
  }

  /** Events from `seq` on. */
  from(seq: number): ReadonlyArray<SessionEvent> {
    return this.events.slice(seq)
  }

  turnStart(turn: number, kind: "message" | "injection" = "message"): this {
    this.push("turn/start", { turn, trigger: { kind, source: { kind: "user" } } })
    return this
  }
  user(text: string): this {
    this.push("user/message", { content: [{ type: "text", text }], source: { kind: "user" } }, { surfaceOp: "append" })
    return this
  }
  stepStart(turn: number, step: number): this {
    this.push("step/start", { turn, step })
    return this
  }
  requestHeader(reason: "initial" | "resume" | "change" = "initial"): this {
    this.push("request/header", {
      header: { config: { provider: "scripted", model: "m1" }, system: "You are terse." },
      reason
    })
    return this
  }
  /** A streamed text answer: block-start, one delta per piece, block-end, usage, finish. */
  chunks(turn: number, step: number, pieces: ReadonlyArray<string>): Array<number> {
    const seqs: Array<number> = []
    seqs.push(this.push("assistant/chunk", { turn, step, chunk: { type: "block-start", index: 0, blockType: "text" } }).seq)
    for (const text of pieces) {
      seqs.push(this.push("assistant/chunk", { turn, step, chunk: { type: "text-delta", index: 0, text } }).seq)
    }
    seqs.push(
      this.push("assistant/chunk", {
        turn,
        step,
        chunk: { type: "block-end", index: 0, block: { type: "text", text: pieces.join("") } }
      }).seq
    )
    return seqs
  }
  assistant(turn: number, step: number, text: string, calls: ReadonlyArray<{ id: string; name: string; args: string }> = [], sources?: ReadonlyArray<number>): this {
    const content: Array<unknown> = text === "" ? [] : [{ type: "text", text }]
    for (const c of calls) content.push({ type: "tool-call", id: c.id, name: c.name, arguments: c.args })
    this.push(
      "assistant/message",
      { turn, step, content, provenance: { provider: "scripted", model: "m1" }, usage: { inputTokens: 10, outputTokens: 5 } },
      sources === undefined ? { surfaceOp: "append" } : { surfaceOp: "append", sourceEventSeqs: sources }
    )
    return this
  }
  toolCall(turn: number, step: number, id: string, name: string, args: string): number {
    return this.push("tool/call", { turn, step, callId: id, name, arguments: args }).seq
  }
  toolResult(turn: number, step: number, id: string, text: string, callSeq?: number): this {
    this.push(
      "tool/result",
      { turn, step, callId: id, content: [{ type: "text", text }], isError: false },
      callSeq === undefined ? { surfaceOp: "append" } : { surfaceOp: "append", sourceEventSeqs: [callSeq] }
    )
    return this
  }
  stepEnd(turn: number, step: number): this {
    this.push("step/end", { turn, step })
    return this
  }
  turnEnd(turn: number, kind = "completed"): this {
    this.push("turn/end", { turn, reason: { kind } })
    return this
  }

  /** A whole completed text turn (optionally with one answered tool call step first). */
  completeTurn(prompt: string, options: { readonly tool?: boolean; readonly pieces?: ReadonlyArray<string> } = {}): this {
    const turn = this.nextTurn
    this.turnStart(turn).user(prompt)
    let step = 0
    if (options.tool === true) {
      this.stepStart(turn, step)
      if (turn === 0) this.requestHeader()
      const id = `call_${turn}_${step}`
      this.assistant(turn, step, "", [{ id, name: "read", args: "{\"path\":\"README.md\"}" }])
      const callSeq = this.toolCall(turn, step, id, "read", "{\"path\":\"README.md\"}")
      this.toolResult(turn, step, id, "# README\nhello", callSeq)
      this.stepEnd(turn, step)
      step++
    }
    this.stepStart(turn, step)
    if (turn === 0 && options.tool !== true) this.requestHeader()
    const pieces = options.pieces ?? ["Hel", "lo ", "the", "re."]
    const sources = this.chunks(turn, step, pieces)
    this.assistant(turn, step, pieces.join(""), [], sources)
    this.stepEnd(turn, step)
    this.turnEnd(turn)
    return this
  }
}

/**
 * A realistic balanced log of at least `n` events (whole turns): turns of a prompt, a tool step and a streamed answer of
 * many small text deltas (chunks dominate, as in real sessions).
 */
export const bigLog = (n: number): Array<SessionEvent> => {
  const b = new LogBuilder()
  const words = "The quick brown fox jumps over the lazy dog while the agent reads files and writes code".split(" ")
  let t = 0
  while (b.events.length < n) {
    const pieces: Array<string> = []
    for (let i = 0; i < 80; i++) pieces.push(`${words[(i + t) % words.length]} `)
    b.completeTurn(`Task ${t}: please look at the repository and explain module ${t}.`, { tool: true, pieces })
    t++
  }
  return b.events
}
