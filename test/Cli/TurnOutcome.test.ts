import { describe, expect, it } from "@effect/vitest"
import * as TurnOutcome from "../../src/Cli/TurnOutcome.js"

describe("TurnOutcome", () => {
  it("[L-29] every turn-end reason maps to its documented exit code and one line", () => {
    expect(TurnOutcome.outcome({ kind: "completed" })).toEqual({ exitCode: 0 })
    expect(TurnOutcome.outcome({ kind: "max-tokens" }).exitCode).toBe(0)
    expect(TurnOutcome.outcome({ kind: "aborted", reason: "user" })).toEqual({ exitCode: 130, line: "cancelled: user" })
    expect(TurnOutcome.outcome({ kind: "disposed" }).exitCode).toBe(130)
    expect(TurnOutcome.outcome({ kind: "rejected", reason: "no" })).toEqual({ exitCode: 5, line: "error: prompt rejected: no" })
    expect(TurnOutcome.outcome(undefined).exitCode).toBe(1)
  })

  it("[E-2] provider codes exit 3 naming the code; harness codes exit 5", () => {
    expect(TurnOutcome.outcome({ kind: "error", step: 1, message: "bad key", code: "AUTH" })).toEqual({
      exitCode: 3,
      line: "error: provider error AUTH: bad key"
    })
    for (const code of ["HTTP_418", "CONTENT_FILTER", "CONTEXT_WINDOW_EXCEEDED", "STREAM_CLOSED"]) {
      expect(TurnOutcome.outcome({ kind: "error", step: 1, message: "m", code }).exitCode).toBe(3)
    }
    for (const code of ["INVALID_ARGS", "SESSION_LOCKED", "TOOL_TIMEOUT", "INVARIANT"]) {
      expect(TurnOutcome.outcome({ kind: "error", step: 1, message: "m", code }).exitCode).toBe(5)
    }
    expect(TurnOutcome.outcome({ kind: "error", step: 0, message: "hook failed" })).toEqual({
      exitCode: 5,
      line: "error: hook failed"
    })
  })

  it("[issue 26] a step cut at the output cap is a failed turn (exit 5), one line naming OUTPUT_LIMIT", () => {
    expect(TurnOutcome.outcome({ kind: "error", step: 2, message: "the model's output passed 10 bytes", code: "OUTPUT_LIMIT" })).toEqual({
      exitCode: 5,
      line: "error: the model's output passed 10 bytes [OUTPUT_LIMIT]"
    })
  })

  it("[issue 10, DEC-11] a turn that could not be saved exits 4 (session error), never 0 or 5", () => {
    expect(
      TurnOutcome.outcome({ kind: "error", step: 1, message: "write /s/x.jsonl: ENOSPC", code: "PERSISTENCE_FAILED" })
    ).toEqual({ exitCode: 4, line: "error: the session could not be saved: write /s/x.jsonl: ENOSPC" })
    expect(TurnOutcome.isProviderCode("PERSISTENCE_FAILED")).toBe(false)
    expect(TurnOutcome.isProviderCode("APPROVAL_FAILED")).toBe(false)
  })
})
