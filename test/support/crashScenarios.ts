/**
 * What a crash child writes before it is killed (shared by `crash-child.ts` and the crash tests,
 * so the parent knows exactly which events were flushed).
 */
import type { SessionEvent, SessionHeader } from "../../src/Session/SessionEvent.js"
import { header, LogBuilder } from "./sessionLog.js"

/** A crash scenario. */
export interface Scenario {
  readonly header: SessionHeader
  /** batches appended durably, in order, before the child reports READY */
  readonly batches: ReadonlyArray<ReadonlyArray<SessionEvent>>
  /** bytes the child writes straight into the JSONL file afterwards (a torn line) */
  readonly partialLine?: string
  /** after READY, keep appending whole turns (one batch each) until killed */
  readonly endless?: boolean
}

const names = ["mid-stream", "mid-tool", "mid-line", "endless"] as const

/** Scenario names. */
export type Name = typeof names[number]

/** `true` for a known scenario name. */
export const isName = (s: string): s is Name => (names as ReadonlyArray<string>).includes(s)

/** The next whole turn an endless writer appends after `events`. */
export const nextTurn = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<SessionEvent> => {
  const b = new LogBuilder(events.at(-1)!.time + 1, events)
  const pieces = Array.from({ length: 200 }, (_, i) => `w${i} `)
  b.completeTurn(`turn ${b.nextTurn}`, { tool: true, pieces })
  return b.from(events.length)
}

/** Builds the scenario (deterministic: same events in the child and the parent). */
export const make = (name: Name): Scenario => {
  const h = header(`crash-${name}`, "/work/crash")
  const b = new LogBuilder().completeTurn("first, completed turn")
  const batches: Array<ReadonlyArray<SessionEvent>> = [b.from(0)]
  const mark = () => b.events.length
  let from = mark()
  switch (name) {
    case "mid-stream":
    case "mid-line":
    case "endless": {
      b.turnStart(1).user("second turn, killed mid-stream").stepStart(1, 0)
      batches.push(b.from(from))
      // chunks flushed one by one
      b.push("assistant/chunk", { turn: 1, step: 0, chunk: { type: "block-start", index: 0, blockType: "text" } })
      for (const text of ["Work", "ing ", "on i", "t"]) {
        b.push("assistant/chunk", { turn: 1, step: 0, chunk: { type: "text-delta", index: 0, text } })
      }
      for (let i = from + 3; i < b.events.length; i++) batches.push([b.events[i]!])
      if (name === "endless") {
        // close the turn so the endless writer can go on with whole turns
        from = mark()
        b.push("assistant/chunk", { turn: 1, step: 0, chunk: { type: "block-end", index: 0, block: { type: "text", text: "Working on it" } } })
        b.assistant(1, 0, "Working on it").stepEnd(1, 0).turnEnd(1)
        batches.push(b.from(from))
        return { header: h, batches, endless: true }
      }
      if (name === "mid-line") {
        const next = JSON.stringify({ type: "assistant/chunk", seq: b.events.length, time: b.time, data: { turn: 1, step: 0, chunk: { type: "text-delta", index: 0, text: " now" } } })
        return { header: h, batches, partialLine: next.slice(0, Math.floor(next.length / 2)) }
      }
      return { header: h, batches }
    }
    case "mid-tool": {
      b.turnStart(1).user("second turn, killed mid-tool").stepStart(1, 0)
      const calls = [
        { id: "call_done", name: "read", args: "{\"path\":\"a\"}" },
        { id: "call_running", name: "bash", args: "{\"cmd\":\"sleep 100\"}" }
      ]
      b.assistant(1, 0, "", calls)
      const doneSeq = b.toolCall(1, 0, "call_done", "read", calls[0]!.args)
      b.toolResult(1, 0, "call_done", "contents of a", doneSeq)
      batches.push(b.from(from))
      from = mark()
      b.toolCall(1, 0, "call_running", "bash", calls[1]!.args)
      batches.push(b.from(from))
      return { header: h, batches }
    }
  }
}

/** Every event of the scenario's batches. */
export const flushed = (scenario: Scenario): ReadonlyArray<SessionEvent> => scenario.batches.flat()
