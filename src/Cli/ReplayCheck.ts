/**
 * `harness sessions replay`: re-derives every `assistant/message` of a log from the chunks its step
 * logged, through the one `BlockAssembler` and the loop's own recording rule (`Loop/Recording`,
 * decision 0011), and reports every clause a message breaks with the events involved.
 *
 * Per step (the `assistant/chunk` and `assistant/message` events carrying its turn and step):
 * - a message must exist exactly when the step's stream finished successfully and the turn went on
 *   normally; a stream ending `error`/`aborted` (recovered or failed, L-20) has none, and a step
 *   whose turn was cancelled, disposed, failed or interrupted may lack one;
 * - its sources are exactly the step's chunks, in order; its content, provenance replay state and
 *   usage equal what `Recording.expected` derives from them; its route equals the step's
 *   request header.
 *
 * Verdicts (one per message): `match`; `anchor` (the `content: []` message a failing `step-result`
 * leaves, L-22, in a turn that ended in error at that step); `rewritten` (the content differs from
 * the stream and the loop dropped the stream's replay state, as it does for a `step-result`
 * rewrite, C-7); `mismatch`. A rewrite of a stream that carried no replay state cannot be told from
 * a changed log and is reported as a mismatch (the CLI registers no `step-result` listener).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as BlockAssembler from "../Llm/BlockAssembler.js"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import type * as StreamChunk from "../Llm/StreamChunk.js"
import * as Recording from "../Loop/Recording.js"
import type { EventOf, SessionEvent, TurnEndReason } from "../Session/SessionEvent.js"

/**
 * A rule a log breaks (a recording clause or a structural invariant).
 *
 * @since 0.1.0
 * @category models
 */
export type Rule = Recording.Rule

/**
 * One broken rule: where, which events, and what was found.
 *
 * @since 0.1.0
 * @category models
 */
export interface Finding {
  readonly rule: Rule
  /** the events involved, ascending */
  readonly seqs: ReadonlyArray<number>
  readonly turn?: number
  readonly step?: number
  /** what was found, in one sentence */
  readonly detail: string
}

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
  readonly status: "match" | "anchor" | "rewritten" | "mismatch"
}

/**
 * What a replay found.
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  readonly verdicts: ReadonlyArray<Verdict>
  readonly findings: ReadonlyArray<Finding>
}

interface StepRecord {
  readonly turn: number
  readonly step: number
  readonly chunks: Array<EventOf<"assistant/chunk">>
  readonly messages: Array<EventOf<"assistant/message">>
  /** the request route in force at the step's first chunk (or message) */
  route?: { readonly provider: string; readonly model: string } | undefined
  routeSeq?: number | undefined
}

const keyOf = (turn: number, step: number) => `${turn}/${step}`

const excerpt = (value: unknown, max = 80): string => {
  const text = value === undefined ? "nothing" : Json.isJson(value) ? Json.canonical(value) : String(value)
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

const sameJson = (a: unknown, b: unknown): boolean =>
  a === undefined || b === undefined ? a === b : Json.isJson(a) && Json.isJson(b) && Json.equals(a, b)

const sorted = (seqs: Iterable<number>): ReadonlyArray<number> => [...new Set(seqs)].sort((a, b) => a - b)

/** The seqs of the chunks that built the block at `position` (all chunks when unknown). */
const chunksOfBlock = (
  state: BlockAssembler.State,
  chunks: ReadonlyArray<EventOf<"assistant/chunk">>,
  position: number
): ReadonlyArray<number> => {
  let index: number | undefined
  for (const [i, p] of state.positions) if (p === position) index = i
  if (index === undefined) return chunks.map((c) => c.seq)
  return chunks.filter((c) => "index" in c.data.chunk && c.data.chunk.index === index).map((c) => c.seq)
}

const firstDifference = (a: ReadonlyArray<ContentBlock>, b: ReadonlyArray<ContentBlock>): number => {
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) if (!sameJson(a[i], b[i])) return i
  return -1
}

const lastChunk = (
  chunks: ReadonlyArray<EventOf<"assistant/chunk">>,
  type: StreamChunk.StreamChunk["type"]
): EventOf<"assistant/chunk"> | undefined => {
  for (let i = chunks.length - 1; i >= 0; i--) if (chunks[i]?.data.chunk.type === type) return chunks[i]
  return undefined
}

const hasToolCall = (content: ReadonlyArray<ContentBlock>) => content.some((b) => b.type === "tool-call")

/**
 * Checks every assistant message of a log (and every step that should have one) against the
 * recording rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (events: ReadonlyArray<SessionEvent>): Report => {
  const steps = new Map<string, StepRecord>()
  const turnEnds = new Map<number, { readonly seq: number; readonly reason: TurnEndReason }>()
  const stepsOfTurn = new Map<number, Array<StepRecord>>()
  let route: { provider: string; model: string; seq: number } | undefined
  const stepOf = (turn: number, step: number): StepRecord => {
    const key = keyOf(turn, step)
    let record = steps.get(key)
    if (record === undefined) {
      record = { turn, step, chunks: [], messages: [] }
      steps.set(key, record)
      const list = stepsOfTurn.get(turn) ?? []
      list.push(record)
      stepsOfTurn.set(turn, list)
    }
    return record
  }
  const noteRoute = (record: StepRecord) => {
    if (record.route === undefined && route !== undefined) {
      record.route = { provider: route.provider, model: route.model }
      record.routeSeq = route.seq
    }
  }
  for (const event of events) {
    switch (event.type) {
      case "request/header":
        route = { provider: event.data.header.config.provider, model: event.data.header.config.model, seq: event.seq }
        break
      case "step/start":
        stepOf(event.data.turn, event.data.step)
        break
      case "assistant/chunk": {
        const record = stepOf(event.data.turn, event.data.step)
        noteRoute(record)
        record.chunks.push(event)
        break
      }
      case "assistant/message": {
        const record = stepOf(event.data.turn, event.data.step)
        noteRoute(record)
        record.messages.push(event)
        break
      }
      case "turn/end":
        turnEnds.set(event.data.turn, { seq: event.seq, reason: event.data.reason })
        break
      default:
        break
    }
  }

  const verdicts: Array<Verdict> = []
  const findings: Array<Finding> = []
  const maxTokensSteps = new Map<number, Array<number>>()

  for (const record of steps.values()) {
    const { step, turn } = record
    const where = { turn, step }
    const chunkSeqs = record.chunks.map((c) => c.seq)
    const state = BlockAssembler.foldAll(record.chunks.map((c) => c.data.chunk as StreamChunk.StreamChunk))
    const finish = state.finish ?? { kind: "stop" as const }
    const failure = state.chunks === 0 ? undefined : Recording.requestFailure(finish)
    const ended = turnEnds.get(turn)
    const later = (stepsOfTurn.get(turn) ?? []).some((s) => s.step > step)

    if (record.messages.length > 1) {
      findings.push({
        rule: Recording.rules.oneMessagePerCall,
        seqs: record.messages.map((m) => m.seq),
        ...where,
        detail: `the step records ${record.messages.length} assistant messages`
      })
    }
    const message = record.messages[0]
    if (message === undefined) {
      // a successful finish with no message: only a failure after the finish (recovered: a later
      // step follows) or a turn that did not end normally explains it
      const lastFinish = lastChunk(record.chunks, "finish")
      const normalEnd = ended !== undefined && (ended.reason.kind === "completed" || ended.reason.kind === "max-tokens")
      if (lastFinish !== undefined && failure === undefined && !later && normalEnd) {
        findings.push({
          rule: Recording.rules.oneMessagePerCall,
          seqs: sorted([...chunkSeqs, ended.seq]),
          ...where,
          detail: `the stream finished "${finish.kind}" (event ${lastFinish.seq}) and the turn ended ${ended.reason.kind}, but no assistant message was recorded`
        })
      }
      continue
    }

    const problems: Array<Finding> = []
    const at = (rule: Rule, seqs: Iterable<number>, detail: string) =>
      problems.push({ rule, seqs: sorted([message.seq, ...seqs]), ...where, detail })

    // sources: exactly the step's chunks logged before the message, in order
    const before = record.chunks.filter((c) => c.seq < message.seq).map((c) => c.seq)
    const sources = message.sourceEventSeqs ?? []
    if (message.sourceEventSeqs === undefined || !sameJson(sources, before)) {
      at(
        Recording.rules.sources,
        [...sources, ...before].filter((s) => s < message.seq),
        message.sourceEventSeqs === undefined
          ? "the message records no sources"
          : `sources are [${sources.join(", ")}] but the step's chunks are [${before.join(", ")}]`
      )
    }
    if (failure !== undefined) {
      at(
        Recording.rules.failedStreamNotRecorded,
        chunkSeqs,
        `the stream finished "${finish.kind}" (${failure.message}) yet a message was recorded`
      )
    }
    const assembled = BlockAssembler.assemble(state)
    if (Result.isFailure(assembled)) {
      at(Recording.rules.assemblable, chunkSeqs, assembled.failure.message)
      findings.push(...problems)
      verdicts.push({ seq: message.seq, turn, step, status: "mismatch" })
      continue
    }
    const response = Recording.response(assembled.success)
    const logged = message.data
    const expected = Recording.expected({ turn, step, response, route: logged.provenance })
    let status: Verdict["status"] = "match"

    // content
    if (!sameJson(logged.content, expected.content)) {
      const anchorTurn = ended === undefined || (ended.reason.kind === "error" && ended.reason.step === step)
      const rewriteShaped = response.replayState !== undefined && logged.provenance.replayState === undefined
      if (logged.content.length === 0 && anchorTurn && failure === undefined) {
        status = "anchor"
      } else if (Recording.isMaxTokens(finish) && hasToolCall(logged.content)) {
        at(
          Recording.rules.maxTokensDropsToolCalls,
          chunkSeqs,
          `the step finished max-tokens but its message keeps ${
            logged.content.filter((b) => b.type === "tool-call").length
          } tool call(s)`
        )
      } else if (rewriteShaped) {
        status = "rewritten"
      } else {
        const position = firstDifference(logged.content, expected.content)
        const block = logged.content[position] ?? expected.content[position]
        at(
          Recording.rules.content,
          chunksOfBlock(state, record.chunks, position),
          `block ${position}${block === undefined ? "" : ` (${block.type})`}: logged ${
            excerpt(logged.content[position])
          } but the chunks assemble to ${excerpt(expected.content[position])}`
        )
      }
    }
    // replay state (only meaningful when the content is what the stream assembled to)
    if (status === "match") {
      const want = Recording.keepsReplayState(response, logged.content) ? response.replayState : undefined
      if (!sameJson(logged.provenance.replayState, want)) {
        const finishSeq = lastChunk(record.chunks, "finish")?.seq
        at(
          Recording.rules.replayState,
          finishSeq === undefined ? [] : [finishSeq],
          `the message's replay state is ${excerpt(logged.provenance.replayState)} but the rule gives ${excerpt(want)}`
        )
      }
    } else if (status === "anchor" && logged.provenance.replayState !== undefined) {
      at(Recording.rules.replayState, [], "a step-result anchor keeps no replay state")
    }
    // usage
    if (!sameJson(logged.usage, response.usage)) {
      const usageSeq = lastChunk(record.chunks, "usage")?.seq
      at(
        Recording.rules.usage,
        usageSeq === undefined ? [] : [usageSeq],
        `the message's usage is ${excerpt(logged.usage)} but the last usage chunk says ${excerpt(response.usage)}`
      )
    }
    // route: the step's request header
    if (
      record.route !== undefined &&
      (record.route.provider !== logged.provenance.provider || record.route.model !== logged.provenance.model)
    ) {
      at(
        Recording.rules.provenance,
        record.routeSeq === undefined ? [] : [record.routeSeq],
        `the message names ${logged.provenance.provider}/${logged.provenance.model} but the request header says ${record.route.provider}/${record.route.model}`
      )
    }
    if (problems.length > 0) status = "mismatch"
    findings.push(...problems)
    verdicts.push({ seq: message.seq, turn, step, status })
    if (Recording.isMaxTokens(finish) && failure === undefined && status !== "anchor") {
      maxTokensSteps.set(turn, [...(maxTokensSteps.get(turn) ?? []), message.seq])
    }
  }

  // L-30: the turn is max-tokens exactly when a recorded step was (aborted/disposed/error win)
  for (const [turn, end] of turnEnds) {
    const truncated = maxTokensSteps.get(turn) ?? []
    const kind = end.reason.kind
    if (kind === "max-tokens" && truncated.length === 0) {
      findings.push({
        rule: Recording.rules.turnMaxTokens,
        seqs: [end.seq],
        turn,
        detail: "the turn ended max-tokens but none of its recorded steps finished max-tokens"
      })
    } else if (kind === "completed" && truncated.length > 0) {
      findings.push({
        rule: Recording.rules.turnMaxTokens,
        seqs: sorted([...truncated, end.seq]),
        turn,
        detail: "the turn ended completed although a recorded step finished max-tokens"
      })
    }
  }
  verdicts.sort((a, b) => a.seq - b.seq)
  findings.sort((a, b) => (a.seqs[0] ?? 0) - (b.seqs[0] ?? 0))
  return { verdicts, findings }
}

/**
 * A finding as one line for a reader: where, the rule broken (its text and name; the rule ids are in the
 * `--json` report's `spec` field), the events involved and what was found.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderFinding = (finding: Finding): string => {
  const where = finding.turn === undefined
    ? ""
    : `turn ${finding.turn}${finding.step === undefined ? "" : ` step ${finding.step}`}: `
  return `${where}breaks "${finding.rule.text}" (${finding.rule.name}); events ${
    renderSeqs(finding.seqs)
  }: ${finding.detail}`
}

/**
 * Seqs as compact ranges (`4-7, 9`).
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderSeqs = (seqs: ReadonlyArray<number>): string => {
  const parts: Array<string> = []
  let i = 0
  while (i < seqs.length) {
    let j = i
    while (j + 1 < seqs.length && seqs[j + 1] === (seqs[j] ?? 0) + 1) j++
    parts.push(j === i ? `${seqs[i]}` : `${seqs[i]}-${seqs[j]}`)
    i = j + 1
  }
  return parts.length === 0 ? "none" : parts.join(", ")
}
