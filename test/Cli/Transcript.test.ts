import { describe, expect, it } from "@effect/vitest"
import * as Transcript from "../../src/Cli/Transcript.js"

describe("Transcript.resultFailed (issue 34: a failed command gets ✗ in run mode)", () => {
  it("an error result, a non-zero exit code or a signal is a failure; exit 0 and no meta are not", () => {
    expect(Transcript.resultFailed({ isError: true })).toBe(true)
    expect(Transcript.resultFailed({ isError: false, meta: { exitCode: 2 } })).toBe(true)
    expect(Transcript.resultFailed({ isError: false, meta: { exitCode: null, signal: "SIGKILL" } })).toBe(true)
    expect(Transcript.resultFailed({ isError: false, meta: { exitCode: 0 } })).toBe(false)
    expect(Transcript.resultFailed({ isError: false })).toBe(false)
    expect(Transcript.resultFailed({ isError: false, meta: "text" })).toBe(false)
  })
})
