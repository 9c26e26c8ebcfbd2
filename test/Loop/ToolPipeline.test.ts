import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import { AgentError } from "../../src/Loop/AgentControl.js"
import * as Approval from "../../src/Loop/Approval.js"
import * as StepSignal from "../../src/Loop/StepSignal.js"
import * as Tool from "../../src/Loop/Tool.js"
import { PostExecuteDecision, PreExecuteDecision } from "../../src/Loop/ToolHooks.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { badMeta, batchEvents, call, resultOf, rig, runCalls, shape, textOf } from "../support/ToolKit.js"
import type { Rig } from "../support/ToolKit.js"

const text = ContentBlock.text

const echo = Tool.make({
  name: "echo",
  description: "Echoes",
  parameters: Schema.Struct({ text: Schema.String }),
  execute: ({ text: t }) => Effect.succeed([text(`echo: ${t}`)])
})

const plugin = Message.pluginSource("test")
const ctx = (t: string) => ({ content: [text(t)], source: plugin })

interface Run {
  readonly r: Rig
  readonly events: ReadonlyArray<SessionEvent>
}

/** One batch against a runtime holding `tools`; `setup` registers hooks in the test's scope. */
const runWith = <E>(
  tools: ReadonlyArray<Tool.Tool<never>>,
  calls: ReadonlyArray<ContentBlock.ToolCallBlock>,
  setup: (r: Rig) => Effect.Effect<void, E, ToolRuntime.ToolRuntime | Scope.Scope> = () => Effect.void,
  layer?: Layer.Layer<ToolRuntime.ToolRuntime, unknown>
) =>
  Effect.gen(function*() {
    const r = yield* rig
    yield* setup(r)
    const view = yield* ToolRuntime.view()
    yield* runCalls(r, calls, view)
    const events = yield* batchEvents(r)
    return { r, events } satisfies Run
  }).pipe(Effect.scoped, Effect.provide(layer ?? ToolRuntime.layer({ tools })))

describe("ToolPipeline", () => {
  it.effect("AC-53 [T-11,S-14] a valid call → exactly {content, isError: false}, logged under the model's call id", () =>
    Effect.gen(function*() {
      const { events } = yield* runWith([echo], [call("c1", "echo", { text: "ping" })])
      expect(shape(events)).toEqual(["call c1", "result c1"])
      const [callEvent, resultEvent] = events
      expect(callEvent).toMatchObject({ type: "tool/call", data: { turn: 1, step: 1, callId: "c1", name: "echo", arguments: `{"text":"ping"}` } })
      expect(resultEvent?.surfaceOp).toBe("append")
      expect(resultEvent?.sourceEventSeqs).toEqual([callEvent?.seq])
      expect(resultOf(events, "c1")).toEqual({ turn: 1, step: 1, callId: "c1", content: [text("echo: ping")], isError: false })
    }))

  it.effect("AC-91 [T-5,T-6] unknown tool, thrown Error, coded error, thrown object, hostile proxy", () =>
    Effect.gen(function*() {
      // every property read throws (message, toString, Symbol.toPrimitive)
      const hostile = new Proxy({}, {
        get: () => {
          throw new Error("trap")
        }
      })
      const tools = [
        Tool.raw({ name: "explode", description: "", parameters: {}, execute: () => Effect.sync(() => { throw new Error("exploded") }) }),
        Tool.raw({ name: "coded", description: "", parameters: {}, execute: () => Effect.fail(new AgentError({ code: "DISPOSED", message: "agent gone" })) }),
        Tool.raw({ name: "object", description: "", parameters: {}, execute: () => Effect.fail({ message: "denied" }) }),
        Tool.raw({ name: "plain", description: "", parameters: {}, execute: () => Effect.fail("just a string") }),
        Tool.raw({ name: "hostile", description: "", parameters: {}, execute: () => Effect.fail(hostile) })
      ]
      const { events } = yield* runWith(tools, [
        call("c1", "nope"),
        call("c2", "explode"),
        call("c3", "coded"),
        call("c4", "object"),
        call("c5", "plain"),
        call("c6", "hostile")
      ])
      expect(resultOf(events, "c1")).toMatchObject({
        content: [text(`Error: unknown tool "nope"`)],
        isError: true,
        error: { name: "ToolNotFoundError", code: "UNKNOWN_TOOL" }
      })
      expect(resultOf(events, "c2")).toEqual({ turn: 1, step: 1, callId: "c2", content: [text("Error: exploded")], isError: true })
      expect(resultOf(events, "c3")).toMatchObject({ content: [text("Error: agent gone")], error: { name: "AgentError", code: "DISPOSED" } })
      expect(resultOf(events, "c4")).toEqual({ turn: 1, step: 1, callId: "c4", content: [text("Error: denied")], isError: true })
      expect(textOf(events, "c5")).toBe("Error: just a string")
      expect(resultOf(events, "c6")).toEqual({
        turn: 1,
        step: 1,
        callId: "c6",
        content: [text("Error: <unprintable thrown value>")],
        isError: true
      })
    }))

  it.effect("AC-91 [T-5] an unknown tool still passes execute wrappers and post-execute", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { events } = yield* runWith([], [call("c1", "nope")], () =>
        Effect.gen(function*() {
          yield* ToolRuntime.onExecute((input, next) => Effect.andThen(Effect.sync(() => void seen.push(`wrap ${input.name}`)), next()))
          yield* ToolRuntime.onPostExecute((input, next) =>
            Effect.andThen(Effect.sync(() => void seen.push(`post ${input.result.error?.code}`)), next()))
        }))
      expect(seen).toEqual(["wrap nope", "post UNKNOWN_TOOL"])
      expect(textOf(events, "c1")).toBe(`Error: unknown tool "nope"`)
    }))

  it.effect("AC-92 [T-3,T-4] pre-execute deny → Error: <reason>, body and wrappers skipped, post-execute still runs", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const tool = Tool.raw({ name: "t", description: "", parameters: {}, execute: () => Effect.sync(() => (ran.push("body"), [text("ok")])) })
      const { events } = yield* runWith([tool], [call("c1", "t")], () =>
        Effect.gen(function*() {
          yield* ToolRuntime.onPreExecute(() => Effect.succeed(PreExecuteDecision.Deny({ reason: "not allowed here" })))
          yield* ToolRuntime.onExecute((_, next) => Effect.andThen(Effect.sync(() => void ran.push("wrapper")), next()))
          yield* ToolRuntime.onPostExecute((input, next) => Effect.andThen(Effect.sync(() => void ran.push(`post ${input.result.isError}`)), next()))
        }))
      expect(ran).toEqual(["post true"])
      expect(resultOf(events, "c1")).toEqual({ turn: 1, step: 1, callId: "c1", content: [text("Error: not allowed here")], isError: true })
    }))

  it.effect("AC-92 [T-3] ask without an approval service → denial with the ask reason, or a default", () =>
    Effect.gen(function*() {
      const { events } = yield* runWith([echo], [call("c1", "echo", { text: "a" }), call("c2", "echo", { text: "b" })], () =>
        ToolRuntime.onPreExecute((input) =>
          Effect.succeed(input.callId === "c1" ? PreExecuteDecision.Ask({ reason: "writes outside the workspace" }) : PreExecuteDecision.Ask({}))))
      expect(textOf(events, "c1")).toBe("Error: writes outside the workspace")
      expect(textOf(events, "c2")).toBe(`Error: tool "echo" requires approval, but no approval service is available`)
      expect(resultOf(events, "c2").error).toBeUndefined()
    }))

  it.effect("[T-3] approval service: only allow-once proceeds; reject/cancelled/unavailable/failure are distinct denials", () =>
    Effect.gen(function*() {
      const asked: Array<Approval.ApprovalRequest> = []
      const answers: Record<string, Approval.ApprovalDecision | "fail"> = {
        c1: "allow-once",
        c2: "reject",
        c3: "cancelled",
        c4: "unavailable",
        c5: "fail"
      }
      const approval = Approval.layer((request) =>
        Effect.suspend(() => {
          asked.push(request)
          const answer = answers[request.callId]
          return answer === "fail" || answer === undefined
            ? Effect.fail(new Approval.ApprovalError({ message: "terminal closed" }))
            : Effect.succeed(answer)
        }))
      const layer = ToolRuntime.layer({ tools: [echo] }).pipe(Layer.provide(approval))
      const calls = ["c1", "c2", "c3", "c4", "c5"].map((id) => call(id, "echo", { text: id }))
      const { events } = yield* runWith([echo], calls, () =>
        ToolRuntime.onPreExecute(() => Effect.succeed(PreExecuteDecision.Ask({ reason: "why" }))), layer)
      expect(asked.map((a) => [a.callId, a.name, a.reason, a.arguments])).toEqual(
        ["c1", "c2", "c3", "c4", "c5"].map((id) => [id, "echo", "why", { text: id }])
      )
      expect(calls.map((c) => textOf(events, c.id))).toEqual([
        "echo: c1",
        "Error: the user rejected the tool call",
        "Error: approval was cancelled",
        "Error: approval is unavailable",
        "Error: approval failed: terminal closed"
      ])
    }))

  it.effect("[T-2,L-37] guards can only deny; a guard's Allow is ignored; guards run after pre-execute allow", () =>
    Effect.gen(function*() {
      const { events } = yield* runWith([echo], [call("c1", "echo", { text: "a" }), call("c2", "echo", { text: "b" })], () =>
        Effect.gen(function*() {
          // a guard that "allows" cannot skip the next guard
          yield* ToolRuntime.addGuard(() => Effect.succeed(PreExecuteDecision.Allow() as never))
          yield* ToolRuntime.addGuard((input) =>
            Effect.succeed(input.callId === "c2" ? PreExecuteDecision.Deny({ reason: "guarded" }) : undefined))
        }))
      expect(textOf(events, "c1")).toBe("echo: a")
      expect(textOf(events, "c2")).toBe("Error: guarded")
    }))

  it.effect("[T-6] a throwing pre-execute listener, wrapper or post-execute listener yields a final result (no post stage)", () =>
    Effect.gen(function*() {
      const posts: Array<string> = []
      const { events } = yield* runWith(
        [echo],
        [call("c1", "echo", { text: "a" }), call("c2", "echo", { text: "b" }), call("c3", "echo", { text: "c" })],
        () =>
          Effect.gen(function*() {
            yield* ToolRuntime.onPreExecute((input, next) => input.callId === "c1" ? Effect.fail(new Error("pre broke")) : next())
            yield* ToolRuntime.onExecute((input, next) => input.callId === "c2" ? Effect.die("wrapper broke") : next())
            yield* ToolRuntime.onPostExecute((input, next) =>
              Effect.andThen(
                Effect.sync(() => void posts.push(input.callId)),
                input.callId === "c3" ? Effect.fail({ message: "post broke" }) : next()
              ))
          })
      )
      expect(["c1", "c2", "c3"].map((id) => textOf(events, id))).toEqual([
        "Error: pre broke",
        "Error: wrapper broke",
        "Error: post broke"
      ])
      expect(posts).toEqual(["c3"])
    }))

  it.effect("[T-2] an execute wrapper may change only the signal; it sees and may replace the outcome", () =>
    Effect.gen(function*() {
      let bodySignal: StepSignal.StepSignal | undefined
      let bodyArgs: unknown
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (args, c) => Effect.sync(() => {
          bodySignal = c.signal
          bodyArgs = args
          return [text("body")]
        })
      })
      const mySignal = yield* StepSignal.make
      const { events } = yield* runWith([tool], [call("c1", "t", { a: 1 })], () =>
        ToolRuntime.onExecute((input, next) =>
          Effect.map(next({ ...input, arguments: { a: 2 }, name: "other", signal: mySignal }), (result) => ({
            ...result,
            content: [...result.content, text("+wrapped")]
          }))))
      expect(bodySignal).toBe(mySignal)
      expect(bodyArgs).toEqual({ a: 1 })
      expect(textOf(events, "c1")).toBe("body+wrapped")
    }))

  it.effect("AC-93 [T-7] accept with content replaces; block → isError feedback with only its contexts; accept keeps deferred first", () =>
    Effect.gen(function*() {
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (_, c) => Effect.as(c.deferContext(ctx(`deferred ${c.callId}`)), [text(`body ${c.callId}`)])
      })
      const { events } = yield* runWith([tool], [call("c1", "t"), call("c2", "t"), call("c3", "t")], () =>
        ToolRuntime.onPostExecute((input, next) => {
          switch (input.callId) {
            case "c1":
              return Effect.succeed(PostExecuteDecision.Accept({ content: [text("replaced")] }))
            case "c2":
              return Effect.succeed(PostExecuteDecision.Block({ feedback: [text("blocked!")], additionalContexts: [ctx("block ctx")] }))
            default:
              // context-only hook (H-5): delegate first, then add its context downstream
              return Effect.map(next(), (d) =>
                d._tag === "Accept"
                  ? PostExecuteDecision.Accept({ ...d, additionalContexts: [...(d.additionalContexts ?? []), ctx("accept ctx")] })
                  : d)
          }
        }))
      expect(resultOf(events, "c1")).toMatchObject({ content: [text("replaced")], isError: false })
      expect(resultOf(events, "c2")).toEqual({ turn: 1, step: 1, callId: "c2", content: [text("blocked!")], isError: true })
      expect(resultOf(events, "c3")).toMatchObject({ content: [text("body c3")], isError: false })
      expect(shape(events)).toEqual([
        "call c1",
        "result c1",
        "call c2",
        "result c2",
        "call c3",
        "result c3",
        "ctx deferred c1",
        "ctx block ctx",
        "ctx deferred c3",
        "ctx accept ctx"
      ])
      const c = events.filter((e) => e.type === "context/message")
      expect(c.every((e) => e.type === "context/message" && e.data.source.kind === "plugin")).toBe(true)
    }))

  it.effect("[T-9] deferContext survives a throwing body, in call order", () =>
    Effect.gen(function*() {
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (_, c) =>
          Effect.gen(function*() {
            yield* c.deferContext(ctx("one"))
            yield* c.deferContext(ctx("two"))
            return yield* Effect.fail(new Error("then it broke"))
          })
      })
      const { events } = yield* runWith([tool], [call("c1", "t")])
      expect(shape(events)).toEqual(["call c1", "result c1", "ctx one", "ctx two"])
      expect(textOf(events, "c1")).toBe("Error: then it broke")
    }))

  it.effect("AC-94 [T-10] missing required path via the pipeline → INVALID_ARGS error result; valid → {content, isError: false}", () =>
    Effect.gen(function*() {
      const read = Tool.fromProperties({
        name: "read",
        description: "Reads",
        properties: { path: { type: "string", required: true } },
        execute: ({ path }) => Effect.succeed([text(`read ${path}`)])
      })
      const { events } = yield* runWith([read], [call("c1", "read", {}), call("c2", "read", { path: "a.txt" })])
      expect(resultOf(events, "c1")).toEqual({
        turn: 1,
        step: 1,
        callId: "c1",
        content: [text(`Error: invalid arguments: missing required property "path"`)],
        isError: true,
        error: { name: "ToolArgsError", code: "INVALID_ARGS" }
      })
      expect(resultOf(events, "c2")).toEqual({ turn: 1, step: 1, callId: "c2", content: [text("read a.txt")], isError: false })
    }))

  it.effect("AC-95 [T-8] meta with bigint / Map / class instance → isError, lossless-JSON error text, no meta; batch continues", () =>
    Effect.gen(function*() {
      class Thing {
        readonly x = 1
      }
      const metas: Record<string, unknown> = { c1: { n: 1n }, c2: new Map([["a", 1]]), c3: new Thing() }
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (_, c) => Effect.succeed({ content: [text("fine")], meta: badMeta(metas[c.callId]) })
      })
      const { events } = yield* runWith([tool, echo], [call("c1", "t"), call("c2", "t"), call("c3", "t"), call("c4", "echo", { text: "still" })])
      for (const id of ["c1", "c2", "c3"]) {
        expect(resultOf(events, id)).toEqual({
          turn: 1,
          step: 1,
          callId: id,
          content: [text("Error: tool result must be losslessly JSON-serializable")],
          isError: true
        })
      }
      expect(textOf(events, "c4")).toBe("echo: still")
    }))

  it.effect("[T-8,T-9] a deferred context that is not lossless JSON poisons the result (error text only, no contexts)", () =>
    Effect.gen(function*() {
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (c, run) =>
          Effect.gen(function*() {
            yield* run.deferContext(ctx("fine"))
            yield* run.deferContext({ ...ctx("bad"), meta: badMeta(new Date(0)) })
            return [text(`ok ${String(c)}`)]
          })
      })
      const { events } = yield* runWith([tool], [call("c1", "t")])
      expect(shape(events)).toEqual(["call c1", "result c1"])
      expect(textOf(events, "c1")).toBe("Error: tool result must be losslessly JSON-serializable")
    }))

  it.effect("[T-3,L-37] an Ask denied by a guard never reaches the approval service", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const layer = ToolRuntime.layer({ tools: [echo] }).pipe(
        Layer.provide(Approval.layer((request) => Effect.sync(() => (asked.push(request.callId), "allow-once" as const))))
      )
      const { events } = yield* runWith([echo], [call("c1", "echo", { text: "a" }), call("c2", "echo", { text: "b" })], () =>
        Effect.gen(function*() {
          yield* ToolRuntime.onPreExecute(() => Effect.succeed(PreExecuteDecision.Ask({})))
          yield* ToolRuntime.addGuard((input) =>
            Effect.succeed(input.callId === "c1" ? PreExecuteDecision.Deny({ reason: "policy says no" }) : undefined))
        }), layer)
      expect(asked).toEqual(["c2"])
      expect(textOf(events, "c1")).toBe("Error: policy says no")
      expect(textOf(events, "c2")).toBe("echo: b")
    }))

  it.effect("[T-11] meta only from the object return form; it is logged on tool/result", () =>
    Effect.gen(function*() {
      const tool = Tool.raw({ name: "t", description: "", parameters: {}, execute: () => Effect.succeed({ content: [text("x")], meta: { lines: 3 } }) })
      const { events } = yield* runWith([tool], [call("c1", "t")])
      expect(resultOf(events, "c1")).toEqual({ turn: 1, step: 1, callId: "c1", content: [text("x")], isError: false, meta: { lines: 3 } })
    }))

  it.effect("AC-96 [L-13] args `not json` → logged verbatim, the tool receives the string; `\"\"` → {}", () =>
    Effect.gen(function*() {
      const received: Array<unknown> = []
      const tool = Tool.raw({ name: "t", description: "", parameters: {}, execute: (args) => Effect.sync(() => (received.push(args), [text("ok")])) })
      const { events } = yield* runWith([tool], [call("c1", "t", "not json"), call("c2", "t", "")])
      expect(events[0]).toMatchObject({ type: "tool/call", data: { callId: "c1", arguments: "not json" } })
      expect(events[2]).toMatchObject({ type: "tool/call", data: { callId: "c2", arguments: "" } })
      expect(received).toEqual(["not json", {}])
      expect(shape(events)).toEqual(["call c1", "result c1", "call c2", "result c2"])
    }))

  it.effect("[T-2,L-13] arguments that are not lossless JSON (-0) → error result with no policy at all", () =>
    Effect.gen(function*() {
      const hooks: Array<string> = []
      const { events } = yield* runWith([echo], [call("c1", "echo", `{"text":-0}`)], () =>
        Effect.gen(function*() {
          yield* ToolRuntime.onPreExecute((_, next) => Effect.andThen(Effect.sync(() => void hooks.push("pre")), next()))
          yield* ToolRuntime.onPostExecute((_, next) => Effect.andThen(Effect.sync(() => void hooks.push("post")), next()))
          yield* ToolRuntime.onResult((input) => Effect.sync(() => void hooks.push(`result ${input.result.isError}`)))
        }))
      expect(hooks).toEqual(["result true"])
      expect(textOf(events, "c1")).toMatch(/^Error: tool arguments are not lossless JSON/)
    }))

  it.effect("[T-2] the result notification sees the final frozen result; a failing observer is contained", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const { events } = yield* runWith([echo], [call("c1", "echo", { text: "a" })], () =>
        Effect.gen(function*() {
          yield* ToolRuntime.onResult(() => Effect.fail(new Error("observer broke")))
          yield* ToolRuntime.onResult((input) => Effect.sync(() => void seen.push(input.result, Object.isFrozen(input.result))))
        }))
      expect(seen).toEqual([{ content: [text("echo: a")], isError: false }, true])
      expect(textOf(events, "c1")).toBe("echo: a")
    }))

  it.effect("[T-2,H-1] agent-scoped listeners see only their agent", () =>
    Effect.gen(function*() {
      const { events } = yield* runWith([echo], [call("c1", "echo", { text: "a" })], () =>
        Effect.gen(function*() {
          yield* ToolRuntime.onPreExecute(() => Effect.succeed(PreExecuteDecision.Deny({ reason: "other agent" })), { agentId: "someone-else" })
        }))
      expect(textOf(events, "c1")).toBe("echo: a")
    }))

  it.live("AC-100 [T-15] timeoutMs 10, body waits on its signal → timed out, TOOL_TIMEOUT", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make(false)
      const slow = Tool.raw({
        name: "slow",
        description: "",
        parameters: {},
        timeoutMs: 10,
        execute: (_, c) =>
          Effect.as(StepSignal.await_(c.signal), [text("woke")]).pipe(Effect.ensuring(Ref.set(finalized, true)))
      })
      const { events } = yield* runWith([slow], [call("c1", "slow")])
      expect(resultOf(events, "c1")).toEqual({
        turn: 1,
        step: 1,
        callId: "c1",
        content: [text("Error: tool call timed out after 10ms")],
        isError: true,
        error: { name: "ToolTimeoutError", code: "TOOL_TIMEOUT" }
      })
      expect(yield* Ref.get(finalized)).toBe(true)
    }))

  it.live("AC-100 [T-15] an upstream cancel instead → aborted, not a timeout; finalizers ran before the result", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const order: Array<string> = []
      const slow = Tool.raw({
        name: "slow",
        description: "",
        parameters: {},
        timeoutMs: 60_000,
        execute: () =>
          Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
            Effect.onInterrupt(() => Effect.sync(() => void order.push("finalizer")))
          )
      })
      const { events } = yield* runWith([slow], [call("c1", "slow")], (r) =>
        Effect.gen(function*() {
          yield* ToolRuntime.onResult(() => Effect.sync(() => void order.push("result")))
          yield* Effect.forkScoped(Effect.andThen(Deferred.await(started), r.agent.cancel("user stop")))
        }))
      expect(resultOf(events, "c1")).toEqual({
        turn: 1,
        step: 1,
        callId: "c1",
        content: [text("Error: tool call aborted (user stop)")],
        isError: true,
        error: { name: "AbortError", code: "ABORTED" }
      })
      expect(order).toEqual(["finalizer", "result"])
    }))

  it.effect("[T-13] a started body interrupted by the step signal passes post-execute; its deferred contexts survive", () =>
    Effect.gen(function*() {
      const posts: Array<string> = []
      const tool = Tool.raw({
        name: "t",
        description: "",
        parameters: {},
        execute: (_, c) =>
          Effect.gen(function*() {
            yield* c.deferContext(ctx("before cancel"))
            yield* c.agent.cancel("stop now")
            return yield* Effect.never
          })
      })
      const fiber = yield* Effect.forkChild(runWith([tool], [call("c1", "t")], () =>
        ToolRuntime.onPostExecute((input, next) => Effect.andThen(Effect.sync(() => void posts.push(input.result.error?.code ?? "")), next()))))
      const { events } = yield* Fiber.join(fiber)
      expect(posts).toEqual(["ABORTED"])
      expect(shape(events)).toEqual(["call c1", "result c1", "ctx before cancel"])
      expect(textOf(events, "c1")).toBe("Error: tool call aborted (stop now)")
    }))
})
