import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { PassThrough } from "node:stream"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Layer from "effect/Layer"
import * as Permissions from "../../src/Policy/Permissions.js"
import * as Settings from "../../src/Workspace/Settings.js"
import * as ApprovalPrompt from "../../src/Cli/ApprovalPrompt.js"
import * as Approval from "../../src/Policy/Approval.js"
import * as LoopApproval from "../../src/Loop/Approval.js"
import type { CallId } from "../../src/Llm/ContentBlock.js"
import type { SessionId } from "../../src/Llm/Message.js"

const prompted = (
  answer: (input: PassThrough) => void,
  question = "Allow bash: ls?",
  details?: Approval.Rendered,
  discardMs = 0,
  before?: (input: PassThrough) => void
) =>
  Effect.gen(function*() {
    const input = new PassThrough()
    const output = new PassThrough()
    let shown = ""
    output.on("data", (c: Buffer) => (shown += c.toString()))
    before?.(input)
    const fiber = yield* Effect.forkChild(ApprovalPrompt.terminalPrompt(input, output, { discardMs })(question, details))
    if (discardMs > 0) {
      // wait until the question is shown (after the discard window), then answer
      while (!shown.includes(question)) yield* Effect.sleep(5)
    } else yield* Effect.yieldNow
    answer(input)
    const result = yield* Fiber.join(fiber)
    return { result, shown }
  })

const request = (args: Record<string, string>, name = "bash") => ({
  agentId: "s" as SessionId,
  turn: 1,
  step: 1,
  callId: "c1" as CallId,
  name,
  arguments: args
})

describe("Approval", () => {
  it("modeFor: --yes → auto, TTY → ask, otherwise deny", () => {
    expect(Approval.modeFor({ yes: true, interactive: false })).toBe("auto")
    expect(Approval.modeFor({ yes: true, interactive: true })).toBe("auto")
    expect(Approval.modeFor({ yes: false, interactive: true })).toBe("ask")
    expect(Approval.modeFor({ yes: false, interactive: false })).toBe("deny")
  })

  it("summaries name the tool and its target", () => {
    expect(Approval.summarize("bash", { command: "npm test\nnpm run lint" })).toBe("bash: npm test ⏎ npm run lint")
    expect(Approval.summarize("write", { file_path: "a.txt", content: "héllo" })).toBe("write a.txt (6 bytes)")
    expect(Approval.summarize("edit", { file_path: "b.ts" })).toBe("edit b.ts")
  })

  it("render: a 1,000-character command is shown whole (wrapped, never cut); long ones say how many lines are hidden", () => {
    const command = `echo ${"A".repeat(950)}; touch HIDDEN_PAYLOAD_RAN`
    const r = Approval.render(request({ command }), { width: 80, rule: "Bash(echo:*)" })
    const body = r.question.split("\n").filter((l) => l.startsWith("  │ ") || l.startsWith("  ┊ ")).map((l) => l.slice(4)).join("")
    expect(body).toBe(command)
    expect(r.question).toContain("touch HIDDEN_PAYLOAD_RAN")
    expect(r.question.split("\n").every((l) => Array.from(l).length <= 80 || l.startsWith("[y]"))).toBe(true)
    expect(r.question).toContain("[a] always allow Bash(echo:*) this session")
    expect(r.hidden).toBe(0)
    const long = Approval.render(request({ command: Array.from({ length: 100 }, (_, i) => `echo ${i}`).join("\n") }), { maxLines: 10 })
    expect(long.hidden).toBe(91)
    expect(long.question).toContain("… 91 more lines (answer v to view all)")
    expect(long.full).toContain("echo 99")
    expect(long.question).not.toContain("echo 99")
  })

  it.live("terminalPrompt: y/yes allow, anything else rejects, end of input cancels", () =>
    Effect.gen(function*() {
      const yes = yield* prompted((i) => i.write("y\n"))
      expect(yes).toEqual({ result: true, shown: "Allow bash: ls? [y/N] " })
      expect((yield* prompted((i) => i.write("YES\n"))).result).toBe(true)
      expect((yield* prompted((i) => i.write("\n"))).result).toBe(false)
      expect((yield* prompted((i) => i.write("nope\n"))).result).toBe(false)
      expect((yield* prompted((i) => i.end())).result).toBeUndefined()
    }))

  it.live("[issue 10] terminalPrompt on input that already ended answers at once (no prompt left hanging)", () =>
    Effect.gen(function*() {
      const input = new PassThrough()
      input.end()
      input.resume()
      yield* Effect.promise(() => new Promise<void>((resolve) => input.once("end", () => resolve())))
      const answer = yield* ApprovalPrompt.terminalPrompt(input, new PassThrough())("Allow bash: ls?")
      expect(answer).toBeUndefined()
    }))

  it.effect("[issue 10, T-3] no answer (end of input) → the call is denied with 'no answer: input closed'", () =>
    Effect.gen(function*() {
      const approval = yield* LoopApproval.Approval
      const request = { agentId: "a" as SessionId, turn: 1, step: 1, callId: "c1" as CallId, name: "bash", arguments: {} }
      const denied = yield* Effect.flip(approval.ask(request))
      expect(denied.message).toBe(Approval.INPUT_CLOSED)
      expect(denied.message).toBe("no answer: input closed")
    }).pipe(Effect.provide(Approval.layer(() => Effect.succeed(undefined)))))

  it.live("terminalPrompt: type-ahead before the question is discarded; v shows everything; a / p answer always", () =>
    Effect.gen(function*() {
      const typedAhead = yield* prompted((i) => i.write("n\n"), "Allow bash?", undefined, 50, (i) => i.write("y\n"))
      expect(typedAhead.result).toBe(false)
      const r = Approval.render(request({ command: Array.from({ length: 60 }, (_, i) => `echo ${i}`).join("\n") }), { rule: "Bash(echo:*)" })
      const viewed = yield* prompted((i) => {
        i.write("v\n")
        i.write("a\n")
      }, r.question, r)
      expect(viewed.result).toBe("always-session")
      expect(viewed.shown).toContain("echo 59")
      expect(viewed.shown).toContain("[y/a/p/v/N]")
      expect((yield* prompted((i) => i.write("p\n"), r.question, r)).result).toBe("always-project")
    }))

  it.effect("layer: answering a remembers the offered rule for the session; a yes/no prompt is never offered it", () =>
    Effect.gen(function*() {
      const made = yield* Permissions.make({ cwd: "/ws", settings: Settings.empty, approval: "ask" })
      const offered: Array<string | undefined> = []
      const always = Object.assign(
        (_q: string, d?: Approval.Rendered) => Effect.sync((): Approval.Answer => {
          offered.push(d?.rule)
          return "always-session"
        }),
        { answersAlways: true }
      )
      const withPermissions = Layer.succeed(Permissions.Permissions, made.service)
      const svc = yield* Effect.provide(LoopApproval.Approval, Approval.layer(always).pipe(Layer.provide(withPermissions)))
      expect(yield* svc.ask(request({ command: "npm test -- -w" }))).toBe("allow-once")
      expect(offered).toEqual(["Bash(npm test:*)"])
      expect(yield* made.service.decide("bash", { command: "npm test" })).toMatchObject({ decision: "allow", origin: "session" })
      const plain: Approval.Prompt = (_q, d) => Effect.sync(() => {
        offered.push(d?.rule)
        return true
      })
      const svc2 = yield* Effect.provide(LoopApproval.Approval, Approval.layer(plain).pipe(Layer.provide(withPermissions)))
      expect(yield* svc2.ask(request({ command: "ls" }))).toBe("allow-once")
      expect(offered).toEqual(["Bash(npm test:*)", undefined])
    }).pipe(Effect.provide(NodeServices.layer)))
})
