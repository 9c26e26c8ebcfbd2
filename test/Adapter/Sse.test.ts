import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Sse from "../../src/Adapter/Sse.js"
import * as LlmError from "../../src/Llm/LlmError.js"

const encoder = new TextEncoder()
const utf8 = (s: string) => encoder.encode(s)

/** Decodes the given reads (each a separate `Uint8Array`, one per stream chunk). */
const decodeReads = (reads: ReadonlyArray<Uint8Array>, options?: Sse.DecodeOptions) =>
  Stream.fromIterable(reads).pipe(
    Stream.rechunk(1),
    Sse.decode(options),
    Stream.runCollect,
    Effect.result
  )

const decodeText = (text: string, options?: Sse.DecodeOptions) => decodeReads([utf8(text)], options)

/** Splits bytes at the given offsets. */
const splitAt = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  let from = 0
  for (const cut of cuts) {
    out.push(bytes.subarray(from, cut))
    from = cut
  }
  out.push(bytes.subarray(from))
  return out
}

const data = (events: ReadonlyArray<Sse.Event>) => events.map((e) => e.data)

describe("Sse", () => {
  const body = "data: {\"t\":\"€ uro\"}\n\ndata: {\"t\":\"😊\"}\r\n\r\n: keep-alive\nevent: delta\ndata: ü\n\ndata: [DONE]\n\n"
  const expected = ["{\"t\":\"€ uro\"}", "{\"t\":\"😊\"}", "ü"]

  it.effect("AC-24 [P-4] splits at every byte, including inside 3- and 4-byte characters, give the same events", () =>
    Effect.gen(function*() {
      const bytes = utf8(body)
      const euro = bytes.indexOf(0xE2) // first byte of the 3-byte "€"
      expect(euro).toBeGreaterThan(0)
      for (let cut = 0; cut <= bytes.length; cut++) {
        const result = yield* decodeReads(splitAt(bytes, [cut]))
        expect(Result.getOrThrow(result).map((e) => e.data), `cut at ${cut}`).toEqual(expected)
      }
      // inside the 3-byte character: after its first and after its second byte, in one run
      const inside = yield* decodeReads(splitAt(bytes, [euro + 1, euro + 2]))
      expect(data(Result.getOrThrow(inside))).toEqual(expected)
      // one byte per read
      const single = yield* decodeReads(Array.from(bytes, (b) => Uint8Array.of(b)))
      expect(data(Result.getOrThrow(single))).toEqual(expected)
    }))

  it.effect("AC-24 [P-4] CRLF, LF and mixed framing; trailing \\r stripped per line", () =>
    Effect.gen(function*() {
      const crlf = yield* decodeText("data: a\r\n\r\ndata: b\r\n\r\ndata: [DONE]\r\n\r\n")
      expect(data(Result.getOrThrow(crlf))).toEqual(["a", "b"])
      const mixed = yield* decodeText("data: a\r\n\ndata: b\n\r\ndata: c\r\ndata: d\n\ndata: [DONE]\n\n")
      expect(data(Result.getOrThrow(mixed))).toEqual(["a", "b", "c\nd"])
    }))

  it.effect("AC-24 [P-4] comments, event:, id:, retry: ignored; event name kept; events without data skipped", () =>
    Effect.gen(function*() {
      const result = yield* decodeText(
        ": comment\nid: 7\nretry: 10\nevent: ping\n\nevent: error\ndata: {\"e\":1}\n\nid: 8\ndata: x\n\nfoo: bar\ndata: y\n\ndata: [DONE]\n\n"
      )
      expect(Result.getOrThrow(result)).toEqual([
        { event: "error", data: "{\"e\":1}" },
        { event: "message", data: "x" },
        { event: "message", data: "y" }
      ])
    }))

  it.effect("AC-24 [P-4] data: without space, multi-line data joined by \\n, a bare data: adds an empty line", () =>
    Effect.gen(function*() {
      const result = yield* decodeText("data:nospace\n\ndata: one\ndata:  two\ndata:\ndata\ndata: end\n\ndata: [DONE]\n\n")
      expect(data(Result.getOrThrow(result))).toEqual(["nospace", "one\n two\n\n\nend"])
    }))

  it.effect("AC-24 [P-4] [DONE] ends parsing: later bytes are ignored and never read", () =>
    Effect.gen(function*() {
      const result = yield* Stream.make(utf8("data: a\n\ndata: [DONE]\n\ndata: after\n\n")).pipe(
        Stream.concat(Stream.fail("the decoder read past [DONE]")),
        Sse.decode(),
        Stream.runCollect
      )
      expect(data(result)).toEqual(["a"])
    }))

  it.effect("AC-24 [P-4] an unterminated final [DONE] is fine", () =>
    Effect.gen(function*() {
      const noBlank = yield* decodeText("data: a\n\ndata: [DONE]")
      expect(data(Result.getOrThrow(noBlank))).toEqual(["a"])
      const oneNewline = yield* decodeText("data: a\n\ndata: [DONE]\r\n")
      expect(data(Result.getOrThrow(oneNewline))).toEqual(["a"])
    }))

  it.effect("AC-24 [P-4] EOF without [DONE] (empty body, between events, mid-event) → STREAM_CLOSED", () =>
    Effect.gen(function*() {
      for (const text of ["", "data: a\n\n", "data: a\n\ndata: {\"half", "data: a\n\ndata: b\n", ": only a comment\n"]) {
        const result = yield* decodeText(text)
        expect(Result.isFailure(result), JSON.stringify(text)).toBe(true)
        const error = Result.getFailure(result)
        expect(error._tag === "Some" && error.value.code).toBe("STREAM_CLOSED")
        expect(error._tag === "Some" && error.value.message).toBe("stream ended without [DONE]")
      }
    }))

  it.effect("[P-4, DECISION] complete events before a cut are emitted; the pending unterminated one is not", () =>
    Effect.gen(function*() {
      const collected: Array<string> = []
      const events = yield* Stream.make(utf8("data: a\n\ndata: {\"half")).pipe(
        Sse.decode(),
        Stream.tap((e) => Effect.sync(() => collected.push(e.data))),
        Stream.runDrain,
        Effect.result
      )
      expect(Result.isFailure(events)).toBe(true)
      expect(collected).toEqual(["a"])
    }))

  it.effect("[P-4] the terminal rule is a parameter (Anthropic message_stop), named in the STREAM_CLOSED message", () =>
    Effect.gen(function*() {
      const options: Sse.DecodeOptions = {
        isTerminal: (e) => e.event === "message_stop",
        terminalName: "message_stop"
      }
      const ok = yield* decodeText(
        "event: a\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\nevent: late\ndata: x\n\n",
        options
      )
      expect(Result.getOrThrow(ok)).toEqual([{ event: "a", data: "{}" }])
      const done = yield* decodeText("data: [DONE]\n\nevent: message_stop\ndata: {}\n\n", options)
      expect(Result.getOrThrow(done)).toEqual([{ event: "message", data: "[DONE]" }])
      const closed = yield* decodeText("event: a\ndata: {}\n\n", options)
      expect(Result.flip(closed)).toEqual(
        Result.succeed(LlmError.providerError("STREAM_CLOSED", "stream ended without message_stop"))
      )
    }))

  it.effect("[P-4, DECISION] an oversized event fails with a typed MALFORMED_RESPONSE, not a defect", () =>
    Effect.gen(function*() {
      const big = `data: ${"x".repeat(200)}`
      const result = yield* decodeReads([utf8(big.slice(0, 100)), utf8(big.slice(100))], { maxEventSize: 64 })
      const error = Result.getFailure(result)
      expect(error._tag === "Some" && error.value.code).toBe("MALFORMED_RESPONSE")
      const fine = yield* decodeText(`${big}\n\ndata: [DONE]\n\n`, { maxEventSize: 1024 })
      expect(Result.isSuccess(fine)).toBe(true)
    }))

  it.effect("[P-4] a leading UTF-8 BOM is dropped; invalid bytes become U+FFFD, never a failure", () =>
    Effect.gen(function*() {
      const bom = Uint8Array.of(0xEF, 0xBB, 0xBF, ...utf8("data: a\n\ndata: [DONE]\n\n"))
      expect(data(Result.getOrThrow(yield* decodeReads([bom])))).toEqual(["a"])
      const bad = Uint8Array.of(...utf8("data: "), 0xFF, ...utf8("\n\ndata: [DONE]\n\n"))
      expect(data(Result.getOrThrow(yield* decodeReads([bad])))).toEqual(["\uFFFD"])
    }))

  it.effect("translate: a translator's in-band end stops reading; end() closes on the terminal marker", () =>
    Effect.gen(function*() {
      const make = (): Sse.Translator => ({
        event: (event, out) => {
          if (event.data === "stop") return "done"
          out.push({ type: "text-delta", index: 0, text: event.data })
          return "more"
        },
        end: (out) => {
          out.push({ type: "finish", reason: { kind: "stop" } })
          return undefined
        }
      })
      const early = yield* Stream.make(utf8("data: a\n\ndata: stop\n\n")).pipe(
        Stream.concat(Stream.fail("read past the in-band end")),
        Sse.decode(),
        Sse.translate(make),
        Stream.runCollect
      )
      expect(early).toEqual([{ type: "text-delta", index: 0, text: "a" }])
      const normal = yield* Stream.make(utf8("data: a\n\ndata: [DONE]\n\n")).pipe(
        Sse.decode(),
        Sse.translate(make),
        Stream.runCollect
      )
      expect(normal).toEqual([
        { type: "text-delta", index: 0, text: "a" },
        { type: "finish", reason: { kind: "stop" } }
      ])
    }))
})
