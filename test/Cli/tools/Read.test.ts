import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Read from "../../../src/Cli/tools/Read.js"
import { textOf, withWorkspace, writeFiles } from "../../support/TempWorkspace.js"

const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n"

describe("read", () => {
  it.scopedLive("numbers lines cat -n style", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "a.txt": "alpha\r\nbeta\n\ngamma" })
        const out = yield* Read.run({ file_path: "a.txt" })
        expect(textOf(out)).toBe("     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma")
        expect(out.meta).toEqual({ path: "a.txt", startLine: 1, endLine: 4, truncated: false })
      })
    ))

  it.scopedLive("offset and limit select a window, with a continuation notice", () =>
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

  it.scopedLive("caps at 2000 lines by default and at 256 KiB of output", () =>
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

  it.scopedLive("long lines are cut with a marker", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "l.txt": "y".repeat(5000) })
        const text = textOf(yield* Read.run({ file_path: "l.txt" }))
        expect(text).toContain("[line truncated: 5000 characters]")
        expect(text.length).toBeLessThan(2100)
      })
    ))

  it.scopedLive("binary files, directories, missing files and escapes are clear errors", () =>
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
