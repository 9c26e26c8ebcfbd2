/**
 * Request reconstruction (S-20) as a pure function over a log.
 *
 * For each `step/start` of the log: `messages` = the header's `messagePrefix` + the derivation
 * (S-14, S-15) of the log strictly before that `step/start`; every other field (call config,
 * `system`, `tools`) = the latest `request/header` before the step's first `assistant/chunk`
 * (headers are logged inside the step, after `step/start`).
 *
 * Decisions (DEC-10):
 * - A step that streamed no chunk (a request that failed before its first chunk, or a step that
 *   never sent one, e.g. a failing pre-step listener) takes the latest header before its
 *   `step/end` (or before the next `step/start`, `turn/end` or the end of the log). The log
 *   alone cannot tell whether such a step sent a request: `firstChunkSeq` is `undefined` for it,
 *   so callers comparing with the requests a model received can skip it.
 * - A step with no header before it has `request: undefined`.
 * - The result carries no `sessionId` (a routing hint the loop stamps, V-8): compare without it.
 * - The header used is canonical (S-18): an empty `system`, `tools` or prefix is absent.
 *
 * @since 0.1.0
 */
import type { GenerateOptions, Message } from "../Llm/Message.js"
import * as Projection from "./Projection.js"
import * as RequestHeader from "./RequestHeader.js"
import type { EpochHeader, SessionEvent } from "./SessionEvent.js"
import * as Surface from "./Surface.js"

/**
 * The request of one step, rebuilt from the log.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReconstructedRequest {
  readonly turn: number
  readonly step: number
  /** seq of the step's `step/start` */
  readonly stepStartSeq: number
  /** seq of the step's first `assistant/chunk`; `undefined` when the step streamed nothing */
  readonly firstChunkSeq: number | undefined
  /** the rebuilt request; `undefined` when no `request/header` precedes the step */
  readonly request: GenerateOptions | undefined
}

/**
 * Builds a request from a header and the derived history (prefix first).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toRequest = (header: EpochHeader, history: ReadonlyArray<Message>): GenerateOptions => {
  const h = RequestHeader.canonicalize(header)
  const c = h.config
  const out: { -readonly [K in keyof GenerateOptions]: GenerateOptions[K] } = {
    provider: c.provider,
    model: c.model,
    messages: h.messagePrefix === undefined ? history.slice() : [...h.messagePrefix, ...history]
  }
  if (c.temperature !== undefined) out.temperature = c.temperature
  if (c.maxTokens !== undefined) out.maxTokens = c.maxTokens
  if (c.stop !== undefined) out.stop = c.stop
  if (h.system !== undefined) out.system = h.system
  if (h.tools !== undefined) out.tools = h.tools
  return out
}

interface Open {
  readonly turn: number
  readonly step: number
  readonly stepStartSeq: number
  readonly history: ReadonlyArray<Message>
}

/**
 * Rebuilds the request of every step of the log, in log order (S-20).
 *
 * @since 0.1.0
 * @category reconstruction
 */
export const reconstruct = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<ReconstructedRequest> => {
  const surface = Surface.makeState()
  let derived: Array<Message> = []
  let derivedNodes = 0
  let generation = 0
  const history = (): ReadonlyArray<Message> => {
    if (generation !== surface.replaceGeneration) {
      derived = []
      derivedNodes = 0
      generation = surface.replaceGeneration
    }
    for (let i = derivedNodes; i < surface.nodes.length; i++) {
      const m = Projection.deriveEventMessage(surface.nodes[i] as SessionEvent)
      if (m !== undefined) derived.push(m)
    }
    derivedNodes = surface.nodes.length
    return derived.slice()
  }
  let header: EpochHeader | undefined
  let open: Open | undefined
  const out: Array<ReconstructedRequest> = []
  const close = (firstChunkSeq: number | undefined): void => {
    if (open === undefined) return
    out.push({
      turn: open.turn,
      step: open.step,
      stepStartSeq: open.stepStartSeq,
      firstChunkSeq,
      request: header === undefined ? undefined : toRequest(header, open.history)
    })
    open = undefined
  }
  for (const event of events) {
    switch (event.type) {
      case "step/start":
        close(undefined)
        open = { turn: event.data.turn, step: event.data.step, stepStartSeq: event.seq, history: history() }
        break
      case "assistant/chunk":
        if (open !== undefined && open.turn === event.data.turn && open.step === event.data.step) close(event.seq)
        break
      case "step/end":
      case "turn/end":
        close(undefined)
        break
      case "request/header":
        header = event.data.header
        break
      default:
        break
    }
    if (Surface.check(surface, event.type, event.surfaceOp, event.sourceEventSeqs, event.seq) === undefined) {
      Surface.apply(surface, event)
    }
  }
  close(undefined)
  return out
}
