// vitest project: integration
/**
 * Every fixture listed in a wire folder's `INDEX.md` (the project's corpus `test/fixtures/wire/`, and the
 * captures `../shared/fixtures/wire/` when present), replayed by the fake provider (body in seeded random pieces) through the REAL adapter over `NodeHttpClient.layerUndici` and the real
 * `BlockAssembler.sink`, checked against its `.expected.json`.
 *
 * Why undici: it is `@effect/platform-node`'s native client (the CLI's), and aborting a request
 * closes the socket at once, which the cancellation tests observe on the server side. (AC-5 is
 * also checked over `FetchHttpClient` in `HttpEdge.test.ts`.)
 *
 * Normalisations (the spec wins over the generic expected files, see INDEX.md):
 * - an adapter stream failure is folded as if it were `finish {kind: "error", code}` (C-4: both
 *   paths are handled identically); which path each case takes is asserted too;
 * - an unknown finish reason has code `<REASON>` upper-cased and message `model stopped: <reason>`
 *   (P-7), where the expected files say `<reason>` and `finish_reason=<reason>`;
 * - Anthropic `error` events get canonical codes (`overloaded_error` → `SERVER`); Anthropic
 *   server-tool blocks (`provider-block`) are not content blocks (kept in the replay state);
 * - an Anthropic thinking signature / redacted `data` is checked in the finish chunk's replay state;
 * - usage: expected `null` → field absent; expected 0 for a cache field the wire did not report
 *   matches an absent field (V-6: unknown is absent, not 0).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import type * as LlmAdapter from "../../src/Llm/LlmAdapter.js"
import * as LlmError from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as FakeProvider from "../support/FakeProvider.js"

const roots = FakeProvider.wireRoots("the captured-stream differential replays")

const namesIn = (root: FakeProvider.WireRoot): ReadonlyArray<string> =>
  [...readFileSync(FakeProvider.inRoot(root, "INDEX.md"), "utf8").matchAll(/^#### `([^`]+)`/gm)].map((m) => m[1] as string)

const genericServers = /openrouter|groq|vllm|gateway|relay|azure/

interface Expected {
  readonly blocks?: ReadonlyArray<Record<string, unknown>>
  readonly usage?: Record<string, number | null> | null
  readonly finish?: { readonly reason: string; readonly code?: string | number; readonly message?: string; readonly raw?: string }
  readonly status?: number
  readonly category?: string
  readonly retryable?: boolean
  readonly retryAfterMs?: number | null
  readonly message?: string
}

const categoryCodes: Record<string, string> = {
  auth: "AUTH",
  "rate-limit": "RATE_LIMIT",
  server: "SERVER",
  overloaded: "SERVER",
  "context-length-exceeded": "CONTEXT_WINDOW_EXCEEDED",
  "invalid-request": "INVALID_REQUEST",
  quota: "HTTP_402"
}

/** in-band provider codes of the fixtures → the one canonical vocabulary (E-2, issue 11) */
const inBandCodes: Record<string, string> = { overloaded_error: "SERVER", "400": "INVALID_REQUEST", tool_use_failed: "INVALID_REQUEST" }

const seedOf = (name: string) => [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7)

const adapterFor = (name: string, url: string) =>
  name.startsWith("anthropic/")
    ? Anthropic.make({ apiKey: Redacted.make("sk-ant-test"), baseUrl: url })
    : OpenAiCompatible.make({
      profile: name.startsWith("deepseek/") ? "deepseek" : genericServers.test(name) ? "generic" : "openai",
      apiKey: Redacted.make("sk-test"),
      baseUrl: url
    })

const requestFor = (adapter: LlmAdapter.LlmAdapter): Message.GenerateOptions => ({
  provider: adapter.providers[0]?.id ?? "",
  model: "fixture-model",
  messages: [Message.user("hi")]
})

/** Runs a stream through the assembler; a failure becomes a final `finish error` (C-4). */
const outcome = (stream: Stream.Stream<import("../../src/Llm/StreamChunk.js").StreamChunk, LlmError.LlmError>) =>
  Effect.gen(function*() {
    const failure = yield* Ref.make<LlmError.LlmError | undefined>(undefined)
    const assembled = yield* stream.pipe(
      Stream.catch((error) => Stream.drain(Stream.fromEffect(Ref.set(failure, error)))),
      Stream.run(BlockAssembler.sink)
    )
    return { assembled, failure: yield* Ref.get(failure) }
  })

const replayBlocks = (state: unknown): Array<Record<string, unknown>> => {
  const parsed = Anthropic.parseReplayState(state)
  return parsed === undefined ? [] : parsed.blocks.filter((b) => b.type !== "native") as Array<Record<string, unknown>>
}

const checkUsage = (name: string, expected: Expected["usage"], actual: Message.TokenUsage | undefined) => {
  if (expected === null || expected === undefined) {
    expect(actual, `${name}: usage`).toBeUndefined()
    return
  }
  expect(actual, `${name}: usage`).toBeDefined()
  const u = actual as Message.TokenUsage
  expect(u.inputTokens).toBe(expected["input"])
  expect(u.outputTokens).toBe(expected["output"])
  const optional: Array<[string, number | undefined]> = [
    ["cacheRead", u.cacheReadTokens],
    ["cacheWrite", u.cacheWriteTokens],
    ["reasoning", u.reasoningTokens]
  ]
  for (const [key, value] of optional) {
    const want = expected[key]
    if (want === null || want === undefined) expect(value, `${name}: ${key}`).toBeUndefined()
    else if (want === 0) expect(value ?? 0, `${name}: ${key}`).toBe(0)
    else expect(value, `${name}: ${key}`).toBe(want)
  }
}

const replaySse = (root: FakeProvider.WireRoot, name: string, expected: Expected) =>
  Effect.gen(function*() {
    const fake = yield* FakeProvider.make({
      replies: [FakeProvider.sseFile(FakeProvider.inRoot(root, name), { seed: seedOf(name), maxPiece: 48 })]
    })
    const adapter = yield* adapterFor(name, fake.url)
    const { assembled, failure } = yield* outcome(adapter.stream(requestFor(adapter)))

    // blocks
    const expectedBlocks = (expected.blocks ?? []).filter((b) => b["type"] !== "provider-block")
    const wanted = expectedBlocks.map((b) =>
      b["type"] === "tool-call"
        ? { type: "tool-call", id: b["id"], name: b["name"], arguments: b["argumentsNormalized"] ?? b["arguments"] }
        : { type: b["type"], text: b["text"] }
    )
    expect(assembled.blocks, `${name}: blocks`).toEqual(wanted)

    // signatures and redacted data travel in the replay state (C-7)
    if (name.startsWith("anthropic/") && failure === undefined && assembled.finish.kind !== "error") {
      const replay = replayBlocks(assembled.replayState)
      expect(replay.length, `${name}: replay blocks`).toBe(expectedBlocks.length)
      expectedBlocks.forEach((b, i) => {
        if (b["redacted"] === true) expect(replay[i]).toEqual({ type: "redacted_thinking", data: b["data"] })
        else if (typeof b["signature"] === "string") expect(replay[i]).toEqual({ type: "thinking", signature: b["signature"] })
      })
    }

    checkUsage(name, expected.usage, assembled.usage)

    // finish
    const finish = expected.finish
    if (finish === undefined) throw new Error(`${name}: expected file without finish`)
    if (finish.reason !== "error") {
      expect(failure, `${name}: failure`).toBeUndefined()
      expect(assembled.finish, `${name}: finish`).toEqual({ kind: finish.reason })
      return
    }
    if (finish.code === "STREAM_CLOSED" || finish.code === "MALFORMED_RESPONSE") {
      expect(failure?._tag, `${name}: failure path`).toBe("ProviderError")
      expect(failure?.code).toBe(finish.code)
      expect(failure?.message).toBe(finish.message)
      return
    }
    if (finish.raw !== undefined) {
      expect(failure, `${name}: in-band`).toBeUndefined()
      expect(assembled.finish).toEqual({
        kind: "error",
        message: `model stopped: ${finish.raw}`,
        code: finish.raw.toUpperCase()
      })
      return
    }
    const code = inBandCodes[String(finish.code)]
    const providerCode = String(finish.code)
    if (name.startsWith("anthropic/")) {
      if (assembled.blocks.length === 0) {
        expect(failure?.code, `${name}: failure before the first chunk`).toBe(code)
        expect(failure?.message).toBe(finish.message)
        expect(failure !== undefined && LlmError.isRetryable(failure)).toBe(true)
      } else {
        expect(failure).toBeUndefined()
        expect(assembled.finish).toEqual({ kind: "error", message: finish.message, code, providerCode })
      }
      return
    }
    expect(failure, `${name}: in-band`).toBeUndefined()
    expect(assembled.finish).toEqual({ kind: "error", message: finish.message, code, providerCode })
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))

const replayHttp = (root: FakeProvider.WireRoot, name: string, expected: Expected) =>
  Effect.gen(function*() {
    const fake = yield* FakeProvider.make({ replies: [FakeProvider.httpFile(FakeProvider.inRoot(root, name))] })
    const adapter = yield* adapterFor(name, fake.url)
    const { assembled, failure } = yield* outcome(adapter.stream(requestFor(adapter)))
    expect(assembled.blocks).toEqual([])
    expect(failure?._tag, `${name}: failure`).toBe("ProviderError")
    const error = failure as LlmError.ProviderError
    expect(error.code, `${name}: code`).toBe(categoryCodes[expected.category ?? ""])
    expect(error.status).toBe(expected.status)
    expect(error.retryAfterMillis).toBe(expected.retryAfterMs ?? undefined)
    expect(LlmError.isRetryable(error), `${name}: retryable`).toBe(expected.retryable)
    if (expected.message !== undefined) expect(error.message).toBe(expected.message)
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))

/** fixtures per folder: the corpus's are counted so a lost file fails; the captures are 46 */
const counts: Record<string, number> = { corpus: 18, captures: 46 }

for (const root of roots) {
  describe(`wire fixtures (${root.label}: ${root.dir})`, () => {
    const names = namesIn(root)

    it("INDEX.md lists every stream and error fixture in the folder", () => {
      const files = ["deepseek", "openai", "anthropic"].flatMap((dir) =>
        readdirSync(FakeProvider.inRoot(root, dir))
          .filter((f) => f.endsWith(".sse") || f.endsWith(".http"))
          .map((f) => `${dir}/${f}`)
      )
      expect([...names].sort()).toEqual(files.sort())
      expect(names.length).toBe(counts[root.label])
    })

    for (const name of names) {
      const expected = JSON.parse(
        readFileSync(FakeProvider.inRoot(root, name.replace(/\.(sse|http)$/, ".expected.json")), "utf8")
      ) as Expected
      it.live(`fixture ${name}`, () => name.endsWith(".sse") ? replaySse(root, name, expected) : replayHttp(root, name, expected))
    }
  })
}
