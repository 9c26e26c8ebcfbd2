import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Edit from "../../src/Tools/Edit.js"
import { textOf, withWorkspace, writeFiles } from "../support/TempWorkspace.js"

describe("edit", () => {
  it.live("replaces a unique occurrence exactly", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* writeFiles(root, { "a.ts": "const a = 1\nconst b = 2\n" })
        const out = yield* Edit.run({ file_path: "a.ts", old_string: "const b = 2", new_string: "const b = $& 3" })
        expect(textOf(out)).toBe("Edited a.ts: replaced 1 occurrence (first at line 2)")
        expect(yield* fs.readFileString(`${root}/a.ts`)).toBe("const a = 1\nconst b = $& 3\n")
      })
    ))

  it.live("0 matches → NO_MATCH naming the file; 2 matches → AMBIGUOUS_MATCH with the count; replace_all replaces all", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const original = "x = 1\ny = x\nz = x\n"
        yield* writeFiles(root, { "m.py": original })
        const none = yield* Effect.flip(Edit.run({ file_path: "m.py", old_string: "w = 2", new_string: "w = 3" }))
        expect(none.code).toBe("NO_MATCH")
        expect(none.message).toContain("m.py")
        const two = yield* Effect.flip(Edit.run({ file_path: "m.py", old_string: "= x", new_string: "= q" }))
        expect(two.code).toBe("AMBIGUOUS_MATCH")
        expect(two.message).toContain("2 times")
        expect(two.message).toContain("replace_all")
        expect(yield* fs.readFileString(`${root}/m.py`)).toBe(original)
        const all = yield* Edit.run({ file_path: "m.py", old_string: "= x", new_string: "= q", replace_all: true })
        expect(textOf(all)).toContain("replaced 2 occurrences")
        expect(yield* fs.readFileString(`${root}/m.py`)).toBe("x = 1\ny = q\nz = q\n")
      })
    ))

  it.live("identical strings, empty old_string, missing file and escapes are errors", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "a.txt": "abc" })
        const same = yield* Effect.flip(Edit.run({ file_path: "a.txt", old_string: "abc", new_string: "abc" }))
        expect(same.code).toBe("NO_CHANGE")
        const empty = yield* Effect.flip(Edit.run({ file_path: "a.txt", old_string: "", new_string: "x" }))
        expect(empty.code).toBe("INVALID_ARGS")
        const missing = yield* Effect.flip(Edit.run({ file_path: "b.txt", old_string: "a", new_string: "b" }))
        expect(missing.code).toBe("NOT_FOUND")
        const escape = yield* Effect.flip(Edit.run({ file_path: "../a.txt", old_string: "a", new_string: "b" }))
        expect(escape.code).toBe("OUTSIDE_WORKSPACE")
      })
    ))

  it.live("CRLF files accept LF old_string and keep CRLF endings", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* writeFiles(root, { "w.txt": "one\r\ntwo\r\nthree\r\n" })
        yield* Edit.run({ file_path: "w.txt", old_string: "one\ntwo", new_string: "1\n2" })
        expect(yield* fs.readFileString(`${root}/w.txt`)).toBe("1\r\n2\r\nthree\r\n")
      })
    ))

  it.live("a non-UTF-8 file is refused with NOT_UTF8 and left as it was (issue 26)", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const latin1 = Buffer.from("caf\xe9\n", "latin1")
        yield* writeFiles(root, { "l.txt": new Uint8Array(latin1) })
        const e = yield* Effect.flip(Edit.run({ file_path: "l.txt", old_string: "caf", new_string: "CAF" }))
        expect(e.code).toBe("NOT_UTF8")
        expect(e.message).toContain("l.txt is not valid UTF-8")
        expect(Buffer.from(yield* fs.readFile(`${root}/l.txt`)).equals(latin1)).toBe(true)
      })
    ))

  it.live("a BOM is kept; new lines take the endings of the lines they replace (CRLF, mixed); \\r in new_string is kept as given (issue 26)", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const read = (name: string) => Effect.map(fs.readFile(`${root}/${name}`), (b) => Buffer.from(b).toString("utf8"))
        yield* writeFiles(root, {
          "bom.txt": "\ufeffhello\n",
          "crlf.txt": "one\r\ntwo\r\n",
          "mixed.txt": "a\r\nb\nc\r\n",
          "given.txt": "x\r\ny\r\n",
          "dup.txt": "k\r\nk\nk\r\n"
        })
        yield* Edit.run({ file_path: "bom.txt", old_string: "hello", new_string: "bye" })
        expect(yield* read("bom.txt")).toBe("\ufeffbye\n")
        const bomStart = yield* Edit.run({ file_path: "bom.txt", old_string: "bye\n", new_string: "first\nsecond\n" })
        expect(textOf(bomStart)).toContain("first at line 1")
        expect(yield* read("bom.txt")).toBe("\ufefffirst\nsecond\n")
        // a one-line old_string, a two-line new_string: the new line is CRLF like its line
        yield* Edit.run({ file_path: "crlf.txt", old_string: "one", new_string: "one\none and a half" })
        expect(yield* read("crlf.txt")).toBe("one\r\none and a half\r\ntwo\r\n")
        // mixed: each replaced line keeps its ending; an extra line takes the last one
        yield* Edit.run({ file_path: "mixed.txt", old_string: "a\nb\nc\n", new_string: "A\nB\nC\nD\n" })
        expect(yield* read("mixed.txt")).toBe("A\r\nB\nC\r\nD\r\n")
        yield* Edit.run({ file_path: "given.txt", old_string: "x", new_string: "p\rq" })
        expect(yield* read("given.txt")).toBe("p\rq\r\ny\r\n")
        // an old_string with \r chose the endings: CRLF → LF as asked
        yield* Edit.run({ file_path: "given.txt", old_string: "p\rq\r\ny", new_string: "p\ny" })
        expect(yield* read("given.txt")).toBe("p\ny\r\n")
        // LF-only old_string matches both endings: counted together
        const dup = yield* Effect.flip(Edit.run({ file_path: "dup.txt", old_string: "k\n", new_string: "m\n" }))
        expect(dup.message).toContain("3 times")
      })
    ))
})

