import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Scrub from "../../../src/Tools/internal/Scrub.js"
import * as ToolError from "../../../src/Tools/ToolError.js"
import * as Tool from "../../../src/Loop/Tool.js"

const secrets = { values: () => [Redacted.make("sk-secret-123"), Redacted.make("tok-abcdefgh")] }

const echo = (fail: boolean) =>
  Scrub.wrap(Tool.make({
    name: "echo",
    description: "echoes",
    parameters: Schema.Struct({ text: Schema.String }),
    execute: ({ text }) =>
      fail
        ? Effect.fail(ToolError.make("IO_ERROR", `failed on ${text}`))
        : Effect.succeed({ content: [{ type: "text" as const, text }], meta: { kept: true } })
  }))

const context = {} as Tool.ToolRunContext

describe("output scrubbing (issue 16)", () => {
  it("replaces every occurrence and counts them", () => {
    expect(Scrub.scrubText("a sk-secret-123 b sk-secret-123 tok-abcdefgh", ["sk-secret-123", "tok-abcdefgh"]))
      .toEqual({ text: "a <redacted> b <redacted> <redacted>", count: 3 })
    expect(Scrub.scrubText("clean", ["sk-secret-123"])).toEqual({ text: "clean", count: 0 })
  })

  it.effect("a wrapped tool's result text and error message are scrubbed; meta records the count", () =>
    Effect.gen(function*() {
      const out = yield* echo(false).execute({ text: "key=sk-secret-123 t=tok-abcdefgh" }, context).pipe(
        Effect.provideService(Scrub.Secrets, secrets)
      )
      expect(out).toEqual({
        content: [{ type: "text", text: "key=<redacted> t=<redacted>" }],
        meta: { kept: true, redactions: 2 }
      })
      const clean = yield* echo(false).execute({ text: "nothing" }, context).pipe(Effect.provideService(Scrub.Secrets, secrets))
      expect(clean).toEqual({ content: [{ type: "text", text: "nothing" }], meta: { kept: true } })
      const error = yield* Effect.flip(
        echo(true).execute({ text: "sk-secret-123" }, context).pipe(Effect.provideService(Scrub.Secrets, secrets))
      )
      expect(error).toMatchObject({ code: "IO_ERROR", message: "failed on <redacted>" })
    }))
})
