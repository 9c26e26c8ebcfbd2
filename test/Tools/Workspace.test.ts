import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Workspace from "../../src/Tools/Workspace.js"
import { withWorkspace, writeFiles } from "../support/TempWorkspace.js"

describe("Workspace confinement", () => {
  it.live("relative and absolute paths inside the root resolve to real paths", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const ws = yield* Workspace.Workspace
        yield* writeFiles(root, { "src/a.ts": "x" })
        const rel = yield* ws.resolve("src/a.ts")
        expect(rel).toEqual({ absolute: `${root}/src/a.ts`, relative: "src/a.ts" })
        const abs = yield* ws.resolve(`${root}/src/./../src/a.ts`)
        expect(abs.relative).toBe("src/a.ts")
        const dot = yield* ws.resolve(".")
        expect(dot.relative).toBe(".")
        const missing = yield* ws.resolve("new/dir/file.txt")
        expect(missing.absolute).toBe(`${root}/new/dir/file.txt`)
      })
    ))

  it.live("`..` traversal out of the root is denied with OUTSIDE_WORKSPACE", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const ws = yield* Workspace.Workspace
        const e1 = yield* Effect.flip(ws.resolve("../outside.txt"))
        expect(e1.code).toBe("OUTSIDE_WORKSPACE")
        expect(e1.message).toContain("../outside.txt")
        expect(e1.message).toContain(root)
        const e2 = yield* Effect.flip(ws.resolve("src/../../../etc/passwd"))
        expect(e2.code).toBe("OUTSIDE_WORKSPACE")
        const e3 = yield* Effect.flip(ws.resolve("/etc/passwd"))
        expect(e3.code).toBe("OUTSIDE_WORKSPACE")
      })
    ))

  it.live("symlinks escaping the root are denied; links inside are followed", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const ws = yield* Workspace.Workspace
        const outside = yield* fs.makeTempDirectoryScoped({ prefix: "harness-outside-" })
        yield* writeFiles(outside, { "secret.txt": "s" })
        yield* writeFiles(root, { "inner/real.txt": "r" })
        yield* fs.symlink(outside, path.join(root, "escape"))
        yield* fs.symlink(path.join(outside, "secret.txt"), path.join(root, "secret-link.txt"))
        yield* fs.symlink(path.join(root, "inner"), path.join(root, "inner-link"))

        const viaDir = yield* Effect.flip(ws.resolve("escape/secret.txt"))
        expect(viaDir.code).toBe("OUTSIDE_WORKSPACE")
        expect(viaDir.message).toContain("symbolic link")
        // a not-yet-existing file below an escaping link is denied too (deepest existing ancestor)
        const newBelow = yield* Effect.flip(ws.resolve("escape/new/file.txt"))
        expect(newBelow.code).toBe("OUTSIDE_WORKSPACE")
        const viaFile = yield* Effect.flip(ws.resolve("secret-link.txt"))
        expect(viaFile.code).toBe("OUTSIDE_WORKSPACE")

        const inside = yield* ws.resolve("inner-link/real.txt")
        expect(inside.relative).toBe("inner/real.txt")
      })
    ))
})
