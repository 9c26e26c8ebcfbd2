import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { closeSync, openSync, truncateSync, writeSync } from "node:fs"
import { join } from "node:path"
import * as Read from "../../src/Tools/Read.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n"

describe("read", () => {

  it.live("[issue 26] a 100 MB one-line file answers at once with the line cut and a notice; the rest is not read", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fd = openSync(join(root, "one.txt"), "w")
        const block = Buffer.alloc(1024 * 1024, "z")
        for (let i = 0; i < 100; i++) writeSync(fd, block)
        closeSync(fd)
        const started = Date.now()
        const out = yield* Read.run({ file_path: "one.txt" })
        expect(Date.now() - started).toBeLessThan(2000)
        const text = textOf(out)
        expect(text).toContain("[line truncated:")
        expect(text).toContain("Line 1 is longer than")
        expect(text).toContain("the rest of the file was not read")
        expect(text.length).toBeLessThan(3000)
        expect(out.meta).toMatchObject({ truncated: true, endLine: 1 })
        // a line before the offset that never ends: a clear error, not a scan of the whole file
        const past = yield* Effect.flip(Read.run({ file_path: "one.txt", offset: 2 }))
        expect(past.code).toBe("FILE_TOO_LARGE")
        expect(past.message).toContain("line 1 of one.txt is longer than")
      })
    ))

  it.live("[issue 26] a 10 GB sparse file after some text lines: the text is shown, the zeros end the read promptly", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const file = join(root, "sparse.txt")
        yield* writeFiles(root, { "sparse.txt": lines(2000).slice(0, 9000) + "\n" })
        truncateSync(file, 10 * 1024 ** 3)
        const started = Date.now()
        const out = yield* Read.run({ file_path: "sparse.txt", limit: 5 })
        expect(textOf(out)).toContain("     1\tline 1")
        const tail = yield* Read.run({ file_path: "sparse.txt", offset: 1000 })
        expect(textOf(tail)).toContain("the rest of the file was not read")
        expect(Date.now() - started).toBeLessThan(3000)
      })
    ))

  it.live("[issue 26] a read of a long file is interrupted between chunks", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fd = openSync(join(root, "many.txt"), "w")
        const block = Buffer.from("a\n".repeat(512 * 1024))
        for (let i = 0; i < 64; i++) writeSync(fd, block)
        closeSync(fd)
        // offset past the end: the whole file is scanned unless interrupted
        const fiber = yield* Effect.forkChild(Read.run({ file_path: "many.txt", offset: 40_000_000 }))
        yield* Effect.sleep(20)
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        expect(Date.now() - started).toBeLessThan(500)
      })
    ))
  it.live("numbers lines cat -n style", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "a.txt": "alpha\r\nbeta\n\ngamma" })
        const out = yield* Read.run({ file_path: "a.txt" })
        expect(textOf(out)).toBe("     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma")
        expect(out.meta).toEqual({ path: "a.txt", startLine: 1, endLine: 4, truncated: false })
      })
    ))

  it.live("offset and limit select a window, with a continuation notice", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "f.txt": lines(10) })
        const out = yield* Read.run({ file_path: "f.txt", offset: 3, limit: 2 })
        const text = textOf(out)
        expect(text.split("\n").slice(0, 2)).toEqual(["     3\tline 3", "     4\tline 4"])
        expect(text).toContain("Showing lines 3-4")
        expect(text).toContain("offset=5")
        // last window: no notice
        const tail = yield* Read.run({ file_path: "f.txt", offset: 9, limit: 5 })
        expect(textOf(tail)).toBe("     9\tline 9\n    10\tline 10")
        // exactly to the end: no notice
        const exact = yield* Read.run({ file_path: "f.txt", offset: 9, limit: 2 })
        expect(textOf(exact)).not.toContain("More lines")
        const past = yield* Effect.flip(Read.run({ file_path: "f.txt", offset: 11 }))
        expect(past.code).toBe("INVALID_ARGS")
        expect(past.message).toContain("10 lines")
      })
    ))

  it.live("caps at 2000 lines by default and at 256 KiB of output", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, {
          "long.txt": lines(2500),
          "wide.txt": Array.from({ length: 400 }, () => "x".repeat(1500)).join("\n")
        })
        const long = textOf(yield* Read.run({ file_path: "long.txt" }))
        expect(long.split("\n").filter((l) => /^\s+\d+\t/.test(l))).toHaveLength(Read.MAX_LINES)
        expect(long).toContain(`offset=${Read.MAX_LINES + 1}`)
        const big = yield* Read.run({ file_path: "long.txt", limit: 99999 })
        expect(big.meta).toMatchObject({ endLine: Read.MAX_LINES, truncated: true })

        const wide = textOf(yield* Read.run({ file_path: "wide.txt" }))
        expect(Buffer.byteLength(wide)).toBeLessThan(Read.MAX_OUTPUT_BYTES + 300)
        expect(wide).toContain(`Output capped at ${Read.MAX_OUTPUT_BYTES} bytes`)
      })
    ))

  it.live("long lines are cut with a marker", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "l.txt": "y".repeat(5000) })
        const text = textOf(yield* Read.run({ file_path: "l.txt" }))
        expect(text).toContain("[line truncated: 5000 characters]")
        expect(text.length).toBeLessThan(2100)
      })
    ))

  it.live("binary files, directories, missing files and escapes are clear errors", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "bin.dat": new Uint8Array([0x89, 0x50, 0, 1, 2, 3]), "dir/x": "", "empty.txt": "" })
        const bin = yield* Effect.flip(Read.run({ file_path: "bin.dat" }))
        expect(bin.code).toBe("BINARY_FILE")
        expect(bin.message).toContain("bin.dat")
        const dir = yield* Effect.flip(Read.run({ file_path: "dir" }))
        expect(dir.code).toBe("NOT_A_FILE")
        const missing = yield* Effect.flip(Read.run({ file_path: "nope.txt" }))
        expect(missing.code).toBe("NOT_FOUND")
        expect(missing.message).toContain("nope.txt")
        const escape = yield* Effect.flip(Read.run({ file_path: "../../etc/passwd" }))
        expect(escape.code).toBe("OUTSIDE_WORKSPACE")
        expect(textOf(yield* Read.run({ file_path: "empty.txt" }))).toBe("(empty file)")
      })
    ))
})
