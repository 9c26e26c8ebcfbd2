/**
 * `harness sessions replay`: re-derives every `assistant/message` of a log from its logged
 * `assistant/chunk` events (its `sourceEventSeqs`) through the one `BlockAssembler`, and reports
 * every mismatch. A message a `step-result` listener rewrote (L-22) legitimately differs from its
 * stream and is reported as a mismatch too: the log records what the tools saw, and the report
 * shows both sides so a reader can tell a rewrite from corruption.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as BlockAssembler from "../Llm/BlockAssembler.js"
import * as Json from "../Llm/Json.js"
import type * as StreamChunk from "../Llm/StreamChunk.js"
import type { SessionEvent } from "../Session/SessionEvent.js"

/**
 * The verdict for one assistant message.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verdict {
  readonly seq: number
  readonly turn: number
  readonly step: number
  readonly status: "match" | "mismatch" | "unassemblable"
  readonly detail?: string
}

/**
 * Checks every assistant message of a log.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<Verdict> => {
  const bySeq = new Map<number, SessionEvent>()
  for (const e of events) bySeq.set(e.seq, e)
  const out: Array<Verdict> = []
  for (const event of events) {
    if (event.type !== "assistant/message") continue
    const chunks: Array<StreamChunk.StreamChunk> = []
    for (const seq of event.sourceEventSeqs ?? []) {
      const source = bySeq.get(seq)
      if (source !== undefined && source.type === "assistant/chunk") chunks.push(source.data.chunk)
    }
    const base = { seq: event.seq, turn: event.data.turn, step: event.data.step }
    const assembled = BlockAssembler.assemble(BlockAssembler.foldAll(chunks))
    if (Either.isLeft(assembled)) {
      out.push({ ...base, status: "unassemblable", detail: assembled.left.message })
      continue
    }
    const derived = Json.canonical(assembled.right.blocks as unknown as Json.Json)
    const logged = Json.canonical(event.data.content as unknown as Json.Json)
    out.push(
      derived === logged
        ? { ...base, status: "match" }
        : { ...base, status: "mismatch", detail: `logged ${logged} but chunks assemble to ${derived}` }
    )
  }
  return out
}
