import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as ErrorChannels from "./support/ErrorChannels.js"

const repo = fileURLToPath(new URL("../", import.meta.url))

describe("typed error channels in the loop and the session (issue 18)", () => {
  it("no Effect or Stream in src/Loop and src/Session has an `unknown` error channel outside a documented user callback", () => {
    const sources = ErrorChannels.readSources(repo, ["src/Loop", "src/Session"])
    expect(sources.length).toBeGreaterThan(40)
    expect(ErrorChannels.findings(sources)).toEqual([])
  })

  it("the check finds an undocumented `unknown` channel, in every spelling, and honours the marker", () => {
    const text = [
      "const a = (x: number): Effect.Effect<Outcome, unknown> => go(x)",
      "type B = Stream.Stream<Chunk, unknown, R>",
      "const c: Effect<Option.Option<Map<string, number>>,",
      "  unknown",
      "> = d",
      "/**",
      ` * ${ErrorChannels.marker}. Failures become HookFailure.`,
      " */",
      "export type Listener<I> = (input: I) => Effect.Effect<void, unknown>",
      "const e: Effect.Effect<(a: A) => B, unknown> = f",
      "const typed: Effect.Effect<Outcome, SessionError | unknown> = g",
      "const ok: Effect.Effect<unknown, SessionError> = h",
      "const cause: Cause.Cause<unknown> = i"
    ].join("\n")
    const found = ErrorChannels.findings([{ path: "x.ts", text }])
    expect(found.map((f) => f.line)).toEqual([1, 2, 3, 10])
    expect(found[2]?.type).toBe("Effect<Option.Option<Map<string, number>>, unknown >")
  })
})
