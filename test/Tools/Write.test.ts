import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Write from "../../src/Tools/Write.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

describe("write", () => {
  it.live("creates parent directories and reports created vs overwritten", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const created = yield* Write.run({ file_path: "a/b/c.txt", content: "one\ntwo\n" })
        expect(textOf(created)).toBe("Created a/b/c.txt (8 bytes, 2 lines)")
        expect(yield* fs.readFileString(`${root}/a/b/c.txt`)).toBe("one\ntwo\n")
        const over = yield* Write.run({ file_path: `${root}/a/b/c.txt`, content: "x" })
        expect(textOf(over)).toBe("Overwrote a/b/c.txt (1 bytes, 1 line)")
        expect(yield* fs.readFileString(`${root}/a/b/c.txt`)).toBe("x")
        // no temp files left behind
        expect(yield* fs.readDirectory(`${root}/a/b`)).toEqual(["c.txt"])
      })
    ))

  it.live("keeps permission bits of an existing file", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* writeFiles(root, { "run.sh": "#!/bin/sh\n" })
        yield* fs.chmod(`${root}/run.sh`, 0o755)
        yield* Write.run({ file_path: "run.sh", content: "#!/bin/sh\necho hi\n" })
        const info = yield* fs.stat(`${root}/run.sh`)
        expect(info.mode & 0o777).toBe(0o755)
      })
    ))

  it.live("writes through an inside symlink to its target; escapes and directories are refused", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const outside = yield* fs.makeTempDirectoryScoped({ prefix: "harness-outside-" })
        yield* writeFiles(root, { "target.txt": "old", "d/keep": "" })
        yield* fs.symlink(path.join(root, "target.txt"), path.join(root, "link.txt"))
        yield* fs.symlink(outside, path.join(root, "out"))
        yield* Write.run({ file_path: "link.txt", content: "new" })
        expect(yield* fs.readFileString(path.join(root, "target.txt"))).toBe("new")
        expect(yield* fs.readLink(path.join(root, "link.txt"))).toBe(path.join(root, "target.txt"))

        const escape = yield* Effect.flip(Write.run({ file_path: "out/pwned.txt", content: "x" }))
        expect(escape.code).toBe("OUTSIDE_WORKSPACE")
        expect(yield* fs.exists(path.join(outside, "pwned.txt"))).toBe(false)
        const traversal = yield* Effect.flip(Write.run({ file_path: "../pwned.txt", content: "x" }))
        expect(traversal.code).toBe("OUTSIDE_WORKSPACE")
        const dir = yield* Effect.flip(Write.run({ file_path: "d", content: "x" }))
        expect(dir.code).toBe("NOT_A_FILE")
      })
    ))

  it.live("overwriting keeps a BOM the content does not write and CRLF endings of a CRLF file; content with \\r is written as given (issue 26)", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const hex = (t: string) => Buffer.from(t, "utf8").toString("hex")
        const read = (name: string) => Effect.map(fs.readFile(`${root}/${name}`), (b) => Buffer.from(b).toString("hex"))
        yield* writeFiles(root, {
          "bom.txt": "\ufeffold\n",
          "crlf.txt": "a\r\nb\r\n",
          "mixed.txt": "a\r\nb\n",
          "own.txt": "\ufeffa\r\n"
        })
        const bom = yield* Write.run({ file_path: "bom.txt", content: "new\n" })
        expect(textOf(bom)).toBe("Overwrote bom.txt (7 bytes, 1 line; kept the file's UTF-8 byte order mark)")
        expect(yield* read("bom.txt")).toBe(hex("\ufeffnew\n"))
        const crlf = yield* Write.run({ file_path: "crlf.txt", content: "x\ny\nz" })
        expect(textOf(crlf)).toContain("kept the file's CRLF line endings")
        expect(yield* read("crlf.txt")).toBe(hex("x\r\ny\r\nz"))
        // a mixed file has no single style: the content is written as given
        yield* Write.run({ file_path: "mixed.txt", content: "x\ny\n" })
        expect(yield* read("mixed.txt")).toBe(hex("x\ny\n"))
        // the model wrote its own BOM and endings: byte for byte
        yield* Write.run({ file_path: "own.txt", content: "\ufeffp\nq\r\n" })
        expect(yield* read("own.txt")).toBe(hex("\ufeffp\nq\r\n"))
      })
    ))
})
