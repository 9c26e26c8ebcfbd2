/**
 * An independent request rebuild (S-13..S-15, S-18, S-20) written from the rules alone, for the
 * reconstruction check of the loop tests. It deliberately imports NOTHING from
 * `src/Session/Projection.ts`, `Surface.ts`, `Reconstruct.ts` or `RequestHeader.ts`: a change to
 * the projection (a wrapper added to injected content, a dropped `isError`, a merged message)
 * changes the live requests and `Reconstruct` alike, so only a second implementation can notice it.
 *
 * The rules, as implemented here:
 * - surface (S-8, S-13): surface events with `surfaceOp: "append"` are pushed at the end; a
 *   `{op: "replace", start, end}` takes the place of every node between the positions of `start`
 *   and `end` (inclusive). Logs reaching this module were validated on append, so an invalid
 *   replace is a bug and throws.
 * - projection (S-14): user/context/steering → `{role: "user", content}` verbatim; assistant →
 *   `{role: "assistant", content, provenance}`, nothing when its content is empty; tool/result →
 *   one user message holding one tool-result block `{toolCallId, content, isError}`; everything
 *   else → nothing. One message per node, never merged (S-15).
 * - request (S-18, S-20): messages = header prefix + projection of the surface strictly before
 *   the step's `step/start`; the other fields = the latest `request/header` before the step's
 *   first `assistant/chunk` (or, for a step that streamed nothing, before whatever closes it);
 *   empty `system`, `tools` and prefix are absent.
 */
import type { GenerateOptions, Message } from "../../src/Llm/Message.js"
import type { EpochHeader, SessionEvent } from "../../src/Session/SessionEvent.js"

/** One step's rebuilt request (`undefined` when no header precedes it) and whether it streamed. */
export interface RebuiltStep {
  readonly request: GenerateOptions | undefined
  readonly streamed: boolean
}

/** The five surface types (S-2), spelled out here rather than imported. */
const SURFACE = ["user/message", "context/message", "steering/message", "assistant/message", "tool/result"]

/** Applies one event to a surface (a plain array of nodes), per S-8. */
const applySurface = (surface: Array<SessionEvent>, e: SessionEvent): void => {
  if (!SURFACE.includes(e.type) || e.surfaceOp === undefined) return
  if (e.surfaceOp === "append") {
    surface.push(e)
    return
  }
  const { end, start } = e.surfaceOp
  const from = surface.findIndex((n) => n.seq === start)
  const to = surface.findIndex((n) => n.seq === end)
  if (from < 0 || to < from) throw new Error(`independent rebuild: invalid replace at #${e.seq}`)
  surface.splice(from, to - from + 1, e)
}

/** Projects one surface node, per S-14 (`undefined` = nothing). */
export const project = (e: SessionEvent): Message | undefined => {
  if (e.type === "user/message" || e.type === "context/message" || e.type === "steering/message") {
    return { role: "user", content: e.data.content }
  }
  if (e.type === "assistant/message") {
    return e.data.content.length === 0
      ? undefined
      : { role: "assistant", content: e.data.content, provenance: e.data.provenance }
  }
  if (e.type === "tool/result") {
    return {
      role: "user",
      content: [{ type: "tool-result", toolCallId: e.data.callId, content: e.data.content, isError: e.data.isError }]
    }
  }
  return undefined
}

/** The model history of a whole log (fold the surface, project each node). */
export const history = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<Message> => {
  const surface: Array<SessionEvent> = []
  for (const e of events) applySurface(surface, e)
  return surface.flatMap((n) => {
    const m = project(n)
    return m === undefined ? [] : [m]
  })
}

/** A request from a header and a history, canonical per S-18. */
const request = (header: EpochHeader, messages: ReadonlyArray<Message>): GenerateOptions => {
  const { config, messagePrefix, system, tools } = header
  return {
    provider: config.provider,
    model: config.model,
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
    ...(config.stop === undefined ? {} : { stop: config.stop }),
    ...(system === undefined || system === "" ? {} : { system }),
    ...(tools === undefined || tools.length === 0 ? {} : { tools }),
    messages: [...(messagePrefix ?? []), ...messages]
  }
}

/** Rebuilds the request of every step of a log, in log order (S-20). */
export const rebuild = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<RebuiltStep> => {
  const out: Array<RebuiltStep> = []
  events.forEach((e, i) => {
    if (e.type !== "step/start") return
    const { step, turn } = e.data
    // the event that fixes the header: the step's first chunk, or whatever closes the step
    let boundary = events.length
    let streamed = false
    for (let k = i + 1; k < events.length; k++) {
      const x = events[k] as SessionEvent
      if (x.type === "assistant/chunk" && x.data.turn === turn && x.data.step === step) {
        boundary = k
        streamed = true
        break
      }
      if (x.type === "step/end" || x.type === "step/start" || x.type === "turn/end") {
        boundary = k
        break
      }
    }
    let header: EpochHeader | undefined
    for (const x of events.slice(0, boundary)) if (x.type === "request/header") header = x.data.header
    out.push({
      request: header === undefined ? undefined : request(header, history(events.slice(0, i))),
      streamed
    })
  })
  return out
}
