import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ls from "../../src/Tools/Ls.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

describe("ls", () => {
  it.live("lists sorted entries with / for directories and -> for links", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* writeFiles(root, { "b.txt": "", "a/x": "", ".hidden": "", "C.md": "" })
        yield* fs.symlink("b.txt", `${root}/link`)
        expect(textOf(yield* Ls.run({}))).toBe(".hidden\nC.md\na/\nb.txt\nlink -> b.txt")
        expect(textOf(yield* Ls.run({ path: "a" }))).toBe("x")
        yield* fs.makeDirectory(`${root}/empty`)
        expect(textOf(yield* Ls.run({ path: "empty" }))).toBe("(empty directory)")
        const notDir = yield* Effect.flip(Ls.run({ path: "b.txt" }))
        expect(notDir.code).toBe("NOT_A_DIRECTORY")
        const escape = yield* Effect.flip(Ls.run({ path: ".." }))
        expect(escape.code).toBe("OUTSIDE_WORKSPACE")
      })
    ))
})
