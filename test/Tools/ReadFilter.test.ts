import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Glob from "../../src/Tools/Glob.js"
import * as Grep from "../../src/Tools/Grep.js"
import * as Ls from "../../src/Tools/Ls.js"
import * as Read from "../../src/Tools/Read.js"
import * as ReadFilter from "../../src/Tools/ReadFilter.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

const hideSecrets = ReadFilter.layer((relative) => relative.startsWith("secrets/"))

describe("ReadFilter: the read-only tools never show hidden paths (issue 26)", () => {
  it.live("[issue 26] ls, glob, grep and read leave out hidden paths, with or without a path, through a linked directory", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* writeFiles(root, { "secrets/key.txt": "TOPSECRET\n", "secrets/deep/k2": "TOPSECRET\n", "readme.md": "hello TOPSECRET-free\n" })
        yield* fs.symlink("secrets", `${root}/docs`)
        const texts = [
          textOf(yield* Ls.run({})),
          textOf(yield* Ls.run({ path: "docs" })),
          textOf(yield* Ls.run({ path: "secrets" })),
          textOf(yield* Glob.run({ pattern: "**/*" })),
          textOf(yield* Glob.run({ pattern: "**/*", path: "docs" })),
          textOf(yield* Grep.run({ pattern: "TOPSECRET$" })),
          textOf(yield* Grep.run({ pattern: "TOPSECRET$", path: "docs" }))
        ]
        for (const text of texts) expect(text).not.toMatch(/key\.txt|k2|deep/)
        // `secrets/**` hides what is below the directory, not its name
        expect(texts[0]).toBe("docs -> secrets\nreadme.md\nsecrets/")
        expect(texts[1]).toBe("(empty directory)")
        expect(texts[3]).toBe("readme.md")
        const refused = [
          yield* Effect.flip(Read.run({ file_path: "docs/key.txt" })),
          yield* Effect.flip(Grep.run({ pattern: "TOPSECRET$", path: "docs/key.txt" })),
          yield* Effect.flip(Glob.run({ pattern: "*", path: "docs/deep" })),
          yield* Effect.flip(Ls.run({ path: "docs/deep" }))
        ]
        for (const e of refused) expect(e.code).toBe("PERMISSION_DENIED")
        expect(textOf(yield* Read.run({ file_path: "readme.md" }))).toContain("hello")
      }).pipe(Effect.provide(hideSecrets))
    ))

  it.live("without the service nothing is hidden", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "secrets/key.txt": "x\n" })
        expect(textOf(yield* Glob.run({ pattern: "**/*" }))).toBe("secrets/key.txt")
      })
    ))
})
