import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Commands from "../../../src/Cli/tui/Commands.js"
import * as Cli from "../../support/Cli.js"

describe("tui/Commands (issue 34: /help and completion)", () => {
  it("/help lists every command with its arguments", () => {
    const help = Commands.help()
    for (const c of Commands.commands) expect(help).toContain(`/${c.name}`)
    expect(help).toContain("/resume [id prefix]")
    expect(help).toContain("Ctrl-R")
  })

  it.effect("@path suggestions: one directory level, directories first with a slash, no dot-files unless typed", () =>
    Effect.gen(function*() {
      const dir = yield* Cli.tempDir("harness-tui-complete-")
      mkdirSync(join(dir, "src"))
      writeFileSync(join(dir, "src", "main.go"), "")
      writeFileSync(join(dir, "src", "mod.go"), "")
      writeFileSync(join(dir, "setup.sh"), "")
      writeFileSync(join(dir, ".env"), "")
      expect(Commands.pathSuggestions(dir, "@s").map((i) => i.value)).toEqual(["@src/", "@setup.sh"])
      expect(Commands.pathSuggestions(dir, "@src/m").map((i) => i.value)).toEqual(["@src/main.go", "@src/mod.go"])
      expect(Commands.pathSuggestions(dir, "@").map((i) => i.value)).not.toContain("@.env")
      expect(Commands.pathSuggestions(dir, "@.e").map((i) => i.value)).toEqual(["@.env"])
      expect(Commands.pathSuggestions(dir, "@nope/x")).toEqual([])
    }))

  it.effect("the provider completes @paths in place: a directory stays open, a file ends with a space", () =>
    Effect.gen(function*() {
      const dir = yield* Cli.tempDir("harness-tui-complete-")
      mkdirSync(join(dir, "src"))
      writeFileSync(join(dir, "src", "main.go"), "")
      const provider = Commands.provider(dir)
      const line = "see @sr"
      const suggestions = yield* Effect.promise(() =>
        provider.getSuggestions([line], 0, line.length, { signal: new AbortController().signal })
      )
      expect(suggestions?.prefix).toBe("@sr")
      const applied = provider.applyCompletion([line], 0, line.length, suggestions!.items[0]!, "@sr")
      expect(applied.lines).toEqual(["see @src/"])
      const file = provider.applyCompletion(["@src/m"], 0, 6, { value: "@src/main.go", label: "main.go" }, "@src/m")
      expect(file).toEqual({ lines: ["@src/main.go "], cursorLine: 0, cursorCol: 13 })
    }))
})
