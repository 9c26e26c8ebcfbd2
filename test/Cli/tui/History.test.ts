import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { appendFileSync, statSync } from "node:fs"
import { join } from "node:path"
import * as History from "../../../src/Cli/tui/History.js"
import * as Cli from "../../support/Cli.js"

describe("tui/History (issue 34: input history across chats)", () => {
  it.effect("append then load: entries in order, the file 0600, a torn line skipped", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-tui-history-")
      const file = History.fileOf(join(home, "nested"))
      expect(yield* History.load(file)).toEqual([])
      yield* History.append(file, "first")
      yield* History.append(file, "two\nlines")
      appendFileSync(file, "\"torn")
      expect(yield* History.load(file)).toEqual(["first", "two\nlines"])
      expect(statSync(file).mode & 0o777).toBe(0o600)
    }))

  it.effect("an unreadable history is a HistoryError, not a crash", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-tui-history-")
      const error = yield* Effect.flip(History.load(home)) // a directory
      expect(error._tag).toBe("HistoryError")
      expect(error.message).toContain("cannot read the input history")
    }))

  it("search: case-insensitive substring, newest first, each entry once", () => {
    expect(History.search(["git status", "ls", "Git log", "git status"], "git")).toEqual(["git status", "Git log"])
    expect(History.search(["a", "b"], "")).toEqual(["b", "a"])
  })
})
