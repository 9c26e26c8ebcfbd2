import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as JsonlReader from "../../../src/Session/persistence/JsonlReader.js"
import * as Records from "../../../src/Session/persistence/Records.js"
import { header, LogBuilder } from "../../support/sessionLog.js"

const ID = "reader-1"

const logText = (turns: number): string => {
  const b = new LogBuilder()
  for (let t = 0; t < turns; t++) b.completeTurn(`prompt ${t}`, { tool: t % 2 === 0, pieces: ["é", "ü 💥", "x\n"] })
  return [JSON.stringify(Records.headerRecord(header(ID))), ...b.events.map(Records.encodeEvent)].join("\n") + "\n"
}

/** Feeds `bytes` to a parser in pieces of `size`. */
const inPieces = (bytes: Uint8Array, size: number, maxLineBytes?: number) => {
  const parser = new JsonlReader.Parser("f.jsonl", ID, maxLineBytes)
  for (let i = 0; i < bytes.byteLength; i += size) {
    // a copy per piece, as a reader's fresh buffer per read
    if (parser.feed(bytes.slice(i, i + size)) !== undefined) break
  }
  return parser.end()
}

describe("JsonlReader (issue 26)", () => {
  it("reading in pieces of any size (a multi-byte character split across reads included) equals one whole parse", () => {
    const bytes = Buffer.from(logText(3), "utf8")
    const whole = JsonlReader.parse(bytes, "f.jsonl", ID)
    expect(Result.isSuccess(whole)).toBe(true)
    for (const size of [1, 2, 7, 64, 4096]) expect(inPieces(bytes, size)).toEqual(whole)
  })

  it("a torn tail (a last line without its newline) is dropped; keepBytes ends at the last whole line", () => {
    const text = logText(1)
    const torn = Buffer.from(`${text}{"type":"turn/st`, "utf8")
    const parsed = inPieces(torn, 5)
    expect(Result.isSuccess(parsed) && parsed.success.dropped).toBe(1)
    expect(Result.isSuccess(parsed) && parsed.success.keepBytes).toBe(Buffer.byteLength(text))
  })

  it("a line longer than the record limit is skipped unread: at the tail it is dropped, before a turn/end it is CORRUPT_LOG naming the limit", () => {
    const text = logText(1)
    const huge = `{"type":"user/message","pad":"${"x".repeat(5000)}"}\n`
    const atTail = inPieces(Buffer.from(text + huge, "utf8"), 64, 2000)
    expect(Result.isSuccess(atTail) && atTail.success.dropped).toBe(1)
    expect(Result.isSuccess(atTail) && atTail.success.keepBytes).toBe(Buffer.byteLength(text))
    const turnEnd = text.trimEnd().split("\n").at(-1)!
    const before = inPieces(Buffer.from(text + huge + turnEnd + "\n", "utf8"), 64, 2000)
    expect(Result.isFailure(before) && before.failure).toMatchObject({ code: "CORRUPT_LOG" })
    expect(Result.isFailure(before) && before.failure.message).toContain("record larger than")
  })

  it("empty, header-only-incomplete and foreign-id logs fail as before", () => {
    expect(Result.isFailure(JsonlReader.parse(new Uint8Array(0), "f", ID))).toBe(true)
    const incomplete = JsonlReader.parse(Buffer.from("{\"type\":\"session\""), "f", ID)
    expect(Result.isFailure(incomplete) && incomplete.failure.message).toContain("incomplete session header")
    const other = JsonlReader.parse(Buffer.from(`${JSON.stringify(Records.headerRecord(header("other")))}\n`), "f", ID)
    expect(Result.isFailure(other) && other.failure.message).toContain("does not match")
  })
})
