/**
 * The reconstruction invariant (S-20) for loop tests: every request the scripted adapter received
 * for a session equals a request rebuilt from that session's log alone (model-visible must equal
 * logged), and the log is balanced once the agent is idle (every `turn/start` closed, every
 * `step/start` closed, every `tool/call` answered).
 *
 * Matching: requests are walked in order against the steps rebuilt by `Reconstruct.reconstruct`;
 * each request must equal the current step's request or a later one (a retried attempt of the
 * same step, DEC-3, matches the same step again). Every step that streamed a chunk must have been
 * matched. Steps that streamed nothing may or may not have sent a request (the log cannot tell).
 * A fresh session seeded with the log must derive the same history as the live one.
 *
 * Every check runs against two rebuilds: `Reconstruct.reconstruct` (which shares the projection
 * and surface code with the live session, so it cannot see a fault in them) and the independent
 * rebuild of `IndependentRebuild.ts`, written from the rules without that code.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Json from "../../src/Llm/Json.js"
import type { GenerateOptions } from "../../src/Llm/Message.js"
import * as Reconstruct from "../../src/Session/Reconstruct.js"
import * as Session from "../../src/Session/Session.js"
import type { SessionError } from "../../src/Session/SessionError.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import type * as TestKit from "../../src/Loop/TestKit.js"
import * as IndependentRebuild from "./IndependentRebuild.js"

const canonical = (request: GenerateOptions): string => {
  const { sessionId: _ignored, ...rest } = request
  return Json.canonical(rest as unknown as Json.Json)
}

/**
 * Whether the recorded requests (`wanted`, canonical) can be matched in order against the rebuilt
 * steps (`candidates`, canonical or `undefined`): request i matches candidate k ≥ (candidate of
 * request i-1); a retried attempt may match the same step again; no step that streamed chunks may
 * be skipped.
 */
const matches = (
  wanted: ReadonlyArray<string>,
  candidates: ReadonlyArray<string | undefined>,
  streamed: ReadonlyArray<boolean>
): boolean => {
  const memo = new Map<string, boolean>()
  const feasible = (i: number, j: number): boolean => {
    const key = `${i}:${j}`
    const cached = memo.get(key)
    if (cached !== undefined) return cached
    let ok = false
    if (i === wanted.length) {
      ok = streamed.every((s, k) => !s || k <= j)
    } else {
      for (let k = Math.max(j, 0); k < candidates.length && !ok; k++) {
        if (k > j + 1 && streamed.slice(j + 1, k).some((s) => s)) break
        if (k === j && j >= 0 && candidates[k] === wanted[i]) ok = feasible(i + 1, k)
        else if (k > j && candidates[k] === wanted[i]) ok = feasible(i + 1, k)
      }
    }
    memo.set(key, ok)
    return ok
  }
  return feasible(0, -1)
}

/** The two rebuilds a request list is checked against. */
export type RebuildName = "Reconstruct" | "independent"

/**
 * The rebuilds (of `Reconstruct.reconstruct`, which shares the projection code with the live
 * session, and of the independent {@link IndependentRebuild.rebuild}) that the requests of
 * `sessionId` can NOT be matched against, each with a report; empty when the invariant holds.
 */
export const mismatches = (
  sessionId: string,
  events: ReadonlyArray<SessionEvent>,
  requests: ReadonlyArray<GenerateOptions>
): ReadonlyArray<{ readonly rebuild: RebuildName; readonly report: string }> => {
  const wanted = requests.filter((r) => r.sessionId === sessionId).map(canonical)
  const rebuilds: ReadonlyArray<readonly [RebuildName, ReadonlyArray<{ request: GenerateOptions | undefined; streamed: boolean }>]> = [
    ["Reconstruct", Reconstruct.reconstruct(events).map((s) => ({ request: s.request, streamed: s.firstChunkSeq !== undefined }))],
    ["independent", IndependentRebuild.rebuild(events)]
  ]
  return rebuilds.flatMap(([rebuild, steps]) => {
    const candidates = steps.map((s) => (s.request === undefined ? undefined : canonical(s.request)))
    const streamed = steps.map((s) => s.streamed)
    if (matches(wanted, candidates, streamed)) return []
    const report = `S-20: the requests of session ${sessionId} cannot be rebuilt from its log (${rebuild} rebuild)\nrecorded:\n${
      wanted.join("\n")
    }\nrebuilt (streamed?):\n${candidates.map((c, k) => `${streamed[k] ? "*" : " "} ${c}`).join("\n")}`
    return [{ rebuild, report }]
  })
}

/**
 * Checks the invariant for one session against BOTH rebuilds; returns the number of requests
 * matched.
 */
export const verify = (
  session: Session.Session,
  requests: ReadonlyArray<GenerateOptions>
): Effect.Effect<number, SessionError> =>
  Effect.gen(function*() {
    const events = yield* session.events
    const failed = mismatches(session.id, events, requests)
    if (failed.length > 0) expect.fail(failed.map((f) => f.report).join("\n"))
    // a fresh session seeded with the log derives the same history, and so does the independent fold
    const live = yield* session.deriveMessages
    const fresh = yield* Effect.orDie(Session.make({ seed: events }))
    expect(yield* fresh.deriveMessages).toEqual(live)
    expect(live, "S-15: the live history differs from the independent derivation").toEqual(
      IndependentRebuild.history(events)
    )
    return requests.filter((r) => r.sessionId === session.id).length
  })

/**
 * Balance of a log (S-16): every turn closed, every step closed, every `tool/call` answered.
 * Returns a list of problems (empty when balanced).
 */
export const problems = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<string> => {
  const out: Array<string> = []
  let turn: number | undefined
  let step: number | undefined
  const calls = new Set<string>()
  for (const e of events) {
    switch (e.type) {
      case "turn/start":
        if (turn !== undefined) out.push(`turn ${e.data.turn} starts inside open turn ${turn}`)
        turn = e.data.turn
        break
      case "turn/end":
        if (turn !== e.data.turn) out.push(`turn/end ${e.data.turn} without matching turn/start (open: ${turn})`)
        if (step !== undefined) out.push(`turn ${e.data.turn} ends with step ${step} open`)
        if (calls.size > 0) out.push(`turn ${e.data.turn} ends with unanswered calls ${[...calls].join(",")}`)
        turn = undefined
        step = undefined
        calls.clear()
        break
      case "step/start":
        if (turn === undefined) out.push(`step/start #${e.seq} outside a turn`)
        if (step !== undefined) out.push(`step ${e.data.step} starts inside open step ${step}`)
        step = e.data.step
        break
      case "step/end":
        if (step !== e.data.step) out.push(`step/end ${e.data.step} without matching step/start`)
        step = undefined
        break
      case "tool/call":
        calls.add(e.data.callId)
        break
      case "tool/result":
        // crash repair answers a call that never started without a tool/call (S-23)
        if (!calls.delete(e.data.callId) && e.data.error?.code !== "INTERRUPTED") {
          out.push(`tool/result ${e.data.callId} without tool/call`)
        }
        break
      default:
        if (turn === undefined) out.push(`${e.type} #${e.seq} outside a turn`)
    }
  }
  if (turn !== undefined) out.push(`turn ${turn} never ended`)
  return out
}

/**
 * Every tool call inside a logged assistant message is answered (S-16, L-17): per turn, each
 * `tool-call` block of an `assistant/message` is answered by exactly one later `tool/result` with
 * the same id, and every `tool/result` answers such a block. A call without result is legal only
 * in a turn that ended with `error`. A resumed turn continues the calls of the turn it resumes, and
 * a re-run's result may answer a call again by replacing its synthetic result on the surface (DEC-16).
 * Returns a list of problems (empty when all are answered).
 */
export const callProblems = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<string> => {
  const out: Array<string> = []
  // call id → number of results so far, for the calls of the open turn's assistant messages
  let answers = new Map<string, number>()
  // a resumed turn (DEC-16) continues the calls of the turn it resumes
  let ended = { turn: -1, answers: new Map<string, number>() }
  for (const e of events) {
    switch (e.type) {
      case "turn/start":
        answers = e.data.trigger.kind === "resume" && e.data.turn === ended.turn ? ended.answers : new Map()
        break
      case "assistant/message":
        for (const block of e.data.content) {
          if (block.type !== "tool-call") continue
          if (answers.has(block.id)) out.push(`turn ${e.data.turn}: call ${block.id} appears in two assistant messages`)
          answers.set(block.id, 0)
        }
        break
      case "tool/result": {
        const n = answers.get(e.data.callId)
        if (n === undefined) out.push(`tool/result #${e.seq} ${e.data.callId} answers no call of an assistant message`)
        else if (n > 0 && e.surfaceOp === "append") out.push(`tool/result #${e.seq} answers call ${e.data.callId} a second time`)
        else answers.set(e.data.callId, 1)
        break
      }
      case "turn/end": {
        const unanswered = [...answers].filter(([, n]) => n === 0).map(([id]) => id)
        if (unanswered.length > 0 && e.data.reason.kind !== "error") {
          out.push(`turn ${e.data.turn} (${e.data.reason.kind}) ends with calls never answered: ${unanswered.join(",")}`)
        }
        ended = { turn: e.data.turn, answers }
        answers = new Map()
        break
      }
      default:
        break
    }
  }
  return out
}

/**
 * Asserts the log is balanced.
 */
export const expectBalanced = (events: ReadonlyArray<SessionEvent>): void => {
  expect(problems(events)).toEqual([])
}

/**
 * Asserts every tool call of every logged assistant message is answered exactly once
 * ({@link callProblems}).
 */
export const expectCallsAnswered = (events: ReadonlyArray<SessionEvent>): void => {
  expect(callProblems(events)).toEqual([])
}

/**
 * The loop-test epilogue: waits until idle, then asserts a balanced log and the reconstruction
 * invariant for the test agent, and that every tool call of an assistant message is answered. Returns the number of requests matched.
 */
export const check = (t: TestKit.TestAgent): Effect.Effect<number, SessionError> =>
  Effect.gen(function*() {
    yield* t.agent.whenIdle
    const events = yield* t.events
    expectBalanced(events)
    expectCallsAnswered(events)
    return yield* verify(t.agent.session, yield* t.requests)
  })
