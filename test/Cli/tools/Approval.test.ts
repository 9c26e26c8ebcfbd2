import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { PassThrough } from "node:stream"
import * as Approval from "../../../src/Cli/tools/Approval.js"
import type { CallId } from "../../../src/Llm/ContentBlock.js"
import type { SessionId } from "../../../src/Llm/Message.js"
import * as LoopApproval from "../../../src/Loop/Approval.js"

const prompted = (answer: (input: PassThrough) => void) =>
  Effect.gen(function*() {
    const input = new PassThrough()
    const output = new PassThrough()
    let shown = ""
    output.on("data", (c: Buffer) => (shown += c.toString()))
    const fiber = yield* Effect.fork(Approval.terminalPrompt(input, output)("Allow bash: ls?"))
    yield* Effect.yieldNow()
    answer(input)
    const result = yield* Fiber.join(fiber)
    return { result, shown }
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

  it.live("terminalPrompt: y/yes allow, anything else rejects, end of input is no answer", () =>
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
      const answer = yield* Approval.terminalPrompt(input, new PassThrough())("Allow bash: ls?")
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
})
