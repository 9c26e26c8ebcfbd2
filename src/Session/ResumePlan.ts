/**
 * The resume plan (DEC-16): what to do next with a session whose last turn was interrupted,
 * derived from the log alone. Pure.
 *
 * A turn is resumable when it is the log's last turn, was opened by a message (or an earlier
 * resume), logged at least one `user/message`, and ended `interrupted` (crash repair, S-23),
 * `disposed` or `aborted` (its process or fiber went away, or a person stopped it: resuming is an
 * explicit request to go on). A log whose tail is still open is planned as repair would close it.
 *
 * The plan of a resumable turn `T`:
 * - `fromStep`: one past the last logged step: completed steps and tool results are kept;
 * - `superseded`: the last step when it streamed chunks but logged no `assistant/message` (its
 *   partial answer stays in the log; the step is requested again as `fromStep`);
 * - `calls`: the tool calls of `T` whose only result is a synthetic interrupted one
 *   ({@link Repair.interruptedError}): `started` when a `tool/call` was logged (in doubt: it may have
 *   taken effect), otherwise it never ran. A call with a real result is never listed;
 * - `finished`: the last step answered without tool calls and nothing was logged after it, so only
 *   the turn's end is missing (no model request is needed).
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { CallId, ToolCallBlock } from "../Llm/ContentBlock.js"
import * as Repair from "./Repair.js"
import type { EventOf, SessionEvent, TurnEndReason } from "./SessionEvent.js"

/**
 * A tool call of the interrupted turn without a real result.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenCall {
  readonly turn: number
  readonly step: number
  /** the call as the model made it (from its `assistant/message`) */
  readonly block: ToolCallBlock
  /** `true` when its `tool/call` was logged: it may have run (in doubt) */
  readonly started: boolean
  /** seq of the synthetic result a re-run replaces on the surface */
  readonly resultSeq: number
}

/**
 * What resuming a session does.
 *
 * @since 0.1.0
 * @category models
 */
export type Plan =
  | { readonly _tag: "Nothing"; readonly reason: string }
  | {
    readonly _tag: "Continue"
    readonly turn: number
    readonly fromStep: number
    readonly superseded: { readonly step: number; readonly chunks: number } | undefined
    readonly calls: ReadonlyArray<OpenCall>
    readonly finished: boolean
  }

/**
 * `true` for the end reasons of a turn that stopped before it finished: its process or fiber went
 * away (`interrupted`, `disposed`, `aborted: interrupted`) or it was cancelled (`aborted`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isResumable = (reason: TurnEndReason): boolean =>
  reason.kind === "interrupted" || reason.kind === "disposed" || reason.kind === "aborted"

const nothing = (reason: string): Plan => ({ _tag: "Nothing", reason })

const isSynthetic = (event: EventOf<"tool/result">): boolean =>
  event.data.isError && event.data.error?.code === Repair.interruptedError.code &&
  event.data.error.name === Repair.interruptedError.name

/**
 * The plan for `events` (see the module doc).
 *
 * @since 0.1.0
 * @category planning
 */
export const plan = (events: ReadonlyArray<SessionEvent>): Plan => {
  const closers = Repair.repair(events)
  const log = closers.length === 0 ? events : [...events, ...closers]
  let start = -1
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i] as SessionEvent
    if (e.type === "turn/start") {
      start = i
      break
    }
  }
  if (start < 0) return nothing("the session has no turn")
  const opened = log[start] as EventOf<"turn/start">
  const turn = opened.data.turn
  // a resumed turn: its history starts at the first `turn/start` with this number
  for (let i = start - 1; i >= 0; i--) {
    const e = log[i] as SessionEvent
    if (e.type === "turn/start") {
      if (e.data.turn !== turn) break
      start = i
    }
  }
  const first = log[start] as EventOf<"turn/start">
  if (first.data.trigger.kind !== "message") return nothing(`turn ${turn} was not opened by a prompt`)
  let ended: TurnEndReason | undefined
  let prompted = false
  let lastStep = 0
  const answered = new Set<number>()
  const chunks = new Map<number, number>()
  let lastAnswer: { readonly step: number; readonly calls: number; readonly index: number } | undefined
  let lastSurface = -1
  const blocks = new Map<string, { readonly turn: number; readonly step: number; readonly block: ToolCallBlock }>()
  const started = new Set<string>()
  const results = new Map<string, { readonly seq: number; readonly synthetic: boolean }>()
  for (let i = start; i < log.length; i++) {
    const e = log[i] as SessionEvent
    switch (e.type) {
      case "turn/end":
        ended = e.data.reason
        break
      case "user/message":
        prompted = true
        lastSurface = i
        break
      case "step/start":
        lastStep = Math.max(lastStep, e.data.step)
        break
      case "assistant/chunk":
        chunks.set(e.data.step, (chunks.get(e.data.step) ?? 0) + 1)
        break
      case "assistant/message": {
        answered.add(e.data.step)
        let calls = 0
        for (const block of e.data.content) {
          if (block.type !== "tool-call") continue
          calls += 1
          blocks.set(block.id, { turn: e.data.turn, step: e.data.step, block })
        }
        lastAnswer = { step: e.data.step, calls, index: i }
        lastSurface = i
        break
      }
      case "tool/call":
        started.add(e.data.callId)
        break
      case "tool/result": {
        const synthetic = isSynthetic(e)
        const previous = results.get(e.data.callId)
        // a real result (a re-run replacing the synthetic one) wins for good
        if (previous === undefined || previous.synthetic) results.set(e.data.callId, { seq: e.seq, synthetic })
        if (!synthetic) started.delete(e.data.callId)
        lastSurface = i
        break
      }
      case "tool/in-doubt":
        // a call reported to the model is settled; a re-run that never logged its result is in doubt again
        if (e.data.decision === "report") results.set(e.data.callId, { seq: -1, synthetic: false })
        break
      case "context/message":
      case "steering/message":
        lastSurface = i
        break
      default:
        break
    }
  }
  if (ended === undefined || !isResumable(ended)) return nothing(`turn ${turn} was not interrupted`)
  if (!prompted) return nothing(`turn ${turn} logged no prompt`)
  const calls: Array<OpenCall> = []
  for (const [id, result] of results) {
    if (!result.synthetic) continue
    const made = blocks.get(id)
    if (made === undefined) continue
    calls.push({ turn: made.turn, step: made.step, block: made.block, started: started.has(id), resultSeq: result.seq })
  }
  const partial = lastStep > 0 && !answered.has(lastStep) && (chunks.get(lastStep) ?? 0) > 0
  const finished = !partial && calls.length === 0 && lastAnswer !== undefined && lastAnswer.calls === 0 &&
    lastAnswer.step === lastStep && lastSurface === lastAnswer.index
  return {
    _tag: "Continue",
    turn,
    fromStep: lastStep + 1,
    superseded: partial ? { step: lastStep, chunks: chunks.get(lastStep) ?? 0 } : undefined,
    calls,
    finished
  }
}

/**
 * What happens to a side-effecting call a crash left in doubt: `report` (default) tells the model
 * its effect is unknown, `rerun` runs it again; a function decides per call (e.g. by asking a
 * person; its answer is logged `by: "user"`).
 *
 * @since 0.1.0
 * @category models
 */
export type InDoubtPolicy =
  | "report"
  | "rerun"
  | ((call: OpenCall) => Effect.Effect<"rerun" | "report">)

/**
 * The idempotency key of one tool call (DEC-16): stable across a crash and a resume, so a tool
 * re-run for the same call sees the same key.
 *
 * @since 0.1.0
 * @category utils
 */
export const idempotencyKey = (sessionId: string, turn: number, step: number, callId: CallId | string): string =>
  `${sessionId}:${turn}:${step}:${callId}`
