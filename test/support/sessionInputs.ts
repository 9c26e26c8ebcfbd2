/**
 * Append-input builders for session tests (issue 4).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ContentBlock } from "../../src/Llm/ContentBlock.js"
import { callId } from "../../src/Llm/ContentBlock.js"
import type { LlmCallConfig, MessageSource } from "../../src/Llm/Message.js"
import type * as Session from "../../src/Session/Session.js"
import type { SessionError, SessionErrorCode } from "../../src/Session/SessionError.js"
import type { AppendInput, EpochHeader, SessionEvent, SurfaceOp, TurnEndReason } from "../../src/Session/SessionEvent.js"

export const text = (t: string): ContentBlock => ({ type: "text", text: t })
export const user: MessageSource = { kind: "user" }
export const plugin = (name: string): MessageSource => ({ kind: "plugin", plugin: name })
export const provenance = { provider: "scripted", model: "m1" } as const

type Extra = { readonly surfaceOp?: SurfaceOp; readonly sourceEventSeqs?: ReadonlyArray<number> }
const surf = (extra: Extra | undefined): Extra => extra ?? { surfaceOp: "append" }

export const turnStart = (turn: number, kind: "message" | "injection" = "message"): AppendInput => ({
  type: "turn/start",
  data: { turn, trigger: { kind, source: user } }
})
export const turnEnd = (turn: number, reason: TurnEndReason = { kind: "completed" }): AppendInput => ({
  type: "turn/end",
  data: { turn, reason }
})
export const stepStart = (turn: number, step: number): AppendInput => ({ type: "step/start", data: { turn, step } })
export const stepEnd = (turn: number, step: number): AppendInput => ({ type: "step/end", data: { turn, step } })
export const userMessage = (t: string, extra?: Extra): AppendInput => ({
  type: "user/message",
  data: { content: [text(t)], source: user },
  ...surf(extra)
})
export const context = (t: string, meta?: unknown, extra?: Extra): AppendInput => ({
  type: "context/message",
  data: meta === undefined
    ? { content: [text(t)], source: plugin("ctx") }
    : { content: [text(t)], source: plugin("ctx"), meta: meta as never },
  ...surf(extra)
})
export const steering = (turn: number, t: string, extra?: Extra): AppendInput => ({
  type: "steering/message",
  data: { turn, content: [text(t)], source: user },
  ...surf(extra)
})
export const chunk = (turn: number, step: number, t: string): AppendInput => ({
  type: "assistant/chunk",
  data: { turn, step, chunk: { type: "text-delta", index: 0, text: t } }
})
export const assistant = (turn: number, step: number, content: ReadonlyArray<ContentBlock>, extra?: Extra): AppendInput => ({
  type: "assistant/message",
  data: { turn, step, content, provenance },
  ...surf(extra)
})
export const call = (id: string, name = "echo", args = "{\"text\":\"ping\"}"): ContentBlock => ({
  type: "tool-call",
  id: callId(id),
  name,
  arguments: args
})
export const toolCall = (turn: number, step: number, id: string, name = "echo", args = "{\"text\":\"ping\"}"): AppendInput => ({
  type: "tool/call",
  data: { turn, step, callId: callId(id), name, arguments: args }
})
export const toolResult = (turn: number, step: number, id: string, t: string, isError = false, extra?: Extra): AppendInput => ({
  type: "tool/result",
  data: { turn, step, callId: callId(id), content: [text(t)], isError },
  ...surf(extra)
})
export const config: LlmCallConfig = { provider: "scripted", model: "m1" }
export const requestHeader = (
  header: EpochHeader = { config },
  reason: "initial" | "resume" | "change" = "initial"
): AppendInput => ({ type: "request/header", data: { header, reason } })

/** Appends every input in order; returns the stored events. */
export const appendAll = (session: Session.Session, inputs: ReadonlyArray<AppendInput>) =>
  Effect.forEach(inputs, (input) => session.append(input))

/** Runs `effect`, expects it to fail with `code`, returns the error. */
export const failsWith = <A, R>(effect: Effect.Effect<A, SessionError, R>, code: SessionErrorCode) =>
  Effect.map(Effect.result(effect), (r) => {
    if (Result.isSuccess(r)) throw new Error(`expected ${code}, got success`)
    if (r.failure.code !== code) throw new Error(`expected ${code}, got ${r.failure.code}: ${r.failure.message}`)
    return r.failure
  })

/** An untyped append (to hand the session shapes the types forbid). */
export const appendRaw = (session: Session.Session, input: unknown): Effect.Effect<SessionEvent, SessionError> =>
  session.append(input as AppendInput)

/** Turns stored events back into append inputs. */
export const asInput = (event: SessionEvent): AppendInput => {
  const out: Record<string, unknown> = { type: event.type, data: event.data }
  if (event.surfaceOp !== undefined) out["surfaceOp"] = event.surfaceOp
  if (event.sourceEventSeqs !== undefined) out["sourceEventSeqs"] = event.sourceEventSeqs
  return out as unknown as AppendInput
}
