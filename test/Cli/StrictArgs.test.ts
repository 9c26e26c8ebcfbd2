import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as StrictArgs from "../../src/Cli/StrictArgs.js"

const spec: StrictArgs.Spec = {
  name: "harness",
  options: new Map(),
  subcommands: new Map([
    ["run", {
      name: "run",
      options: new Map<string, string | undefined>([["--json", undefined], ["--store", "jsonl | sqlite"], ["--model", "text"], ["-y", undefined]]),
      subcommands: new Map()
    }]
  ])
}

const check = (...args: Array<string>) => Result.match(StrictArgs.check(spec, args), { onFailure: (e) => e, onSuccess: () => "ok" })

describe("StrictArgs (issue 15)", () => {
  it("known options, values, --name=value, - and everything after -- pass", () => {
    expect(check("run", "--json", "-y", "--model", "--weird-model-name", "hi")).toBe("ok")
    expect(check("run", "--store=sqlite", "-")).toBe("ok")
    expect(check("run", "--", "--not-an-option", "-5")).toBe("ok")
    expect(check("--help")).toBe("ok")
  })

  it("unknown options name themselves, with a suggestion when one is close; choices name the flag", () => {
    expect(check("run", "--jsno", "hi")).toBe("unknown option --jsno for harness run; did you mean --json?")
    expect(check("run", "--frobnicate")).toBe("unknown option --frobnicate for harness run; see harness run --help")
    expect(check("run", "-5")).toContain("goes after --")
    expect(check("run", "--store", "bogus", "hi")).toBe("invalid value for --store: \"bogus\" (expected one of: jsonl, sqlite)")
    expect(check("run", "--model")).toBe("option --model of harness run needs a value (text)")
    expect(check("--wizard")).toMatch(/^unknown option --wizard for harness/)
  })

  it("distance", () => {
    expect(StrictArgs.distance("--jsno", "--json")).toBe(2)
    expect(StrictArgs.distance("", "abc")).toBe(3)
  })
})
