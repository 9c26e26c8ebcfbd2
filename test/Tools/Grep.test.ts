import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Duration from "effect/Duration"
import * as Glob from "../../src/Tools/Glob.js"
import * as Grep from "../../src/Tools/Grep.js"
import * as SearchWorker from "../../src/Tools/internal/SearchWorker.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

describe("grep", () => {
  it.live("path:line:text over files, respecting .gitignore (root and nested), skipping binaries", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, {
          ".gitignore": "*.log\nbuild/\n",
          "a.ts": "const needle = 1\nother\nNEEDLE again\r\n",
          "sub/b.md": "no\nneedle here\n",
          "sub/.gitignore": "secret.txt\n",
          "sub/secret.txt": "needle\n",
          "debug.log": "needle\n",
          "build/x.ts": "needle\n",
          "node_modules/p/i.js": "needle\n",
          "bin.dat": new Uint8Array([110, 101, 101, 100, 108, 101, 0, 1])
        })
        const out = textOf(yield* Grep.run({ pattern: "needle" }))
        expect(out).toBe("a.ts:1:const needle = 1\nsub/b.md:2:needle here")
        const ci = textOf(yield* Grep.run({ pattern: "needle", case_insensitive: true }))
        expect(ci).toBe("a.ts:1:const needle = 1\na.ts:3:NEEDLE again\nsub/b.md:2:needle here")
        expect(textOf(yield* Grep.run({ pattern: "need.e", glob: "*.md" }))).toBe("sub/b.md:2:needle here")
        expect(textOf(yield* Grep.run({ pattern: "needle", path: "sub" }))).toBe("sub/b.md:2:needle here")
        // an explicitly named file is searched even if ignored
        expect(textOf(yield* Grep.run({ pattern: "needle", path: "debug.log" }))).toBe("debug.log:1:needle")
        expect(textOf(yield* Grep.run({ pattern: "absent" }))).toBe("No matches for /absent/ in .")
      })
    ))

  it.live("caps results with a notice; invalid regex and escapes are errors", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "many.txt": Array.from({ length: 50 }, (_, i) => `hit ${i}`).join("\n") })
        const capped = textOf(yield* Grep.run({ pattern: "hit", max_results: 10 }))
        expect(capped.split("\n").filter((l) => l.startsWith("many.txt:"))).toHaveLength(10)
        expect(capped).toContain("Showing the first 10 matching lines; more matches exist")
        const bad = yield* Effect.flip(Grep.run({ pattern: "(" }))
        expect(bad.code).toBe("INVALID_PATTERN")
        const escape = yield* Effect.flip(Grep.run({ pattern: "x", path: "../" }))
        expect(escape.code).toBe("OUTSIDE_WORKSPACE")
      })
    ))

  it.live("[issue 16] a catastrophic regex returns SEARCH_TIMEOUT within its budget; glob patterns too", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "evil.txt": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\n", [`${"a".repeat(60)}.txt`]: "x" })
        const budget = Duration.seconds(1)
        const started = Date.now()
        const error = yield* Effect.flip(
          Grep.run({ pattern: "^(a+)+$" }).pipe(Effect.provideService(SearchWorker.SearchBudget, budget))
        )
        const elapsed = Date.now() - started
        expect(error.code).toBe("SEARCH_TIMEOUT")
        expect(error.message).toContain("time budget")
        // budget + generous slack for a loaded machine (the unbounded search would run for hours)
        expect(elapsed).toBeLessThan(1000 + 5000)
        // a glob whose compiled pattern backtracks polynomially is bounded the same way
        const globError = yield* Effect.flip(
          Glob.run({ pattern: `${"*a".repeat(12)}*b` }).pipe(Effect.provideService(SearchWorker.SearchBudget, budget))
        )
        expect(globError.code).toBe("SEARCH_TIMEOUT")
      })
    ))
})
