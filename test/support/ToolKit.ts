/**
 * Helpers for the tool tests: a real `Session`, a real `ToolRuntime`, a minimal `AgentControl`
 * whose `inject` follows L-3 while a batch runs (offer to the batch FIFO, else append), and a
 * `batch` runner that logs the step's assistant message before calling `ToolScheduler.runBatch`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as Json from "../../src/Llm/Json.js"
import * as Message from "../../src/Llm/Message.js"
import type { AgentControl } from "../../src/Loop/AgentControl.js"
import { AgentError } from "../../src/Loop/AgentControl.js"
import * as BatchContexts from "../../src/Loop/BatchContexts.js"
import * as StepSignal from "../../src/Loop/StepSignal.js"
import type * as ToolRegistry from "../../src/Loop/ToolRegistry.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import * as ToolScheduler from "../../src/Loop/ToolScheduler.js"
import * as Session from "../../src/Session/Session.js"
import type { SessionError } from "../../src/Session/SessionError.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"

export const AGENT_ID = Message.sessionId("agent-1")

/** What the fake agent recorded. */
export interface AgentLog {
  readonly steered: Array<string>
  readonly sent: Array<string>
  readonly cancels: Array<string>
}

/** Everything one test batch needs. */
export interface Rig {
  readonly session: Session.Session
  readonly signal: StepSignal.StepSignal
  readonly contexts: BatchContexts.BatchContexts
  readonly agent: AgentControl
  readonly log: AgentLog
}

/** A session with an open turn 1 / step 1, a fresh signal and FIFO, and an agent bound to them. */
export const rig: Effect.Effect<Rig, unknown> = Effect.gen(function*() {
  const session = yield* Session.make({ id: "agent-1" })
  yield* session.append({ type: "turn/start", data: { turn: 1, trigger: { kind: "message", source: Message.userSource } } })
  yield* session.append({
    type: "user/message",
    data: { content: [ContentBlock.text("go")], source: Message.userSource },
    surfaceOp: "append"
  })
  yield* session.append({ type: "step/start", data: { turn: 1, step: 1 } })
  const signal = yield* StepSignal.make
  const contexts = yield* BatchContexts.make
  const log: AgentLog = { steered: [], sent: [], cancels: [] }
  const inject: AgentControl["inject"] = (content, options) =>
    Effect.gen(function*() {
      const context = options?.meta === undefined
        ? { content, source: options?.source ?? Message.userSource }
        : { content, source: options?.source ?? Message.userSource, meta: options.meta }
      const queued = yield* BatchContexts.offer(contexts, context).pipe(
        Effect.mapError((e) => new AgentError({ code: "INVALID_INPUT", message: e.message }))
      )
      if (!queued) {
        const frozen = BatchContexts.snapshot(context)
        if (frozen._tag === "Failure") return yield* new AgentError({ code: "INVALID_INPUT", message: frozen.failure.message })
        yield* session.append({ type: "context/message", data: frozen.success, surfaceOp: "append" }).pipe(Effect.orDie)
      }
    })
  const agent: AgentControl = {
    id: AGENT_ID,
    send: (content) => Effect.sync(() => void log.sent.push(ContentBlock.flattenText(content))),
    steer: (content) => Effect.sync(() => void log.steered.push(ContentBlock.flattenText(content))),
    inject,
    cancel: (reason = "cancelled") =>
      Effect.andThen(
        Effect.sync(() => void log.cancels.push(reason)),
        StepSignal.abort(signal, { _tag: "Cancelled", reason })
      )
  }
  return { session, signal, contexts, agent, log }
})

/** Logs the assistant message holding `calls`, then runs the batch. */
export const runCalls = (
  r: Rig,
  calls: ReadonlyArray<ContentBlock.ToolCallBlock>,
  tools: ToolRegistry.View
): Effect.Effect<ToolScheduler.BatchOutcome, ToolScheduler.ToolSchedulerError, ToolRuntime.ToolRuntime> =>
  Effect.gen(function*() {
    yield* r.session.append({
      type: "assistant/message",
      data: { turn: 1, step: 1, content: calls, provenance: { provider: "scripted", model: "m1" } },
      surfaceOp: "append",
      sourceEventSeqs: []
    }).pipe(Effect.orDie)
    return yield* ToolScheduler.runBatch({
      session: r.session,
      agent: r.agent,
      turn: 1,
      step: 1,
      calls,
      tools,
      signal: r.signal,
      contexts: r.contexts
    })
  })

/** The events after the assistant message. */
export const batchEvents = (r: Rig): Effect.Effect<ReadonlyArray<SessionEvent>, SessionError> =>
  Effect.map(r.session.events, (events) => {
    const i = events.findIndex((e) => e.type === "assistant/message")
    return events.slice(i + 1)
  })

/** A compact rendering of events: `call c1`, `result c1`, `ctx <text>`. */
export const shape = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<string> =>
  events.map((e) => {
    switch (e.type) {
      case "tool/call":
        return `call ${e.data.callId}`
      case "tool/result":
        return `result ${e.data.callId}`
      case "context/message":
        return `ctx ${ContentBlock.flattenText(e.data.content)}`
      default:
        return e.type
    }
  })

/** The `tool/result` data for `callId`. */
export const resultOf = (events: ReadonlyArray<SessionEvent>, callId: string) => {
  for (const e of events) if (e.type === "tool/result" && e.data.callId === callId) return e.data
  throw new Error(`no result for ${callId}`)
}

/** The text of a result. */
export const textOf = (events: ReadonlyArray<SessionEvent>, callId: string): string =>
  ContentBlock.flattenText(resultOf(events, callId).content)

/** Shorthand for a call block. */
export const call = (id: string, name: string, args: unknown | string = {}): ContentBlock.ToolCallBlock =>
  ContentBlock.toolCall(id, name, typeof args === "string" ? args : JSON.stringify(args))

/** A recorder of ordered markers (for pre/post/body order assertions). */
export const recorder = Effect.map(Ref.make<ReadonlyArray<string>>([]), (ref) => ({
  mark: (m: string) => Ref.update(ref, (l) => [...l, m]),
  get: Ref.get(ref)
}))

/** A meta value that is not lossless JSON (tests of T-8). */
export const badMeta = (value: unknown): Json.Json => value as Json.Json

/** `Some` helper for readability. */
export const some = Option.some
