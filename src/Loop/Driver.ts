/**
 * The driver (L-9, L-10, L-5, L-6): one fiber per agent, in the agent's scope, that turns queued
 * prompts into turns until the agent is disposed.
 *
 * Loop: wait for queued input; if the cancel marker is armed, clear it and — when nothing is
 * queued any more — settle idle waiters and wait again; set `running` (the `status` notification
 * runs here, awaited: a listener may cancel → the same check, back to idle without a turn); claim
 * the turn enclosure (waiting while an injection turn is being written); run turn `lastTurn + 1`
 * over the whole queued batch; clear the marker; move leftover steering to the queued FIFO
 * (discarded after a terminal stop, L-26); go idle when nothing is queued (chained turns stay
 * `running`). No turn failure stops the driver ({@link Turn.run} never fails).
 *
 * Going idle (L-6): status becomes `idle`, idle waiters settle, THEN the `status` observers run.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Hooks from "./Hooks.js"
import * as Inbox from "./Inbox.js"
import * as Fairness from "./internal/Fairness.js"
import type { AgentState, Runtime } from "./internal/Runtime.js"
import * as Turn from "./Turn.js"

/**
 * Publishes a status change: state, `SubscriptionRef`, then the contained `status` observers.
 *
 * @since 0.1.0
 * @category internals
 */
export const publish = (rt: Runtime, status: Hooks.Status): Effect.Effect<void> =>
  Effect.andThen(
    SubscriptionRef.set(rt.status, status),
    rt.hooks.status.run(rt.agent.id, { agent: rt.agent, status })
  )

const settle = (waiters: ReadonlyArray<Deferred.Deferred<void>>): Effect.Effect<void> =>
  Effect.forEach(waiters, (d) => Deferred.succeed(d, undefined), { discard: true })

/**
 * Goes idle (when running) and settles idle waiters before observers run.
 *
 * @since 0.1.0
 * @category internals
 */
export const goIdle = (rt: Runtime): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.modify(rt.state, (s) => {
      if (s.disposed) return [{ waiters: [] as ReadonlyArray<Deferred.Deferred<void>>, changed: false }, s] as const
      return [
        { waiters: s.idleWaiters, changed: s.status === "running" },
        { ...s, status: "idle" as const, idleWaiters: [] }
      ] as const
    }),
    ({ changed, waiters }) =>
      changed
        ? Effect.andThen(
          Effect.andThen(SubscriptionRef.set(rt.status, "idle"), settle(waiters)),
          rt.hooks.status.run(rt.agent.id, { agent: rt.agent, status: "idle" })
        )
        : settle(waiters)
  )

type Decision =
  | { readonly _tag: "Exit" }
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Settle" }
  | { readonly _tag: "Start"; readonly setRunning: boolean }

const decide = (s: AgentState): readonly [Decision, AgentState] => {
  if (s.disposed) return [{ _tag: "Exit" }, s]
  let next = s
  if (Option.isSome(s.inbox.marker)) {
    const [, inbox] = Inbox.clearMarker(s.inbox)
    next = { ...s, inbox }
    if (inbox.queued.length === 0) return [{ _tag: "Settle" }, next]
  }
  if (next.inbox.queued.length === 0) return [{ _tag: "Wait" }, next]
  if (next.phase !== "none") return [{ _tag: "Wait" }, next]
  if (next.status === "running") return [{ _tag: "Start", setRunning: false }, next]
  return [{ _tag: "Start", setRunning: true }, { ...next, status: "running" }]
}

type Claim =
  | { readonly _tag: "Exit" }
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Turn"; readonly turn: number; readonly batch: ReadonlyArray<Inbox.Entry> }

const claim = (s: AgentState): readonly [Claim, AgentState] => {
  if (s.disposed) return [{ _tag: "Exit" }, s]
  let inbox = s.inbox
  if (Option.isSome(inbox.marker)) inbox = Inbox.clearMarker(inbox)[1]
  if (inbox.queued.length === 0) return [{ _tag: "Idle" }, { ...s, inbox }]
  if (s.phase !== "none") return [{ _tag: "Wait" }, { ...s, inbox }]
  const [batch, drained] = Inbox.drainQueued(inbox)
  const turn = s.lastTurn + 1
  return [
    { _tag: "Turn", turn, batch },
    { ...s, inbox: drained, phase: "opening", lastTurn: turn, terminalStop: false, signal: undefined }
  ]
}

const afterTurn = (s: AgentState): readonly [boolean, AgentState] => {
  const [, cleared] = Inbox.clearMarker(s.inbox)
  const inbox = Inbox.settleSteering(cleared, s.terminalStop)
  return [s.disposed, { ...s, inbox, terminalStop: false, signal: undefined }]
}

/**
 * The driver loop; returns when the agent is disposed.
 *
 * @since 0.1.0
 * @category internals
 */
export const run = (rt: Runtime): Effect.Effect<void> =>
  Fairness.fair(Effect.gen(function*() {
    for (;;) {
      const decision = yield* Ref.modify(rt.state, decide)
      switch (decision._tag) {
        case "Exit":
          return
        case "Wait": {
          yield* Queue.take(rt.wake)
          continue
        }
        case "Settle": {
          yield* goIdle(rt)
          continue
        }
        case "Start": {
          if (decision.setRunning) yield* publish(rt, "running")
          const claimed = yield* Ref.modify(rt.state, claim)
          if (claimed._tag === "Exit") return
          if (claimed._tag === "Idle") {
            yield* goIdle(rt)
            continue
          }
          if (claimed._tag === "Wait") {
            yield* Queue.take(rt.wake)
            continue
          }
          // built inside `suspend`: the generator keeps its last yielded value until the next turn, and the
          // turn's span wrapper (with its captured stack trace) would stay alive per idle agent (issue 20)
          yield* Effect.suspend(() => Turn.run(rt, claimed.turn, claimed.batch))
          const disposed = yield* Ref.modify(rt.state, afterTurn)
          if (disposed) return
          const queued = (yield* Ref.get(rt.state)).inbox.queued.length
          if (queued === 0) yield* goIdle(rt)
        }
      }
    }
  }))
