/**
 * Attack (issue 26, item 7 "data loss"): the bundled CLI's `edit` and `write`, driven by a scripted
 * model over real files, never change bytes they were not asked to change.
 *
 * - A Latin-1 file (`caf\xe9`) is refused by `edit` with `NOT_UTF8`; its bytes stay as they were
 *   (before the fix every non-UTF-8 byte became U+FFFD).
 * - A UTF-8 BOM survives `edit` and an overwriting `write`.
 * - CRLF endings survive an `edit` whose `new_string` adds lines with `\n`, and a `write` of
 *   LF-only content over a CRLF file; a mixed file keeps each region's endings.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"

const call = (id: string, name: string, args: Record<string, unknown>): Cli.ScriptedCall => ({ id, name, args })

const bytes = (file: string): string => readFileSync(file).toString("hex")
const hex = (text: string, encoding: BufferEncoding = "utf8"): string => Buffer.from(text, encoding).toString("hex")

describe("attack: lossless edits (issue 26)", () => {
  it.live("[issue 26] edit refuses a Latin-1 file (NOT_UTF8) and leaves every byte; BOM and CRLF survive edit and write", () =>
    Effect.gen(function*() {
      const work = yield* Cli.tempDir("attack-edit-")
      const home = yield* Cli.tempDir("attack-edit-home-")
      const files = join(work, "ws")
      yield* Effect.sync(() => {
        mkdirSync(files)
        writeFileSync(join(files, "latin1.txt"), Buffer.from("caf\xe9 cr\xe8me\n", "latin1"))
        writeFileSync(join(files, "bom.txt"), Buffer.from("\ufeffhello\nworld\n", "utf8"))
        writeFileSync(join(files, "crlf.txt"), "one\r\ntwo\r\nthree\r\n")
        writeFileSync(join(files, "mixed.txt"), "a\r\nb\r\nc\nd\n")
        writeFileSync(join(files, "bomcrlf.txt"), Buffer.from("\ufeffold\r\ncontent\r\n", "utf8"))
      })
      const file = Cli.toolCallScript(work, [
        call("c1", "edit", { file_path: "latin1.txt", old_string: "caf", new_string: "CAF" }),
        call("c2", "edit", { file_path: "bom.txt", old_string: "world", new_string: "there" }),
        call("c3", "edit", { file_path: "crlf.txt", old_string: "two", new_string: "two\ntwo and a half" }),
        call("c4", "edit", { file_path: "mixed.txt", old_string: "b\nc\nd", new_string: "B\nC\nD" }),
        call("c5", "write", { file_path: "bomcrlf.txt", content: "new\ncontent\n" })
      ])
      const r = yield* Cli.runCli(["run", "--yes", "--no-sandbox", "--json", "--script", file, "edit them"], {
        cwd: files,
        home
      })
      expect(r.code, r.stderr).toBe(0)
      const results = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as {
        readonly type: string
        readonly data?: { readonly callId?: string; readonly isError?: boolean; readonly content?: unknown }
      }).filter((e) => e.type === "tool/result")
      const latin = results.find((e) => e.data?.callId === "c1")
      expect(latin?.data?.isError).toBe(true)
      expect(JSON.stringify(latin?.data?.content)).toContain("not valid UTF-8")
      // the Latin-1 bytes are untouched (no U+FFFD)
      expect(bytes(join(files, "latin1.txt"))).toBe(hex("caf\xe9 cr\xe8me\n", "latin1"))
      // the BOM is kept
      expect(bytes(join(files, "bom.txt"))).toBe(hex("\ufeffhello\nthere\n"))
      // new lines in a CRLF file are CRLF
      expect(readFileSync(join(files, "crlf.txt"), "utf8")).toBe("one\r\ntwo\r\ntwo and a half\r\nthree\r\n")
      // a mixed file: the LF-only old_string matched across CRLF and LF; each line keeps its ending
      expect(readFileSync(join(files, "mixed.txt"), "utf8")).toBe("a\r\nB\r\nC\nD\n")
      // write over a BOM + CRLF file with LF content: both kept
      expect(bytes(join(files, "bomcrlf.txt"))).toBe(hex("\ufeffnew\r\ncontent\r\n"))
    }), 90_000)
})
