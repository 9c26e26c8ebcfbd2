/**
 * The `recall` tool (K-9): brings back, verbatim, the projected content of log events that a
 * compaction shadowed — a summarised range (`compact/summary.shadowedSeqs`) or a trimmed tool
 * result (its original seq, named in the trim marker).
 *
 * `{from, to}` must lie inside ONE such range, else the call is an error result. The answer
 * renders each event of the range that projects to a model message (S-14) as `#<seq> <role>:`
 * followed by its blocks — text verbatim, tool calls as `call <name> <arguments>`, tool results
 * as `result <callId>: <text>`; reasoning is left out — and is cut at the budget (code points)
 * with a marker saying how to ask for less.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { ContentBlock } from "../../Llm/ContentBlock.js"
import * as ContentBlocks from "../../Llm/ContentBlock.js"
import * as Projection from "../../Session/Projection.js"
import type { Session } from "../../Session/Session.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as Tool from "../Tool.js"

/**
 * The tool's name.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME = "recall"

/**
 * A recall over a range that is not shadowed, or with bad arguments.
 *
 * @since 0.1.0
 * @category errors
 */
export class RecallError extends Data.TaggedError("RecallError")<{ readonly message: string }> {}

/**
 * The shadowed ranges of a log: summarised ranges and trimmed results.
 *
 * @since 0.1.0
 * @category utils
 */
export const shadowedRanges = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  for (const e of events) {
    if (e.type === "compact/summary" && e.data.summary !== "") out.push(e.data.shadowedSeqs)
    else if (e.type === "tool/result" && e.surfaceOp !== undefined && e.surfaceOp !== "append") {
      const meta = e.data.meta as { readonly kind?: unknown; readonly originalSeq?: unknown } | undefined
      if (meta?.kind === "compaction/prune" && typeof meta.originalSeq === "number") {
        out.push([meta.originalSeq, meta.originalSeq])
      }
    }
  }
  return out
}

const renderBlock = (block: ContentBlock): string | undefined => {
  switch (block.type) {
    case "text":
      return block.text
    case "reasoning":
      return undefined
    case "tool-call":
      return `call ${block.name} ${block.arguments}`
    case "tool-result":
      return `result ${block.toolCallId}${block.isError === true ? " (error)" : ""}: ${ContentBlocks.flattenText(block.content)}`
    default:
      return undefined
  }
}

/**
 * Renders the events `[from, to]` as the model saw them, cut at `budget` code points.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (events: ReadonlyArray<SessionEvent>, from: number, to: number, budget: number): string => {
  const parts: Array<string> = []
  for (let s = from; s <= to && s < events.length; s++) {
    const e = events[s] as SessionEvent
    const m = Projection.deriveEventMessage(e)
    if (m === undefined) continue
    const body = m.content.map(renderBlock).filter((t): t is string => t !== undefined).join("\n")
    parts.push(`#${e.seq} ${m.role}:\n${body}`)
  }
  const all = parts.length === 0 ? `(events #${from}-#${to} hold no messages)` : parts.join("\n\n")
  const points = Array.from(all)
  if (points.length <= budget) return all
  return `${points.slice(0, budget).join("")}\n[… recall output cut at ${budget} characters of ${points.length}; recall a narrower range …]`
}

const integer = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

/**
 * The recall tool over one session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (session: Session, budget: number): Tool.Tool<never> =>
  Tool.raw({
    name: NAME,
    description:
      "Brings back, verbatim, log events that were summarised or trimmed to save context. Pass the event range a summary cites, e.g. [#120-#188] → {\"from\": 120, \"to\": 188}, or the event named in a trimmed tool result.",
    parameters: {
      type: "object",
      properties: {
        from: { type: "integer", description: "first event seq of the range" },
        to: { type: "integer", description: "last event seq of the range (inclusive)" }
      },
      required: ["from", "to"]
    },
    isConcurrencySafe: () => true,
    execute: (args) =>
      Effect.gen(function*() {
        const a = args as { readonly from?: unknown; readonly to?: unknown } | null
        if (typeof a !== "object" || a === null || !integer(a.from) || !integer(a.to) || a.from > a.to) {
          return yield* new RecallError({ message: "recall needs integer event seqs {from, to} with from <= to" })
        }
        const { from, to } = a
        const events = yield* session.events
        const inside = shadowedRanges(events).some(([lo, hi]) => from >= lo && to <= hi)
        if (!inside) {
          return yield* new RecallError({
            message: `events #${from}-#${to} are not inside a compacted range; recall only brings back summarised or trimmed events`
          })
        }
        return [ContentBlocks.text(render(events, from, to, budget))]
      })
  })
