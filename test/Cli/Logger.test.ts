import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as EffectLogger from "effect/Logger"
import * as Logger from "../../src/Cli/Logger.js"
import * as SessionError from "../../src/Session/SessionError.js"

const entry = (overrides: Partial<Parameters<typeof Logger.format>[0]>): Parameters<typeof Logger.format>[0] => ({
  logLevel: "Warn",
  message: "something happened",
  cause: Cause.empty,
  annotations: {},
  date: new Date(0),
  verbose: false,
  ...overrides
})

const saveError = SessionError.make("IO", "write /s/cwd-1/.x.tmp: EROFS: read-only file system", {
  file: "/s/cwd-1/.x.tmp",
  cause: { reason: "Unknown", description: "EROFS: read-only file system\n  at open", cause: { code: "EROFS" } }
})

describe("Logger (DEC-12)", () => {
  it("[issue 10] one line per entry: level, message, annotations; an error object by its message and code, never a JSON dump", () => {
    const retry = Logger.format(entry({
      message: "model request failed before its first chunk; retrying",
      annotations: { attempt: 1, code: "RATE_LIMIT", message: "slow down\nplease" }
    }))
    expect(retry).toBe(
      "warning: model request failed before its first chunk; retrying (attempt=1, code=RATE_LIMIT, message=slow down please)"
    )
    const line = Logger.format(entry({ logLevel: "Error", message: ["session s: 3 event(s) could not be persisted", saveError] }))
    expect(line).toBe(
      "error: session s: 3 event(s) could not be persisted: write /s/cwd-1/.x.tmp: EROFS: read-only file system [IO]"
    )
    expect(line).not.toContain("\n")
    const fromCause = Logger.format(entry({ logLevel: "Error", message: "boom", cause: Cause.fail(new Error("a\nb")) }))
    expect(fromCause).toBe("error: boom: a b")
    expect(Logger.format(entry({ logLevel: "Debug" }))).toBeUndefined()
  })

  it("[issue 10] --verbose: timestamp, fiber, full annotations and the cause's pretty print; debug shown", () => {
    const line = Logger.format(entry({
      logLevel: "Debug",
      verbose: true,
      annotations: { k: "v" },
      cause: Cause.fail(new Error("deep"))
    }))
    expect(line).toMatch(/^1970-01-01T00:00:00.000Z debug something happened k="v"\n/)
    expect(line).toContain("deep")
  })

  it.effect("[issue 10] after a save failure was reported, the store's later save-failure entries are only verbose", () =>
    Effect.gen(function*() {
      const release = entry({ logLevel: "Error", message: ["could not be persisted at release", saveError] })
      yield* Logger.markReported
      expect(Logger.format(release)).toBeUndefined()
      expect(Logger.format({ ...release, verbose: true })).toContain("could not be persisted at release")
      // other errors still print
      expect(Logger.format(entry({ logLevel: "Error", message: "other" }))).toBe("error: other")
    }))

  it.effect("[issue 10] --verbose reaches the logger through the fiber's context: debug entries shown, Verbose set; off: neither", () =>
    Effect.gen(function*() {
      const seen: Array<readonly [string, boolean]> = []
      const capture = EffectLogger.make((options) => {
        seen.push([options.logLevel, options.fiber.getRef(Logger.Verbose)])
      })
      const logs = Effect.andThen(Effect.logDebug("d"), Effect.logInfo("i")).pipe(Effect.provide(EffectLogger.layer([capture])))
      yield* logs.pipe(Logger.verbose(false))
      yield* logs.pipe(Logger.verbose(true))
      expect(seen).toEqual([["Info", false], ["Debug", true], ["Info", true]])
    }))
})
