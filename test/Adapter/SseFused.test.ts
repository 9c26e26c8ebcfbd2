/**
 * `Sse.decodeTranslate` (the fused hot path, issue 17) behaves exactly as
 * `decode` piped into `translate`: same chunks, same output batches, same ending or failure, for
 * every wire fixture and for edge bodies (no terminal marker, oversized event, in-band errors,
 * malformed JSON, bytes after the terminal marker), each cut into seeded random reads.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as Sse from "../../src/Adapter/Sse.js"
import * as fc from "../Llm/arb.js"
import * as FakeProvider from "../support/FakeProvider.js"

type Wire = "openai" | "anthropic"

const options = (wire: Wire): Sse.DecodeOptions =>
  wire === "openai"
    ? { provider: "p", maxEventSize: 4096 }
    : { provider: "p", maxEventSize: 4096, isTerminal: (e) => e.event === "message_stop", terminalName: "message_stop" }

const translator = (wire: Wire) => (): Sse.Translator =>
  wire === "openai" ? OpenAiCompatible.makeTranslator(["reasoning_content", "reasoning"], "p") : Anthropic.makeTranslator("p")

/** Splits bytes into batches of reads at seeded cut points. */
const cut = (bytes: Uint8Array, seed: number): Array<ReadonlyArray<Uint8Array>> => {
  let a = seed >>> 0
  const random = () => {
    a = (a * 1664525 + 1013904223) >>> 0
    return a / 4294967296
  }
  const batches: Array<ReadonlyArray<Uint8Array>> = []
  let offset = 0
  while (offset < bytes.length) {
    const reads: Array<Uint8Array> = []
    const n = 1 + Math.floor(random() * 3)
    for (let i = 0; i < n && offset < bytes.length; i++) {
      const size = 1 + Math.floor(random() * 200)
      reads.push(bytes.subarray(offset, offset + size))
      offset += size
    }
    batches.push(reads)
  }
  return batches
}

const outcome = (stream: Stream.Stream<unknown, unknown>) =>
  Effect.gen(function*() {
    const batches: Array<ReadonlyArray<unknown>> = []
    const exit = yield* Effect.exit(Stream.runForEachArray(stream, (c) => Effect.sync(() => void batches.push(c))))
    if (Exit.isSuccess(exit)) return { batches, exit: "ok" }
    const e = Cause.squash(exit.cause) as { _tag?: string; code?: string; message?: string; provider?: string }
    return { batches, exit: `${e._tag}/${e.code}/${e.provider}: ${e.message}` }
  })

const same = (wire: Wire, body: Uint8Array, seed: number) =>
  Effect.gen(function*() {
    const input = () => Stream.fromArrays(...cut(body, seed))
    const composed = yield* outcome(input().pipe(Sse.decode(options(wire)), Sse.translate(translator(wire))))
    const fused = yield* outcome(Sse.decodeTranslate(options(wire), translator(wire))(input()))
    expect(fused).toEqual(composed)
    return composed
  })

const fixtures: Array<[Wire, string]> = FakeProvider.wireRoots("fused-SSE replays of the captured streams").flatMap((root) =>
  (["anthropic", "deepseek", "openai"] as const).flatMap((dir) =>
    readdirSync(FakeProvider.inRoot(root, dir)).filter((f) => f.endsWith(".sse")).map((f): [Wire, string] => [
      dir === "anthropic" ? "anthropic" : "openai",
      FakeProvider.inRoot(root, `${dir}/${f}`)
    ])
  )
)

const enc = (s: string) => new TextEncoder().encode(s)

const edges: Array<[Wire, string]> = [
  ["openai", `data: {"choices":[{"delta":{"content":"a"}}]}\n\n`], // no [DONE]
  ["openai", `data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]`], // [DONE] at EOF without blank line
  ["openai", `data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\ndata: {"late":1}\n\n`], // bytes after [DONE]
  ["openai", `data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\ndata: {bad json\n\ndata: [DONE]\n\n`],
  ["openai", `data: {"error":{"message":"boom","code":"server_error"}}\n\ndata: [DONE]\n\n`],
  ["openai", `data: {"choices":[{"delta":{"content":"a"}}]}\n\nevent: error\ndata: {"message":"overloaded"}\n\n`],
  ["openai", `: comment\n\ndata: {"choices":[{"delta":{"content":"${"x".repeat(5000)}"}}]}\n\ndata: [DONE]\n\n`], // oversized
  ["openai", ""],
  ["anthropic", `event: ping\ndata: {"type":"ping"}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"o"}}\n\n`]
]

describe("Sse.decodeTranslate ≡ decode + translate (issue 17)", () => {
  it.effect("[P-4] every wire fixture, cut into seeded random reads", () =>
    Effect.gen(function*() {
      for (const [wire, file] of fixtures) {
        const body = readFileSync(file)
        yield* same(wire, body, file.length)
      }
    }))

  it.effect("[P-4] edge bodies: no terminal, EOF terminal, late bytes, malformed JSON, in-band errors, oversized event", () =>
    Effect.gen(function*() {
      const exits = new Set<string>()
      for (const [wire, body] of edges) {
        for (const seed of [1, 7]) exits.add((yield* same(wire, enc(body), seed)).exit)
      }
      // the edges reach the failure paths, not only the happy one
      expect(exits.size).toBeGreaterThan(3)
    }))

  it.effect.prop(
    "[P-4] property: random SSE-ish bodies (data/event/comment/blank lines, CR LF, [DONE]) agree",
    [
      fc.array(
        fc.oneof(
          fc.constantFrom("data: [DONE]", "", "", ": c", "event: error", "data:", "data", "retry: 1", "\r"),
          fc.map(fc.string({ maxLength: 8 }), (t) => `data: {"choices":[{"delta":{"content":${JSON.stringify(t)}}}]}`),
          fc.map(fc.string({ maxLength: 8 }), (t) => `data: {"choices":[{"delta":{"reasoning_content":${JSON.stringify(t)}}}]}`),
          fc.map(fc.nat(3), (i) => `data: {"choices":[{"delta":{"tool_calls":[{"index":${i},"id":"c${i}","function":{"name":"f","arguments":"{}"}}]}}]}`),
          fc.constantFrom(`data: {"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`, "data: {oops")
        ),
        { maxLength: 30 }
      ),
      fc.nat(1000),
      fc.boolean()
    ],
    ([lines, seed, crlf]) => Effect.asVoid(same("openai", enc(lines.join(crlf ? "\r\n" : "\n")), seed)),
    { arbitrary: { runs: 60 } }
  )
})
