import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Glob from "../../src/Tools/Glob.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

describe("glob", () => {
  it.live("matches **, {a,b}, respects root and nested .gitignore, skips .git and node_modules", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, {
          ".gitignore": "dist/\n*.gen.ts\n",
          "src/a.ts": "",
          "src/b.tsx": "",
          "src/c.js": "",
          "src/x.gen.ts": "",
          "src/pkg/.gitignore": "local/\n!keep.gen.ts\n",
          "src/pkg/d.ts": "",
          "src/pkg/keep.gen.ts": "",
          "src/pkg/local/e.ts": "",
          "dist/out.ts": "",
          "node_modules/m/index.ts": "",
          ".git/hooks/h.ts": "",
          "top.ts": ""
        })
        const out = textOf(yield* Glob.run({ pattern: "**/*.{ts,tsx}" }))
        expect(out.split("\n").sort()).toEqual(["src/a.ts", "src/b.tsx", "src/pkg/d.ts", "src/pkg/keep.gen.ts", "top.ts"])
        // standard semantics: no slash → top level of the search path
        expect(textOf(yield* Glob.run({ pattern: "*.ts" }))).toBe("top.ts")
        expect(textOf(yield* Glob.run({ pattern: "*.ts", path: "src/pkg" })).split("\n").sort()).toEqual([
          "src/pkg/d.ts",
          "src/pkg/keep.gen.ts"
        ])
        expect(textOf(yield* Glob.run({ pattern: "src/pkg/*.ts" })).split("\n").sort()).toEqual([
          "src/pkg/d.ts",
          "src/pkg/keep.gen.ts"
        ])
        expect(textOf(yield* Glob.run({ pattern: "**/*.rs" }))).toBe("No files matched **/*.rs")
        const bad = yield* Effect.flip(Glob.run({ pattern: "../**/*.ts" }))
        expect(bad.code).toBe("INVALID_PATTERN")
        const escape = yield* Effect.flip(Glob.run({ pattern: "*", path: "/etc" }))
        expect(escape.code).toBe("OUTSIDE_WORKSPACE")
      })
    ))

  it.live("sorts by modification time, newest first, and caps with a notice", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* writeFiles(root, { "old.md": "", "mid.md": "", "new.md": "" })
        yield* fs.utimes(`${root}/old.md`, 1_000, 1_000)
        yield* fs.utimes(`${root}/mid.md`, 2_000, 2_000)
        yield* fs.utimes(`${root}/new.md`, 3_000, 3_000)
        expect(textOf(yield* Glob.run({ pattern: "*.md" }))).toBe("new.md\nmid.md\nold.md")

        const many: Record<string, string> = {}
        for (let i = 0; i < Glob.MAX_RESULTS + 5; i++) many[`many/f${i}.txt`] = ""
        yield* writeFiles(root, many)
        const capped = yield* Glob.run({ pattern: "many/*.txt" })
        const text = textOf(capped)
        expect(text.split("\n").filter((l) => l.startsWith("many/"))).toHaveLength(Glob.MAX_RESULTS)
        expect(text).toContain(`Showing ${Glob.MAX_RESULTS} of ${Glob.MAX_RESULTS + 5} matching files`)
      })
    ))

  it.live("symbolic links are not followed (no escape through a linked directory)", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const outside = yield* fs.makeTempDirectoryScoped({ prefix: "harness-outside-" })
        yield* writeFiles(outside, { "secret.ts": "" })
        yield* writeFiles(root, { "a.ts": "" })
        yield* fs.symlink(outside, `${root}/linked`)
        expect(textOf(yield* Glob.run({ pattern: "**/*.ts" }))).toBe("a.ts")
      })
    ))
})
