/**
 * The ONE contract suite every `LlmAdapter` runs (issue 3, deliverable 6; spec §2 C-1..C-8, §4):
 * the DeepSeek / OpenAI / generic OpenAI-compatible profiles, Anthropic and the scripted adapter.
 *
 * A {@link Harness} tells the suite how to build the adapter under test and how to make its
 * backend produce each provider-neutral {@link Scenario}: for an HTTP adapter a reply of the fake
 * provider (`FakeProvider`, a real `node:http` server on `127.0.0.1:0`) in the provider's own
 * wire format, for the scripted adapter a scripted reply. The suite then checks, on the chunks the
 * adapter really emitted:
 *
 * - C-2: usage (when present) comes after every block chunk and before `finish`; exactly one
 *   `finish`, the last chunk; the stream completes after it (nothing follows finish, not even a
 *   failure);
 * - C-1: indexes are allocated in first-seen order (strictly increasing), every block gets exactly
 *   one `block-end`, nothing for an index follows its `block-end`, and the deltas alone assemble to
 *   the same blocks as the authoritative `block-end`s (the live view equals the final one);
 * - C-3: tool-call arguments are the raw JSON text byte-for-byte (escaped quotes, `\u` escapes,
 *   non-ASCII text, number spelling and spacing that a parse/re-stringify would change), both in
 *   the `block-end` and in the concatenated deltas;
 * - C-4: the two failure paths — the stream fails with a typed `ProviderError` (not a defect), or it
 *   completes with `finish {kind: "error"}` — both surface a canonical code, read by ONE consumer
 *   ({@link failureCode});
 * - E-2 / C-4 / E-6, the in-band provider error matrix (issue 11): rate limit, server, overloaded,
 *   invalid request and an unknown code, each as the first event and mid-stream, map to ONE
 *   canonical vocabulary in every adapter; as the first event the stream fails (typed, no chunk)
 *   and the `Llm` retry policy retries exactly the retryable classes; mid-stream the answer ends
 *   in-band with the partial content kept and the provider's raw code as `providerCode`;
 * - C-5 / E-2 / E-3: HTTP 400 with the provider's overflow message and an in-band overflow are both
 *   `CONTEXT_WINDOW_EXCEEDED`; 401 is `AUTH`; a generic 400 is `INVALID_REQUEST`; the message is
 *   the body's `error.message`;
 * - C-6 / AC-5 (wire only): the attribution `user-agent` reaches the wire on every request and wins
 *   over a deployment header; no provider attribution headers (`http-referer`, `x-title`,
 *   `x-openrouter-*`);
 * - unknown provider events (comments, `ping`, unknown event names, unknown payload fields) are
 *   skipped, never fatal: the result equals the plain text scenario;
 * - C-8 / DEC-1: interrupting the consumer mid-stream ends the stream as interrupted, without a
 *   `finish`; (wire only) stopping early, interrupting mid-body and interrupting before headers all
 *   close the connection promptly — the fake server observes the socket close while its response
 *   is unfinished;
 * - every scenario's chunks, folded by `BlockAssembler.sink`, assemble to the expected blocks,
 *   usage and finish.
 *
 * Each check is an exported function over what was observed (a {@link Run}, recorded requests), so
 * `test/Adapter/Contract.test.ts` also proves every check fails on a deliberately broken adapter.
 *
 * Not applicable checks: a harness lists them in {@link Harness.notApplicable} with the reason (the
 * scripted adapter makes no HTTP request, so attribution and socket closing do not apply, and it
 * has no provider event layer). They are not registered, and the reasons appear in the suite's
 * title. A wire-level check can only be declared not applicable for a scripted backend: an HTTP
 * adapter that declares it, or a scripted harness that omits the reason, gets a failing test.
 *
 * [DECISION] Waiting for the server to see the socket close is bounded (`closeWithin`, default
 * 5 s) so that a leaking adapter fails with a readable message instead of the test timeout; this is
 * a liveness guard, not a speed assertion.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "effect/http/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as HttpEdge from "../../src/Adapter/HttpEdge.js"
import type * as Scripted from "../../src/Adapter/Scripted.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type * as LlmAdapter from "../../src/Llm/LlmAdapter.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as LlmError from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as Retry from "../../src/Llm/Retry.js"
import type * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as FakeProvider from "./FakeProvider.js"

// ---------------------------------------------------------------------------------------------
// Scenarios

/** One tool call of a scenario: the raw argument text is `fragments.join("")`. */
export interface ToolCallSpec {
  readonly id: string
  readonly name: string
  /** the argument text as the provider streams it, in pieces */
  readonly fragments: ReadonlyArray<string>
}

/**
 * A provider-neutral scenario; a harness renders it in its own wire format (or script).
 *
 * - `Text`: a text answer streamed in `pieces`, `usage`, finish stop;
 * - `ToolCalls`: reasoning, text, then the tool calls (in order), `usage`, finish tool-calls;
 * - `InBandError`: `partial` text, then the provider ends the answer with an in-band error (the
 *   harness declares which, and the expected finish, in {@link Harness.inBandError});
 * - `InBandOverflow`: `partial` text, then an in-band context overflow;
 * - `HttpError`: a non-2xx answer with the provider's error body carrying `message`;
 * - `UnknownEvents`: the `Text` scenario with unknown provider events mixed in;
 * - `StallMidStream`: the start of a text answer whose first delta is `first`, then nothing;
 * - `StallBeforeHeaders`: no answer at all (never sends headers).
 */
export type Scenario =
  | {
    readonly _tag: "Text"
    readonly pieces: ReadonlyArray<string>
    readonly usage: Message.TokenUsage
  }
  | {
    readonly _tag: "ToolCalls"
    readonly reasoning: ReadonlyArray<string>
    readonly text: ReadonlyArray<string>
    readonly calls: ReadonlyArray<ToolCallSpec>
    readonly usage: Message.TokenUsage
  }
  | { readonly _tag: "InBandError"; readonly partial: ReadonlyArray<string>; readonly usage: Message.TokenUsage }
  | { readonly _tag: "InBandOverflow"; readonly partial: ReadonlyArray<string>; readonly usage: Message.TokenUsage }
  | { readonly _tag: "HttpError"; readonly status: number; readonly message: string }
  | {
    readonly _tag: "UnknownEvents"
    readonly pieces: ReadonlyArray<string>
    readonly usage: Message.TokenUsage
  }
  | { readonly _tag: "StallMidStream"; readonly first: string }
  | { readonly _tag: "StallBeforeHeaders" }
  | {
    readonly _tag: "ProviderErrorEvent"
    readonly kind: InBandKind
    readonly position: "first" | "mid"
    readonly partial: ReadonlyArray<string>
  }

/**
 * The classes of the in-band error matrix; every harness renders each with its provider's own
 * payload (the unknown class with the raw code `mystery_error`).
 */
export type InBandKind = "rate-limit" | "server" | "overloaded" | "invalid-request" | "unknown"

/** The canonical code (E-2) every adapter must give each class. */
export const inBandCanonical: { readonly [K in InBandKind]: string } = {
  "rate-limit": "RATE_LIMIT",
  server: "SERVER",
  overloaded: "SERVER",
  "invalid-request": "INVALID_REQUEST",
  unknown: "MYSTERY_ERROR"
}

/** Whether the class is retried before the first chunk (E-6). */
export const inBandRetryable: { readonly [K in InBandKind]: boolean } = {
  "rate-limit": true,
  server: true,
  overloaded: true,
  "invalid-request": false,
  unknown: false
}

/** The raw argument text of a tool call. */
export const rawArguments = (call: ToolCallSpec): string => call.fragments.join("")

const usage: Message.TokenUsage = { inputTokens: 12, outputTokens: 5, cacheReadTokens: 256 }

/**
 * Arguments a parse/re-stringify would change: escaped quotes, a `\u00e9` escape, an escaped
 * backslash, non-ASCII text (incl. an astral emoji), `2.50` and `1e3`, spaces after `:`/`,`.
 * Fragments split inside escape sequences, as token boundaries do.
 */
const lookup: ToolCallSpec = {
  id: "call_a1",
  name: "lookup",
  fragments: [
    "{\"q\": \"say \\",
    "\"hi\\\" — é ü 😊 \\u0",
    "0e9 \\\\ end\", ",
    "\"n\": [1, 2.50, 1e3], \"nested\": {\"a\": null}}"
  ]
}

const readFile: ToolCallSpec = { id: "call_b2", name: "read_file", fragments: ["{\"path\":", "\"src/a b.ts\"}"] }

/**
 * The scenarios the suite plays (harnesses may use them to precompute renderings).
 */
export const scenarios = {
  text: { _tag: "Text", pieces: ["Hel", "lo, wö", "rld 😊", "!"], usage },
  toolCalls: {
    _tag: "ToolCalls",
    reasoning: ["Need ", "the file."],
    text: ["Checking", " now."],
    calls: [lookup, readFile],
    usage: { inputTokens: 40, outputTokens: 31, cacheReadTokens: 1024 }
  },
  inBandError: { _tag: "InBandError", partial: ["Partial ", "answer"], usage },
  inBandOverflow: { _tag: "InBandOverflow", partial: ["Almost"], usage },
  auth: { _tag: "HttpError", status: 401, message: "invalid api key" },
  badRequest: { _tag: "HttpError", status: 400, message: "invalid input: temperature exceeds maximum allowed value" },
  unknownEvents: { _tag: "UnknownEvents", pieces: ["Hel", "lo, wö", "rld 😊", "!"], usage },
  stallMidStream: { _tag: "StallMidStream", first: "first" },
  stallBeforeHeaders: { _tag: "StallBeforeHeaders" }
} as const satisfies Record<string, Scenario>

/** The HTTP 400 overflow scenario with the provider's own overflow message. */
export const overflowScenario = (message: string): Scenario => ({ _tag: "HttpError", status: 400, message })

// ---------------------------------------------------------------------------------------------
// Harness

/** An HTTP adapter against the fake provider. */
export interface WireBackend {
  readonly _tag: "Wire"
  /** builds the adapter for `baseUrl`, merging the deployment `headers` (C-6) */
  readonly make: (
    baseUrl: string,
    headers: Readonly<Record<string, string>>
  ) => Effect.Effect<LlmAdapter.LlmAdapter, unknown, HttpClient.HttpClient>
  /** the fake provider's reply for a scenario, in the provider's wire format */
  readonly render: (scenario: Scenario) => FakeProvider.Reply
}

/** A keyless scripted adapter. */
export interface ScriptBackend {
  readonly _tag: "Script"
  readonly make: (script: Scripted.Script) => Effect.Effect<LlmAdapter.LlmAdapter, unknown>
  /** the scripted reply for a scenario */
  readonly render: (scenario: Scenario) => Scripted.Reply
}

/** Checks a harness may declare not applicable (with a reason). */
export type OptionalCheck = "attribution" | "connection-close" | "unknown-events"

const wireOnly: ReadonlyArray<OptionalCheck> = ["attribution", "connection-close"]

/** How to run the contract against one adapter. */
export interface Harness {
  /** the route the adapter serves; requests are sent with it */
  readonly provider: string
  readonly model: string
  readonly backend: WireBackend | ScriptBackend
  /** the finish the `InBandError` scenario must end with (a canonical upper-case code) */
  readonly inBandError: { readonly code: string; readonly message: string; readonly providerCode?: string }
  /** the provider's own context-overflow message, answered with HTTP 400 */
  readonly overflowMessage: string
  /** checks that cannot apply, each with the reason */
  readonly notApplicable?: { readonly [K in OptionalCheck]?: string }
}

/** What the adapter emitted for one request: its chunks, and how the stream ended. */
export interface Run {
  readonly chunks: ReadonlyArray<StreamChunk.StreamChunk>
  readonly exit: Exit.Exit<void, LlmError.LlmError>
}

/** The expected assembled result of a scenario (`usage` absent: not compared). */
export interface Expected {
  readonly blocks: ReadonlyArray<ContentBlock.ContentBlock>
  readonly finish: Message.FinishReason
  readonly usage?: Message.TokenUsage
}

/** The assembled result a scenario must produce (`undefined` for failing/stalling scenarios). */
export const expected = (scenario: Scenario, harness: Pick<Harness, "inBandError">): Expected | undefined => {
  switch (scenario._tag) {
    case "Text":
    case "UnknownEvents":
      return { blocks: [ContentBlock.text(scenario.pieces.join(""))], finish: { kind: "stop" }, usage: scenario.usage }
    case "ToolCalls":
      return {
        blocks: [
          ContentBlock.reasoning(scenario.reasoning.join("")),
          ContentBlock.text(scenario.text.join("")),
          ...scenario.calls.map((c) => ContentBlock.toolCall(c.id, c.name, rawArguments(c)))
        ],
        finish: { kind: "tool-calls" },
        usage: scenario.usage
      }
    case "InBandError":
      return {
        blocks: [ContentBlock.text(scenario.partial.join(""))],
        finish: {
          kind: "error",
          message: harness.inBandError.message,
          code: harness.inBandError.code,
          ...(harness.inBandError.providerCode === undefined ? {} : { providerCode: harness.inBandError.providerCode })
        }
      }
    case "ProviderErrorEvent":
    case "InBandOverflow":
    case "HttpError":
    case "StallMidStream":
    case "StallBeforeHeaders":
      return undefined
  }
}

/** The request every scenario sends. */
export const request = (harness: Pick<Harness, "provider" | "model">): Message.GenerateOptions => ({
  provider: harness.provider,
  model: harness.model,
  messages: [Message.user("hi")]
})

/** An adapter under test and, for HTTP adapters, the fake provider it talks to. */
export interface Rig {
  readonly adapter: LlmAdapter.LlmAdapter
  readonly fake: FakeProvider.FakeProvider | undefined
}

/**
 * Builds the adapter with its backend primed with the scenarios (one per request, in order); an
 * HTTP adapter gets a fresh fake provider (closed with the Scope) and the deployment `headers`.
 */
export const rig = (
  harness: Harness,
  scenarioList: ReadonlyArray<Scenario>,
  headers: Readonly<Record<string, string>> = {}
): Effect.Effect<Rig, unknown, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const backend = harness.backend
    if (backend._tag === "Script") {
      const adapter = yield* backend.make(scenarioList.map(backend.render))
      return { adapter, fake: undefined }
    }
    const fake = yield* FakeProvider.make({ replies: scenarioList.map(backend.render) })
    const adapter = yield* backend.make(fake.url, headers)
    return { adapter, fake }
  })

/** Runs a stream to its end, keeping every chunk emitted before a failure. */
export const collect = (
  stream: Stream.Stream<StreamChunk.StreamChunk, LlmError.LlmError>
): Effect.Effect<Run> =>
  Effect.suspend(() => {
    const chunks: Array<StreamChunk.StreamChunk> = []
    return stream.pipe(
      Stream.runForEach((c) => Effect.sync(() => void chunks.push(c))),
      Effect.exit,
      Effect.map((exit) => ({ chunks, exit }))
    )
  })

/** Folds a run's chunks with `BlockAssembler.sink`. */
export const assemble = (run: Run): Effect.Effect<BlockAssembler.Assembled, LlmError.AssemblyError> =>
  Stream.run(Stream.fromIterable(run.chunks), BlockAssembler.sink)

// ---------------------------------------------------------------------------------------------
// Checks (each throws an assertion error on a violation)

const describeExit = (exit: Exit.Exit<void, LlmError.LlmError>): string =>
  Exit.isSuccess(exit) ? "success" : Cause.pretty(exit.cause)

const indexOf = (c: StreamChunk.StreamChunk): number | undefined =>
  c.type === "usage" || c.type === "finish" ? undefined : c.index

/**
 * C-2: the stream completed; exactly one `finish`, and it is the last chunk; usage chunks come
 * after every block chunk (buffered until the end-of-stream marker) and before `finish`.
 */
export const checkTerminal = (run: Run): void => {
  expect(Exit.isSuccess(run.exit), `[C-2] the stream must complete after finish; it ended with ${describeExit(run.exit)}`)
    .toBe(true)
  const finishes = run.chunks.flatMap((c, i) => (c.type === "finish" ? [i] : []))
  expect(finishes.length, "[C-2] exactly one finish chunk").toBe(1)
  expect(finishes[0], "[C-2] finish is the last chunk (nothing follows finish)").toBe(run.chunks.length - 1)
  let lastBlockChunk = -1
  run.chunks.forEach((c, i) => {
    if (indexOf(c) !== undefined) lastBlockChunk = i
  })
  run.chunks.forEach((c, i) => {
    if (c.type === "usage") {
      expect(i, `[C-2] usage at ${i} must follow every block chunk (last at ${lastBlockChunk})`).toBeGreaterThan(lastBlockChunk)
    }
  })
}

/**
 * C-1: indexes allocated in first-seen order (strictly increasing); exactly one `block-end` per
 * index and nothing for an index after it; the deltas alone assemble to the `block-end` blocks.
 * Meant for streams that completed (every block closed).
 */
export const checkBlocks = (chunks: ReadonlyArray<StreamChunk.StreamChunk>): void => {
  const firstSeen: Array<number> = []
  const ends = new Map<number, ContentBlock.ContentBlock>()
  chunks.forEach((c, position) => {
    const index = indexOf(c)
    if (index === undefined) return
    if (!firstSeen.includes(index)) firstSeen.push(index)
    expect(ends.has(index), `[C-1] chunk ${position} (${c.type}) for index ${index} follows that block's block-end`)
      .toBe(false)
    if (c.type === "block-end") ends.set(index, c.block)
  })
  const ascending = [...firstSeen].sort((a, b) => a - b)
  expect(firstSeen, "[C-1] indexes are allocated in first-seen order").toEqual(ascending)
  for (const index of firstSeen) expect(ends.has(index), `[C-1] block ${index} has a block-end`).toBe(true)
  const live = BlockAssembler.partialBlocks(BlockAssembler.foldAll(chunks.filter((c) => c.type !== "block-end")))
  expect(live, "[C-1] the deltas assemble to the authoritative block-end blocks").toEqual(
    firstSeen.map((i) => ends.get(i))
  )
}

/**
 * C-3: every tool call's `block-end` arguments and concatenated argument deltas are exactly the raw
 * text (compared as strings and as UTF-8 bytes); ids and names as sent; calls in order.
 */
export const checkRawArguments = (
  chunks: ReadonlyArray<StreamChunk.StreamChunk>,
  calls: ReadonlyArray<ToolCallSpec>
): void => {
  const ends = chunks.flatMap((c) => (c.type === "block-end" && c.block.type === "tool-call" ? [c] : []))
  expect(
    ends.map((e) => e.block.type === "tool-call" ? { id: e.block.id, name: e.block.name } : undefined),
    "[C-3] tool calls (id, name) in order"
  ).toEqual(calls.map((c) => ({ id: c.id, name: c.name })))
  ends.forEach((end, k) => {
    const raw = rawArguments(calls[k] as ToolCallSpec)
    const args = end.block.type === "tool-call" ? end.block.arguments : ""
    expect(args, `[C-3] block-end arguments of ${calls[k]?.id} are the raw JSON text`).toBe(raw)
    expect(Buffer.from(args, "utf8").equals(Buffer.from(raw, "utf8")), "[C-3] byte-for-byte").toBe(true)
    const deltas = chunks.flatMap((c) => (c.type === "tool-call-delta" && c.index === end.index ? [c.argumentsDelta] : []))
    expect(deltas.join(""), `[C-3] argument deltas of ${calls[k]?.id} join to the raw JSON text`).toBe(raw)
  })
}

const canonicalCode = /^[A-Z][A-Z0-9_]*$/

/** The ONE consumer of C-4: the failure code of a run on either path (`undefined`: no failure). */
export const failureCode = (run: Run): string | undefined => {
  if (Exit.isFailure(run.exit)) {
    const error = Cause.findErrorOption(run.exit.cause)
    return Option.isSome(error) ? error.value.code : "DEFECT"
  }
  const last = run.chunks.at(-1)
  return last?.type === "finish" && last.reason.kind === "error" ? (last.reason.code ?? "UNKNOWN") : undefined
}

/**
 * C-4 in-band path: the stream completed and its last chunk is `finish {kind: "error"}` with the
 * given canonical (upper-case) code and a non-empty message.
 */
export const checkInBand = (run: Run, code: string): void => {
  expect(Exit.isSuccess(run.exit), `[C-4] an in-band error completes the stream; got ${describeExit(run.exit)}`).toBe(true)
  const last = run.chunks.at(-1)
  expect(last?.type, "[C-4] the last chunk is finish").toBe("finish")
  const reason = last?.type === "finish" ? last.reason : undefined
  expect(reason?.kind, "[C-4] finish kind is error").toBe("error")
  const error = reason?.kind === "error" ? reason : undefined
  expect(error?.code, "[C-4] in-band error code").toBe(code)
  expect(error?.code ?? "", "[C-4] the code is canonical (upper-case)").toMatch(canonicalCode)
  expect(error?.message ?? "", "[C-4] the message is not empty").not.toBe("")
  expect(failureCode(run)).toBe(code)
}

/**
 * C-4 stream-failure path: the stream failed with a typed `ProviderError` (not a defect, not an
 * interruption) of the given canonical code and message, and emitted no chunk (the failure
 * happened before the answer started).
 */
export const checkStreamFailure = (run: Run, code: string, message?: string): void => {
  expect(Exit.isFailure(run.exit), "[C-4] the stream fails").toBe(true)
  const failure = Exit.isFailure(run.exit) ? Cause.findErrorOption(run.exit.cause) : Option.none()
  expect(
    Option.isSome(failure),
    `[C-4] the failure is a typed error in the error channel; got ${describeExit(run.exit)}`
  ).toBe(true)
  const error = Option.getOrUndefined(failure)
  expect(error?._tag, "[C-4] a ProviderError").toBe("ProviderError")
  expect(error?.code, "[C-4] canonical code").toBe(code)
  expect(error?.code ?? "", "[C-4] the code is canonical (upper-case)").toMatch(canonicalCode)
  if (message !== undefined) expect(error?.message, "[E-3] message = the body's error.message").toBe(message)
  expect(run.chunks, "[C-4] no chunk before an HTTP failure").toEqual([])
  expect(failureCode(run)).toBe(code)
}

/** The assembled result equals the expectation (blocks, finish, and usage when given). */
export const checkAssembled = (assembled: BlockAssembler.Assembled, want: Expected): void => {
  expect(assembled.blocks, "assembled blocks").toEqual(want.blocks)
  expect(assembled.finish, "assembled finish").toEqual(want.finish)
  if (want.usage !== undefined) expect(assembled.usage, "assembled usage").toEqual(want.usage)
}

const attributionPattern = /^[A-Za-z0-9][\w.-]*\/\d+\.\d+\.\d+\S* \(\+https?:\/\/\S+\)$/

/**
 * C-6 / AC-5: every recorded request carries exactly the attribution `user-agent` (of the form
 * `<product>/<version> (+<url>)`) and no provider attribution header.
 */
export const checkAttribution = (
  requests: ReadonlyArray<FakeProvider.RecordedRequest>,
  userAgent: string = HttpEdge.userAgent
): void => {
  expect(requests.length, "[C-6] at least one request reached the wire").toBeGreaterThan(0)
  for (const r of requests) {
    expect(r.headers["user-agent"], `[C-6] user-agent of ${r.method} ${r.path}`).toBe(userAgent)
    expect(r.headers["user-agent"] ?? "", "[C-6] <product>/<version> (+<url>)").toMatch(attributionPattern)
    const names = Object.keys(r.headers)
    const forbidden = names.filter((n) =>
      n === "http-referer" || n === "referer" || n === "x-title" || n.startsWith("x-openrouter-")
    )
    expect(forbidden, "[C-6] no provider attribution headers").toEqual([])
  }
}

/**
 * C-8: waits (bounded by `within`) until the server saw request `i`'s connection close, and
 * checks that the response was still unfinished (the client went away).
 */
export const checkClosed = (
  fake: FakeProvider.FakeProvider,
  i: number,
  within: Duration.Input = "5 seconds"
): Effect.Effect<void> =>
  fake.awaitClose(i).pipe(
    Effect.timeoutOrElse({
      duration: within,
      orElse: () =>
        Effect.fail(
          new Error(`[C-8] the server did not see request ${i}'s connection close within ${Duration.format(Duration.fromInputUnsafe(within))}`)
        )
    }),
    Effect.orDie,
    Effect.map((closed) => void expect(closed, `[C-8] request ${i} closed while its response was unfinished`).toEqual({ early: true }))
  )

/**
 * Interrupts a fiber and returns its exit (Effect 4's `Fiber.interrupt` returns nothing).
 */
export const interruptExit = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<Exit.Exit<A, E>> =>
  Effect.andThen(Fiber.interrupt(fiber), Fiber.await(fiber))

/** C-8 / DEC-1: the consumer was interrupted, and no `finish` was emitted. */
export const checkInterrupted = (run: Run): void => {
  expect(Exit.hasInterrupts(run.exit), `[C-8] the consumer ends interrupted; got ${describeExit(run.exit)}`).toBe(true)
  expect(run.chunks.some((c) => c.type === "finish"), "[C-8] no finish before the interruption").toBe(false)
}

/**
 * Runs the stream in a fiber until its first `text-delta`, then interrupts the fiber; returns what
 * was emitted and the fiber's exit.
 */
export const interruptAfterFirstDelta = (
  stream: Stream.Stream<StreamChunk.StreamChunk, LlmError.LlmError>
): Effect.Effect<Run> =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const chunks: Array<StreamChunk.StreamChunk> = []
    const fiber = yield* stream.pipe(
      Stream.runForEach((c) =>
        Effect.sync(() => void chunks.push(c)).pipe(
          Effect.andThen(c.type === "text-delta" ? Deferred.succeed(started, undefined) : Effect.void)
        )
      ),
      Effect.ensuring(Deferred.succeed(started, undefined)),
      Effect.forkChild
    )
    yield* Deferred.await(started)
    const exit = yield* interruptExit(fiber)
    return { chunks, exit }
  })

// ---------------------------------------------------------------------------------------------
// The suite

/**
 * What is wrong with a harness's not-applicable declarations, if anything: an HTTP adapter must
 * run every wire-level check (C-6: each adapter proves the header reaches the wire); a scripted
 * backend cannot run them and must say why.
 */
export const declarationProblem = (harness: Harness): string | undefined => {
  const notApplicable = harness.notApplicable ?? {}
  const reason = (k: OptionalCheck) => {
    const r = notApplicable[k]
    return r === undefined || r.trim() === "" ? undefined : r
  }
  if (harness.backend._tag === "Wire") {
    const declared = wireOnly.filter((k) => notApplicable[k] !== undefined)
    return declared.length === 0 ? undefined : `an HTTP adapter must run ${declared.join(", ")} (C-6, C-8)`
  }
  const missing = wireOnly.filter((k) => reason(k) === undefined)
  return missing.length === 0
    ? undefined
    : `a scripted backend cannot run ${missing.join(", ")}: declare them not applicable with a reason`
}

const live = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient | Scope.Scope>) =>
  effect.pipe(Effect.provide(NodeHttpClient.layerUndici))

/**
 * Registers the contract suite for one adapter.
 *
 * @example
 * adapterContract("Anthropic", anthropicHarness)
 */
export const adapterContract = (name: string, harness: Harness): void => {
  const notApplicable = harness.notApplicable ?? {}
  const declared = (Object.keys(notApplicable) as Array<OptionalCheck>).filter((k) => notApplicable[k] !== undefined)
  const isWire = harness.backend._tag === "Wire"
  const runs = (check: OptionalCheck) => notApplicable[check] === undefined || (isWire && wireOnly.includes(check))
  const title = declared.length === 0
    ? `adapter contract: ${name}`
    : `adapter contract: ${name} (not applicable: ${declared.map((k) => `${k} — ${notApplicable[k]}`).join("; ")})`
  const req = request(harness)

  const play = (scenario: Scenario) =>
    Effect.gen(function*() {
      const { adapter } = yield* rig(harness, [scenario])
      return yield* collect(adapter.stream(req))
    })

  describe(title, () => {
    const problem = declarationProblem(harness)
    if (problem !== undefined) {
      it("declares exactly the wire-level checks it cannot run", () => {
        expect.fail(problem)
      })
    }

    const successful: ReadonlyArray<[string, Scenario]> = [
      ["text", scenarios.text],
      ["tool calls", scenarios.toolCalls],
      ["in-band error", scenarios.inBandError],
      ["in-band overflow", scenarios.inBandOverflow],
      ...(runs("unknown-events") ? [["unknown events", scenarios.unknownEvents] as [string, Scenario]] : [])
    ]

    it.live(
      `[C-2] usage (when present) follows the blocks and precedes finish; one finish, last; nothing after it (${
        successful.map(([n]) => n).join(", ")
      })`,
      () =>
        live(Effect.gen(function*() {
          for (const [label, scenario] of successful) {
            const run = yield* play(scenario)
            checkTerminal(run)
            if (scenario._tag !== "InBandOverflow" && scenario._tag !== "InBandError") {
              expect(run.chunks.filter((c) => c.type === "usage"), `${label}: one usage chunk`).toHaveLength(1)
            }
          }
        }))
    )

    it.live(
      "[C-1] indexes in first-seen order, one authoritative block-end per block, deltas agree with it (every successful scenario)",
      () =>
        live(Effect.gen(function*() {
          for (const [, scenario] of successful) checkBlocks((yield* play(scenario)).chunks)
        }))
    )

    it.live(
      "[C-3] tool-call arguments are the raw JSON text byte-for-byte (escaped quotes, \\u escapes, unicode, number spelling)",
      () =>
        live(Effect.gen(function*() {
          const run = yield* play(scenarios.toolCalls)
          checkTerminal(run)
          checkRawArguments(run.chunks, scenarios.toolCalls.calls)
        }))
    )

    it.live(
      "[A-1..A-9] every scenario assembled through BlockAssembler.sink matches its expectation",
      () =>
        live(Effect.gen(function*() {
          for (const [label, scenario] of successful) {
            const run = yield* play(scenario)
            const assembled = yield* assemble(run)
            const want = expected(scenario, harness)
            if (want !== undefined) checkAssembled(assembled, want)
            else {
              // in-band overflow: the partial text, then the overflow finish
              expect(assembled.blocks, label).toEqual([ContentBlock.text(scenarios.inBandOverflow.partial.join(""))])
              expect(assembled.finish.kind, label).toBe("error")
            }
          }
        }))
    )

    it.live(
      `[C-4] in-band failure: the stream completes with finish {kind: "error", code: ${harness.inBandError.code}}, partial content kept`,
      () =>
        live(Effect.gen(function*() {
          const run = yield* play(scenarios.inBandError)
          checkInBand(run, harness.inBandError.code)
          checkTerminal(run)
          const assembled = yield* assemble(run)
          expect(assembled.blocks).toEqual([ContentBlock.text(scenarios.inBandError.partial.join(""))])
        }))
    )

    it.live(
      "[C-4, E-2, E-3] stream failure: 401 → typed ProviderError AUTH, generic 400 → INVALID_REQUEST, message from the body, no chunk",
      () =>
        live(Effect.gen(function*() {
          checkStreamFailure(yield* play(scenarios.auth), "AUTH", scenarios.auth.message)
          checkStreamFailure(yield* play(scenarios.badRequest), "INVALID_REQUEST", scenarios.badRequest.message)
        }))
    )

    it.live(
      "[C-5, E-4] context overflow is CONTEXT_WINDOW_EXCEEDED on both paths (HTTP 400 and in-band), read by one consumer",
      () =>
        live(Effect.gen(function*() {
          const http = yield* play(overflowScenario(harness.overflowMessage))
          checkStreamFailure(http, "CONTEXT_WINDOW_EXCEEDED", harness.overflowMessage)
          const inBand = yield* play(scenarios.inBandOverflow)
          checkInBand(inBand, "CONTEXT_WINDOW_EXCEEDED")
          expect([failureCode(http), failureCode(inBand)]).toEqual(["CONTEXT_WINDOW_EXCEEDED", "CONTEXT_WINDOW_EXCEEDED"])
        }))
    )

    it.live(
      "[E-2, C-4, E-6] in-band provider error matrix (rate limit, server, overloaded, invalid request, unknown code) x (first event, mid-stream): one canonical vocabulary, the same retry decision",
      () =>
        live(Effect.gen(function*() {
          const kinds = Object.keys(inBandCanonical) as Array<InBandKind>
          for (const kind of kinds) {
            const code = inBandCanonical[kind]
            const first: Scenario = { _tag: "ProviderErrorEvent", kind, position: "first", partial: ["Par", "tial"] }
            const mid: Scenario = { ...first, position: "mid" }
            // first event: a typed stream failure, no chunk, the raw code kept
            const failed = yield* play(first)
            checkStreamFailure(failed, code)
            const error = Exit.isFailure(failed.exit) ? Option.getOrUndefined(Cause.findErrorOption(failed.exit.cause)) : undefined
            expect(error !== undefined && LlmError.isRetryable(error), `${kind}: retryable before the first chunk`).toBe(inBandRetryable[kind])
            expect(error?._tag === "ProviderError" ? error.providerCode : undefined, `${kind}: raw provider code kept`).toBeDefined()
            // through the Llm service: retried exactly when retryable (the next reply is a text answer)
            const { adapter, fake } = yield* rig(harness, [first, scenarios.text])
            const llm = yield* Llm.make
            yield* llm.register([harness.provider], adapter)
            const viaLlm = yield* collect(
              llm.stream(req).pipe(
                Stream.provideService(Retry.Policy, Result.getOrThrow(Retry.policy({ maxAttempts: 2, baseDelay: "1 millis", jitter: 0 }))),
                Stream.catch((e) => e._tag === "MiddlewareError" ? Stream.die(e) : Stream.fail(e))
              )
            )
            expect(Exit.isSuccess(viaLlm.exit), `${kind}: the Llm retried it`).toBe(inBandRetryable[kind])
            if (!inBandRetryable[kind]) expect(failureCode(viaLlm), `${kind}: final code via Llm`).toBe(code)
            if (fake !== undefined) expect((yield* fake.requests).length, `${kind}: requests`).toBe(inBandRetryable[kind] ? 2 : 1)
            // mid-stream: in-band finish error, partial content kept
            const ended = yield* play(mid)
            checkInBand(ended, code)
            checkTerminal(ended)
            const last = ended.chunks.at(-1)
            expect(last?.type === "finish" && last.reason.kind === "error" ? last.reason.providerCode : undefined, `${kind}: providerCode`).toBeDefined()
            expect((yield* assemble(ended)).blocks).toEqual([ContentBlock.text("Partial")])
          }
        }))
    )

    if (isWire && runs("attribution")) {
      it.live(
        "AC-5 [C-6] the attribution user-agent is on the wire of every request, wins over a deployment header; no provider attribution headers",
        () =>
          live(Effect.gen(function*() {
            const { adapter, fake } = yield* rig(
              harness,
              [scenarios.text, scenarios.auth],
              { "User-Agent": "curl/8.0", "X-Deployment": "d1" }
            )
            checkTerminal(yield* collect(adapter.stream(req)))
            checkStreamFailure(yield* collect(adapter.stream(req)), "AUTH")
            const requests = yield* (fake as FakeProvider.FakeProvider).requests
            expect(requests).toHaveLength(2)
            checkAttribution(requests)
            expect(requests.map((r) => r.headers["x-deployment"]), "deployment headers are merged").toEqual(["d1", "d1"])
          }))
      )
    }

    if (runs("unknown-events")) {
      it.live("[P-4, DEC-5] unknown provider events are skipped, not fatal: the result equals the plain text answer", () =>
        live(Effect.gen(function*() {
          const run = yield* play(scenarios.unknownEvents)
          checkTerminal(run)
          checkBlocks(run.chunks)
          const plain = yield* play(scenarios.text)
          expect(yield* assemble(run)).toEqual(yield* assemble(plain))
        })))
    }

    it.live("[C-8, DEC-1] interrupting the consumer mid-stream ends the stream interrupted, without a finish", () =>
      live(Effect.gen(function*() {
        const { adapter } = yield* rig(harness, [scenarios.stallMidStream])
        const run = yield* interruptAfterFirstDelta(adapter.stream(req))
        expect(run.chunks.filter((c) => c.type === "text-delta")).toHaveLength(1)
        checkInterrupted(run)
      })))

    if (isWire && runs("connection-close")) {
      it.live(
        "[C-8, DEC-1] stopping early, interrupting mid-body and interrupting before headers close the connection (the server sees it)",
        () =>
          live(Effect.gen(function*() {
            const { adapter, fake } = yield* rig(
              harness,
              [scenarios.stallMidStream, scenarios.stallMidStream, scenarios.stallBeforeHeaders]
            )
            const server = fake as FakeProvider.FakeProvider
            // the consumer stops after the first delta: the stream ends normally, the socket closes
            const taken = yield* collect(adapter.stream(req).pipe(Stream.takeUntil((c) => c.type === "text-delta")))
            expect(Exit.isSuccess(taken.exit)).toBe(true)
            expect(taken.chunks.at(-1)).toMatchObject({ type: "text-delta", text: scenarios.stallMidStream.first })
            yield* checkClosed(server, 0)
            // the consumer is interrupted mid-body
            checkInterrupted(yield* interruptAfterFirstDelta(adapter.stream(req)))
            yield* checkClosed(server, 1)
            // interrupted while waiting for the response headers
            const fiber = yield* Effect.forkChild(collect(adapter.stream(req)))
            yield* server.awaitRequests(3)
            expect(Exit.hasInterrupts(yield* interruptExit(fiber))).toBe(true)
            yield* checkClosed(server, 2)
          }))
      )
    }
  })
}
