/**
 * Cancellation stress (L-4, L-17, L-27, DEC-1): 200 seeded random runs, each cancelling at a
 * random moment of a turn (before the stream, mid-stream, mid-tool in a parallel batch, during
 * recovery or continuation), from inside the loop or from another fiber. After every run the log
 * is balanced (every `turn/start` closed, every `tool/call` answered, every tool call inside a logged
 * assistant message answered by exactly one `tool/result` with its id), the agent is idle, and the
 * next `send` completes normally; the reconstruction invariant holds for every session.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as Agent from "../../src/Loop/Agent.js"
import * as Hooks from "../../src/Loop/Hooks.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import type * as Tool from "../../src/Loop/Tool.js"
import { text, tool } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"

/** mulberry32: a small seeded PRNG */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Moment =
  | "prompt-submit"
  | "pre-step"
  | "request"
  | "step-start"
  | "mid-stream"
  | "after-stream"
  | "mid-tool"
  | "post-step"
  | "recovery"
  | "continuation"

const moments: ReadonlyArray<Moment> = [
  "prompt-submit",
  "pre-step",
  "request",
  "step-start",
  "mid-stream",
  "after-stream",
  "mid-tool",
  "post-step",
  "recovery",
  "continuation"
]

interface Plan {
  readonly agentId: string
  readonly moment: Moment
  /** chunk / tool start count at which to cancel */
  readonly k: number
  /** cancel from a forked fiber instead of inline */
  readonly forked: boolean
  /** the number of parallel calls (mid-tool) and which of them hang */
  readonly calls: number
  readonly hanging: ReadonlyArray<boolean>
  readonly vote: "continue" | "stop"
  readonly reason: string
  readonly armed: boolean
}

const idle: Plan = {
  agentId: "",
  moment: "pre-step",
  k: 0,
  forked: false,
  calls: 0,
  hanging: [],
  vote: "stop",
  reason: "",
  armed: false
}

const RUNS = 200

describe("Cancellation", () => {
  it.effect(`[L-4,L-17,L-27,DEC-1] ${RUNS} seeded random cancellations leave balanced logs, an idle agent, and a working next send`, () =>
    Effect.gen(function*() {
      const random = prng(0x5eed)
      const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)] as A
      const plan = yield* Ref.make<Plan>(idle)
      const started = yield* Ref.make(0)

      // the model: answers per the plan of the current agent
      const responder: Scripted.Responder = () =>
        Effect.map(Ref.get(plan), (p): Scripted.Reply => {
          if (!p.armed) return Scripted.text("fine")
          switch (p.moment) {
            case "mid-stream":
              return [Scripted.say("abcdefghijklmnopqrstuvwxyz"), Scripted.forever]
            case "mid-tool":
              return [
                ...Array.from({ length: p.calls }, (_, i) =>
                  Scripted.toolCall(`c${i}`, p.hanging[i] === true ? "slow" : "fast", "{}")),
                Scripted.usage(10, 5),
                Scripted.finish("tool-calls")
              ]
            case "recovery":
              return [Scripted.say("partial"), Scripted.fail("BROKEN", "stream broke")]
            default:
              return Scripted.text("answer")
          }
        })

      yield* Effect.gen(function*() {
      const hooks = yield* Hooks.LoopHooks

      // cancels once, when the plan is armed for this agent and moment
      const fire = (agent: Agent.Agent | Hooks.HookAgent, moment: Moment): Effect.Effect<void> =>
        Effect.gen(function*() {
          const p = yield* Ref.get(plan)
          if (!p.armed || p.moment !== moment || p.agentId !== agent.id) return
          yield* Ref.set(plan, { ...p, armed: false })
          if (p.forked) yield* Effect.forkDetach(agent.cancel(p.reason))
          else yield* agent.cancel(p.reason)
        })

      yield* hooks.promptSubmit.register((i, next) => Effect.andThen(fire(i.agent, "prompt-submit"), next()))
      yield* hooks.preStep.register((i) => fire(i.agent, "pre-step"))
      yield* hooks.request.register((i, next) => Effect.andThen(fire(i.agent, "request"), next()))
      yield* hooks.postStep.register((i) => fire(i.agent, "post-step"))
      yield* hooks.requestError.register((i) =>
        Effect.as(fire(i.agent, "recovery"), Hooks.RequestErrorDecision.Retry())
      )
      yield* hooks.turnContinuation.register((i, next) =>
        Effect.gen(function*() {
          const p = yield* Ref.get(plan)
          const mine = p.armed && p.moment === "continuation" && p.agentId === i.agent.id
          yield* fire(i.agent, "continuation")
          return mine
            ? (p.vote === "continue" ? Hooks.ContinuationDecision.Continue({}) : Hooks.ContinuationDecision.Stop())
            : yield* next()
        })
      )

      const toolBody = (hang: boolean) => (_args: unknown, ctx: Tool.ToolRunContext) =>
        Effect.gen(function*() {
          const n = yield* Ref.updateAndGet(started, (x) => x + 1)
          const p = yield* Ref.get(plan)
          if (p.armed && p.moment === "mid-tool" && n >= p.k) {
            yield* Ref.set(plan, { ...p, armed: false })
            if (p.forked) yield* Effect.forkDetach(ctx.agent.cancel(p.reason))
            else yield* ctx.agent.cancel(p.reason)
          }
          if (hang) return yield* Effect.never
          return [ContentBlock.text("tool done")]
        })
      const fast = tool("fast", toolBody(false), { parallel: true })
      const slow = tool("slow", toolBody(true), { parallel: true })

      const outcomes = new Map<string, number>()
      let callsInMessages = 0
      for (let run = 0; run < RUNS; run++) {
        yield* Effect.scoped(Effect.gen(function*() {
          const t = yield* TestKit.agent({ tools: [fast, slow], maxParallelToolCalls: 1 + Math.floor(random() * 4) })
          const moment = pick(moments)
          const calls = 2 + Math.floor(random() * 3)
          const hanging = Array.from({ length: calls }, () => random() < 0.5)
          if (!hanging.some((h) => h)) hanging[calls - 1] = true
          const p: Plan = {
            agentId: t.agent.id,
            moment,
            // mid-tool: a start count reached even when a hanging call holds the only pool slot
            k: moment === "mid-stream" ? 1 + Math.floor(random() * 20) : 1 + Math.floor(random() * (hanging.indexOf(true) + 1)),
            forked: random() < 0.3,
            calls,
            hanging,
            vote: random() < 0.5 ? "continue" : "stop",
            reason: `run ${run}`,
            armed: true
          }
          yield* Ref.set(plan, p)
          yield* Ref.set(started, 0)
          if (moment === "step-start") {
            yield* t.agent.session.observe((e) => (e.type === "step/start" ? fire(t.agent, "step-start") : Effect.void))
          }
          if (moment === "mid-stream") {
            const count = yield* Ref.make(0)
            yield* t.agent.session.observe((e) =>
              e.type === "assistant/chunk"
                ? Effect.flatMap(Ref.updateAndGet(count, (n) => n + 1), (n) => (n >= p.k ? fire(t.agent, "mid-stream") : Effect.void))
                : Effect.void
            )
          }
          if (moment === "after-stream") {
            yield* t.agent.session.observe((e) => (e.type === "assistant/message" ? fire(t.agent, "after-stream") : Effect.void))
          }
          yield* t.agent.send(text(`prompt ${run}`))
          // sometimes more input arrives before the cancel: it must be discarded with the turn
          if (random() < 0.3) yield* t.agent.send(text(`extra ${run}`))
          yield* t.agent.whenIdle
          // the cancel must have happened
          expect((yield* Ref.get(plan)).armed).toBe(false)
          expect(yield* t.agent.status).toBe("idle")
          const before = yield* t.events
          Reconstruction.expectBalanced(before)
          // every call inside a logged assistant message has exactly one tool/result with its id
          // (unstarted calls of an aborted batch get placeholder results, L-17)
          Reconstruction.expectCallsAnswered(before)
          callsInMessages += before.flatMap((e) =>
            e.type === "assistant/message" ? e.data.content.filter((b) => b.type === "tool-call") : []
          ).length
          const ends = yield* t.turnEnds
          const key = `${moment}:${ends.map((e) => e.kind).join(",")}`
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
          for (const end of ends) {
            expect(["aborted", "completed"]).toContain(end.kind)
            if (end.kind === "aborted") expect(end.reason).toBe(p.reason)
          }
          // the next send completes normally
          yield* Ref.set(plan, idle)
          yield* t.prompt(`after ${run}`)
          const last = (yield* t.turnEnds).at(-1)
          expect(last).toEqual({ kind: "completed" })
          yield* Reconstruction.check(t)
        }))
      }
      // every moment was exercised, and cancellation actually aborted turns
      const seen = new Set([...outcomes.keys()].map((k) => k.split(":")[0]))
      expect([...seen].sort()).toEqual([...moments].sort())
      expect([...outcomes.keys()].some((k) => k.includes("aborted"))).toBe(true)
      // the call check had calls to check
      expect(callsInMessages).toBeGreaterThan(RUNS / 10)
      }).pipe(Effect.provide(TestKit.layer({ script: Array.from({ length: 4 * RUNS + 100 }, () => responder) })))
    }), 120_000)
})
