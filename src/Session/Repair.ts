/**
 * Interrupted-tail repair (S-22, S-23): the closing events to append to a log that a crash left
 * with an open turn, an open step or tool calls without results. Pure; never truncates.
 *
 * The scan tracks the open turn, the open step and the calls pending in the current step. Calls
 * come from the `tool-call` blocks of `assistant/message` events; a later `tool/call` for a
 * pending call records its seq; a `tool/result` clears its call; `step/end`, `turn/start` and
 * `turn/end` clear all. A `tool/call` that no assistant block announced gets no result.
 *
 * Closers, with seqs continuing the log and `time` = the last event's time:
 * 1. per pending call, in first-seen order, an error `tool/result` with
 *    `error: {name: "InterruptedError", code: "INTERRUPTED"}` (upper case, DEC-7), one text block
 *    saying the call was interrupted by a crash, `surfaceOp: "append"`, and
 *    `sourceEventSeqs: [tool/call seq]` only when a `tool/call` was logged;
 * 2. `compact/end {error: {code: "INTERRUPTED"}}` when a `compact/start` has no `compact/end`
 *    (K-12; pressure before = after = the start's pressure: the surface is the pre-compaction one);
 * 3. `step/end` when a step is open;
 * 4. `turn/end {kind: "interrupted"}` when a turn is open.
 *
 * Decisions (DEC-10): a synthetic result carries the turn/step of the open step, or of its
 * assistant message when no step is open; the result text is
 * `Tool call <id> (<name>) was interrupted by a crash and has no recorded result; whether it took effect is unknown.`
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type { CallId } from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import type { SessionEvent } from "./SessionEvent.js"

/**
 * The error attached to a synthetic interrupted result.
 *
 * @since 0.1.0
 * @category constants
 */
export const interruptedError = { name: "InterruptedError", code: "INTERRUPTED" } as const

interface Pending {
  readonly callId: CallId
  readonly name: string
  readonly turn: number
  readonly step: number
  callSeq: number | undefined
}

const freeze = <A>(value: A): A => {
  const r = Json.snapshot(value)
  // the closers are built from JSON data only; a failure is a defect of this module
  if (Result.isFailure(r)) throw new Error(`Repair built a non-JSON closer: ${r.failure.message}`)
  return r.success as A
}

/**
 * The text of a synthetic interrupted tool result.
 *
 * @since 0.1.0
 * @category constants
 */
export const interruptedText = (callId: string, name: string): string =>
  `Tool call ${callId} (${name}) was interrupted by a crash and has no recorded result; whether it took effect is unknown.`

/**
 * The closers to append to `events` (S-23), or `[]` when the log is balanced or empty (S-22).
 * The returned events are deeply frozen.
 *
 * @since 0.1.0
 * @category repair
 */
export const repair = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<SessionEvent> => {
  let openTurn: number | undefined
  let openStep: { readonly turn: number; readonly step: number } | undefined
  let pending = new Map<string, Pending>()
  let openCompaction: { readonly turn: number; readonly pressure: number } | undefined
  for (const event of events) {
    switch (event.type) {
      case "compact/start":
        openCompaction = { turn: event.data.turn, pressure: event.data.pressureTokens }
        break
      case "compact/end":
        openCompaction = undefined
        break
      case "turn/start":
        openCompaction = undefined
        openTurn = event.data.turn
        openStep = undefined
        pending = new Map()
        break
      case "turn/end":
        openCompaction = undefined
        openTurn = undefined
        openStep = undefined
        pending = new Map()
        break
      case "step/start":
        openStep = { turn: event.data.turn, step: event.data.step }
        break
      case "step/end":
        openStep = undefined
        pending = new Map()
        break
      case "assistant/message":
        for (const block of event.data.content) {
          if (block.type === "tool-call" && !pending.has(block.id)) {
            pending.set(block.id, {
              callId: block.id,
              name: block.name,
              turn: event.data.turn,
              step: event.data.step,
              callSeq: undefined
            })
          }
        }
        break
      case "tool/call": {
        const p = pending.get(event.data.callId)
        if (p !== undefined) p.callSeq = event.seq
        break
      }
      case "tool/result":
        pending.delete(event.data.callId)
        break
      default:
        break
    }
  }
  if (openTurn === undefined && openStep === undefined && pending.size === 0 && openCompaction === undefined) return []
  const last = events[events.length - 1]
  if (last === undefined) return []
  const time = last.time
  let seq = last.seq + 1
  const out: Array<SessionEvent> = []
  for (const p of pending.values()) {
    const turn = openStep?.turn ?? p.turn
    const step = openStep?.step ?? p.step
    out.push(freeze({
      type: "tool/result" as const,
      seq: seq++,
      time,
      data: {
        turn,
        step,
        callId: p.callId,
        content: [{ type: "text" as const, text: interruptedText(p.callId, p.name) }],
        isError: true,
        error: interruptedError
      },
      surfaceOp: "append" as const,
      ...(p.callSeq === undefined ? {} : { sourceEventSeqs: [p.callSeq] })
    }))
  }
  if (openCompaction !== undefined) {
    out.push(freeze({
      type: "compact/end" as const,
      seq: seq++,
      time,
      data: {
        turn: openCompaction.turn,
        pressureBefore: openCompaction.pressure,
        pressureAfter: openCompaction.pressure,
        error: { code: "INTERRUPTED", message: "the compaction was interrupted by a crash; the surface is unchanged" }
      }
    }))
  }
  if (openStep !== undefined) {
    out.push(freeze({ type: "step/end" as const, seq: seq++, time, data: { turn: openStep.turn, step: openStep.step } }))
  }
  if (openTurn !== undefined) {
    out.push(freeze({
      type: "turn/end" as const,
      seq: seq++,
      time,
      data: { turn: openTurn, reason: { kind: "interrupted" as const } }
    }))
  }
  return Object.freeze(out)
}
