/**
 * The structural invariants of a session log that a reader can check from the file alone
 * (`harness sessions verify`), next to the re-derivation of `ReplayCheck`:
 *
 * - seqs run 0, 1, 2, … (S-11);
 * - turns open and close one at a time with increasing numbers, every event inside one (S-16,
 *   S-17); steps open and close inside their turn with increasing numbers (L-12); chunks,
 *   assistant messages, tool calls and appended tool results sit in the open step they name;
 * - every tool call of an assistant message gets exactly one `tool/call` (name and raw arguments
 *   verbatim) and one appended `tool/result` with its id, results in model order (L-15, L-16); a
 *   call may stay unanswered only in a turn that ended in error (S-16) or is still open, and a
 *   crash-repaired turn may answer a call that never got its `tool/call` (S-23);
 * - provenance: an assistant message's sources are chunks of its own step; a tool result's source
 *   is the `tool/call` with its id (S-7, L-16).
 *
 * A log that ends inside a turn (a session being written, or a crash not yet repaired) is not a
 * violation: {@link Structure.open} says where it ends. Replacements (surface `replace`, e.g.
 * compaction) are left to the session's own validation.
 *
 * @since 0.1.0
 */
import type { ToolCallBlock } from "../Llm/ContentBlock.js"
import type { EventOf, SessionEvent, TurnEndReason } from "../Session/SessionEvent.js"
import type { Finding, Rule } from "./ReplayCheck.js"

/**
 * The structural rules.
 *
 * @since 0.1.0
 * @category constants
 */
export const rules = {
  contiguousSeqs: {
    name: "contiguous-seqs",
    spec: "S-11",
    text: "event seqs run 0, 1, 2, … without gaps or repeats"
  },
  balancedTurns: {
    name: "balanced-turns",
    spec: "S-16, S-17",
    text: "turns open and close one at a time, in increasing order, and every event lies inside one"
  },
  balancedSteps: {
    name: "balanced-steps",
    spec: "S-16, L-12",
    text: "steps open and close one at a time inside their turn, in increasing order"
  },
  inOwnStep: {
    name: "events-in-their-step",
    spec: "S-16",
    text: "chunks, assistant messages, tool calls and tool results sit inside the open step they name"
  },
  callsAnswered: {
    name: "calls-answered-once",
    spec: "L-15, L-16, S-16",
    text: "every tool call of an assistant message gets exactly one tool/call and one tool/result with its id"
  },
  callVerbatim: {
    name: "tool-call-verbatim",
    spec: "L-15",
    text: "a tool/call records the model's tool name and raw arguments"
  },
  resultOrder: {
    name: "results-in-model-order",
    spec: "L-16",
    text: "tool results commit in the order of the model's calls"
  },
  messageSources: {
    name: "message-sources-own-chunks",
    spec: "S-7, L-22",
    text: "an assistant message's sources are chunks of its own step"
  },
  resultSources: {
    name: "result-source-is-its-call",
    spec: "S-7, L-16",
    text: "a tool result's source is the tool/call with its id"
  }
} as const satisfies Record<string, Rule>

/**
 * What the structural check found.
 *
 * @since 0.1.0
 * @category models
 */
export interface Structure {
  readonly findings: ReadonlyArray<Finding>
  /** where the log ends inside a turn (still being written, or crashed and not yet repaired) */
  readonly open?: { readonly turn: number; readonly step?: number }
}

interface StepEvents {
  readonly turn: number
  readonly step: number
  readonly messages: Array<EventOf<"assistant/message">>
  readonly calls: Array<EventOf<"tool/call">>
  readonly results: Array<EventOf<"tool/result">>
}

const turnOf = (event: SessionEvent): number | undefined => {
  const data = event.data as unknown
  if (typeof data !== "object" || data === null) return undefined
  const turn = (data as { readonly turn?: unknown }).turn
  return typeof turn === "number" ? turn : undefined
}

/** event types that describe the session, not a turn, and may lie between turns (a rewind's record, issue 33) */
const sessionScoped: ReadonlySet<string> = new Set(["session/title", "checkpoint/manifest"])

const stepScoped = (
  event: SessionEvent
): event is EventOf<"assistant/chunk"> | EventOf<"assistant/message"> | EventOf<"tool/call"> | EventOf<"tool/result"> =>
  event.type === "assistant/chunk" || event.type === "assistant/message" || event.type === "tool/call" ||
  (event.type === "tool/result" && event.surfaceOp === "append")

/**
 * Checks the structural invariants of a log.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (events: ReadonlyArray<SessionEvent>): Structure => {
  const findings: Array<Finding> = []
  const add = (rule: Rule, seqs: ReadonlyArray<number>, detail: string, where: { turn?: number; step?: number } = {}) =>
    findings.push({ rule, seqs: [...new Set(seqs)].sort((a, b) => a - b), ...where, detail })
  const bySeq = new Map<number, SessionEvent>()
  const steps: Array<StepEvents> = []
  const turnEnds = new Map<number, TurnEndReason>()
  let openTurn: { turn: number; seq: number } | undefined
  let lastTurn: number | undefined
  let openStep: StepEvents & { seq: number } | undefined
  let lastStep = 0

  events.forEach((event, index) => {
    if (event.seq !== index) {
      add(rules.contiguousSeqs, [event.seq], `event ${index} of the log has seq ${event.seq}`)
    }
    bySeq.set(event.seq, event)
    switch (event.type) {
      case "turn/start": {
        const turn = event.data.turn
        if (openTurn !== undefined) {
          add(rules.balancedTurns, [openTurn.seq, event.seq], `turn ${turn} starts while turn ${openTurn.turn} is open`, {
            turn
          })
        }
        if (lastTurn !== undefined && turn <= lastTurn) {
          add(rules.balancedTurns, [event.seq], `turn ${turn} starts after turn ${lastTurn}`, { turn })
        }
        openTurn = { turn, seq: event.seq }
        lastTurn = turn
        openStep = undefined
        lastStep = 0
        return
      }
      case "turn/end": {
        const turn = event.data.turn
        if (openTurn === undefined) {
          add(rules.balancedTurns, [event.seq], `turn ${turn} ends but no turn is open`, { turn })
        } else if (openTurn.turn !== turn) {
          add(rules.balancedTurns, [openTurn.seq, event.seq], `turn ${turn} ends while turn ${openTurn.turn} is open`, {
            turn
          })
        }
        if (openStep !== undefined) {
          add(rules.balancedSteps, [openStep.seq, event.seq], `the turn ends while step ${openStep.step} is open`, {
            turn,
            step: openStep.step
          })
        }
        turnEnds.set(turn, event.data.reason)
        openTurn = undefined
        openStep = undefined
        return
      }
      default:
        break
    }
    if (openTurn === undefined) {
      // session metadata (a title from `sessions rename`) belongs to no turn
      if (!sessionScoped.has(event.type)) add(rules.balancedTurns, [event.seq], `${event.type} lies outside any turn`)
      return
    }
    const turn = turnOf(event)
    if (turn !== undefined && turn !== openTurn.turn) {
      add(rules.balancedTurns, [openTurn.seq, event.seq], `${event.type} names turn ${turn} inside turn ${openTurn.turn}`, {
        turn: openTurn.turn
      })
    }
    if (event.type === "step/start") {
      const { step } = event.data
      if (openStep !== undefined) {
        add(rules.balancedSteps, [openStep.seq, event.seq], `step ${step} starts while step ${openStep.step} is open`, {
          turn: openTurn.turn,
          step
        })
      }
      if (step <= lastStep) {
        add(rules.balancedSteps, [event.seq], `step ${step} starts after step ${lastStep}`, { turn: openTurn.turn, step })
      }
      openStep = { turn: event.data.turn, step, seq: event.seq, messages: [], calls: [], results: [] }
      steps.push(openStep)
      lastStep = step
      return
    }
    if (event.type === "step/end") {
      const { step } = event.data
      if (openStep === undefined || openStep.step !== step || openStep.turn !== event.data.turn) {
        add(
          rules.balancedSteps,
          openStep === undefined ? [event.seq] : [openStep.seq, event.seq],
          openStep === undefined ? `step ${step} ends but no step is open` : `step ${step} ends while step ${openStep.step} is open`,
          { turn: openTurn.turn, step }
        )
      }
      openStep = undefined
      return
    }
    if (!stepScoped(event)) return
    const { step } = event.data
    if (openStep === undefined || openStep.step !== step || openStep.turn !== event.data.turn) {
      add(
        rules.inOwnStep,
        openStep === undefined ? [event.seq] : [openStep.seq, event.seq],
        `${event.type} of step ${step} lies ${openStep === undefined ? "outside any step" : `inside step ${openStep.step}`}`,
        { turn: event.data.turn, step }
      )
      return
    }
    if (event.type === "assistant/message") openStep.messages.push(event)
    else if (event.type === "tool/call") openStep.calls.push(event)
    else if (event.type === "tool/result") openStep.results.push(event)
  })

  // provenance of assistant messages: chunks of the same step
  for (const s of steps) {
    for (const m of s.messages) {
      const foreign = (m.sourceEventSeqs ?? []).filter((seq) => {
        const source = bySeq.get(seq)
        return source === undefined || source.type !== "assistant/chunk" || source.data.turn !== s.turn ||
          source.data.step !== s.step
      })
      if (foreign.length > 0) {
        add(
          rules.messageSources,
          [m.seq, ...foreign.filter((seq) => bySeq.has(seq))],
          `sources ${foreign.join(", ")} are not chunks of turn ${s.turn} step ${s.step}`,
          { turn: s.turn, step: s.step }
        )
      }
    }
  }

  // tool calls answered once, verbatim, in order, with their sources
  for (const s of steps) {
    const where = { turn: s.turn, step: s.step }
    const blocks: Array<{ block: ToolCallBlock; seq: number }> = []
    for (const m of s.messages) {
      for (const b of m.data.content) if (b.type === "tool-call") blocks.push({ block: b as ToolCallBlock, seq: m.seq })
    }
    const reason = turnEnds.get(s.turn)
    const unfinished = reason === undefined || reason.kind === "error"
    const repaired = reason?.kind === "interrupted"
    const wanted = new Map<string, number>()
    for (const { block } of blocks) wanted.set(block.id, (wanted.get(block.id) ?? 0) + 1)
    const count = <A extends { readonly data: { readonly callId: string } }>(xs: ReadonlyArray<A>, id: string) =>
      xs.filter((x) => x.data.callId === id).length
    const ids = new Set([...wanted.keys(), ...s.calls.map((c) => c.data.callId), ...s.results.map((r) => r.data.callId)])
    for (const id of ids) {
      const want = wanted.get(id) ?? 0
      const calls = count(s.calls, id)
      const results = count(s.results, id)
      const seqs = [
        ...blocks.filter((b) => b.block.id === id).map((b) => b.seq),
        ...s.calls.filter((c) => c.data.callId === id).map((c) => c.seq),
        ...s.results.filter((r) => r.data.callId === id).map((r) => r.seq)
      ]
      const tooFew = (n: number) => n < want && !unfinished
      if (want === 0) {
        add(rules.callsAnswered, seqs, `call id "${id}" is not a tool call of the step's assistant message`, where)
      } else if (results > want || calls > want || tooFew(results) || (tooFew(calls) && !repaired)) {
        add(
          rules.callsAnswered,
          seqs,
          `call "${id}" appears ${want} time(s) in the message but has ${calls} tool/call and ${results} tool/result event(s)`,
          where
        )
      }
    }
    // verbatim name and arguments; model order of calls and results
    const order = blocks.map((b) => b.block)
    const callIds = s.calls.map((c) => c.data.callId as string)
    s.calls.forEach((c, i) => {
      const block = order[i]
      if (block === undefined || block.id !== c.data.callId) return
      if (block.name !== c.data.name || block.arguments !== c.data.arguments) {
        add(
          rules.callVerbatim,
          [c.seq, ...blocks.filter((b) => b.block === block).map((b) => b.seq)],
          `tool/call "${c.data.callId}" records ${c.data.name}(${c.data.arguments}) but the model called ${block.name}(${block.arguments})`,
          where
        )
      }
    })
    const outOfOrder = (logged: ReadonlyArray<string>) => logged.some((id, i) => order[i] !== undefined && order[i]?.id !== id)
    if (outOfOrder(callIds)) {
      add(rules.resultOrder, s.calls.map((c) => c.seq), `tool calls start in the order ${callIds.join(", ")}`, where)
    }
    const resultIds = s.results.map((r) => r.data.callId as string)
    if (outOfOrder(resultIds)) {
      add(rules.resultOrder, s.results.map((r) => r.seq), `tool results commit in the order ${resultIds.join(", ")}`, where)
    }
    // sources of results: the tool/call with the same id (the n-th result of an id ↔ its n-th call)
    const seen = new Map<string, number>()
    for (const r of s.results) {
      const nth = seen.get(r.data.callId) ?? 0
      seen.set(r.data.callId, nth + 1)
      const call = s.calls.filter((c) => c.data.callId === r.data.callId)[nth]
      const sources = r.sourceEventSeqs ?? []
      const ok = call === undefined ? sources.length === 0 : sources.length === 1 && sources[0] === call.seq
      if (!ok) {
        add(
          rules.resultSources,
          [r.seq, ...(call === undefined ? [] : [call.seq])],
          `tool/result "${r.data.callId}" cites [${sources.join(", ")}]${
            call === undefined ? " but no tool/call was logged for it" : ` but its tool/call is event ${call.seq}`
          }`,
          where
        )
      }
    }
  }

  findings.sort((a, b) => (a.seqs[0] ?? 0) - (b.seqs[0] ?? 0))
  if (openTurn === undefined) return { findings }
  const open: { turn: number; step?: number } = openStep === undefined
    ? { turn: openTurn.turn }
    : { turn: openTurn.turn, step: openStep.step }
  return { findings, open }
}
