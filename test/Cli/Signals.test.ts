import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as Run from "../../src/Cli/commands/Run.js"
import * as Signals from "../../src/Cli/Signals.js"

const stop = (signal: Signals.SignalName): Signals.Stop => ({ _tag: "Signal", signal })

describe("Signals", () => {
  it("[issue 10] each stop has its shell exit code (128 + signal) and a reason for the log", () => {
    expect(Signals.exitCode(stop("SIGINT"))).toBe(130)
    expect(Signals.exitCode(stop("SIGTERM"))).toBe(143)
    expect(Signals.exitCode(stop("SIGHUP"))).toBe(129)
    expect(Signals.exitCode({ _tag: "StdoutClosed" })).toBe(141)
    expect(Signals.reason(stop("SIGTERM"))).toBe("terminated (SIGTERM)")
    expect(Signals.reason({ _tag: "StdoutClosed" })).toContain("EPIPE")
  })

  it("[issue 10] a run's report: a stop decides the exit code even when the turn completed; a save failure (4) wins", () => {
    const completed = { kind: "completed" } as const
    expect(Run.report({ reason: completed, stop: Option.none() })).toEqual({ exitCode: 0 })
    expect(Run.report({ reason: { kind: "aborted", reason: "terminated (SIGTERM)" }, stop: Option.some(stop("SIGTERM")) }))
      .toEqual({ exitCode: 143, line: "cancelled: terminated (SIGTERM)" })
    // stdout closed after the answer was complete: still never 0
    expect(Run.report({ reason: completed, stop: Option.some({ _tag: "StdoutClosed" }) })).toEqual({
      exitCode: 141,
      line: "stopped: the output was closed (EPIPE)"
    })
    expect(
      Run.report({
        reason: { kind: "error", step: 1, message: "EROFS", code: "PERSISTENCE_FAILED" },
        stop: Option.some(stop("SIGHUP"))
      }).exitCode
    ).toBe(4)
  })
})
