/**
 * The keyless scripted adapter (DEC-5): plays one scripted response per call, records every
 * request it receives, and fails loudly (`ProviderError` code `SCRIPT_EXHAUSTED`) when called more
 * often than scripted. Tests across the project and the CLI's offline demo use it.
 *
 * A response ({@link Response}) is a list of {@link Item}s, or a function of the request returning
 * one (so a demo can answer from tool results). Items are raw chunks or a compact high-level form
 * that expands exactly like the acceptance-case helpers of spec §12:
 *
 * - `say(s)` / `think(s)`: block-start, one delta per character (code point), block-end;
 * - `toolCall(id, name, args)`: block-start, two deltas splitting the argument JSON (the first
 *   carries the name), block-end with the complete block;
 * - `usage(input, output)`, `finish(reason)`, raw `chunk(...)`;
 * - `fail(code, message)`: the stream fails with a `ProviderError` at that point (before or after
 *   some chunks);
 * - `delay(duration)`: waits (TestClock-friendly) before the next item;
 * - `forever`: waits until interrupted.
 *
 * High-level blocks get consecutive indexes after the highest index used so far in the response.
 * Whole-response helpers match spec §12: {@link text} (`say`, usage `{10, length}`, finish stop),
 * {@link call} (`toolCall`, usage, finish tool-calls) and {@link hang} (one chunk, then forever).
 *
 * ```ts
 * const layer = Scripted.layer([
 *   Scripted.call("c1", "echo", '{"text":"ping"}'),
 *   (request) => Scripted.text(`I saw ${request.messages.length} messages`)
 * ])
 * ```
 *
 * Script files (the CLI's `--provider scripted --script <file>`) are JSON, decoded with
 * {@link ScriptFile}:
 *
 * ```json
 * { "provider": "scripted", "model": "demo",
 *   "responses": [
 *     { "text": "Hello!" },
 *     { "call": { "id": "c1", "name": "read", "arguments": "{\"path\":\"README.md\"}" } },
 *     [ { "reasoning": "thinking…" }, { "text": "partial" }, { "delayMs": 50 },
 *       { "toolCall": { "id": "c2", "name": "ls", "arguments": "{}" } },
 *       { "usage": { "inputTokens": 10, "outputTokens": 5 } }, { "finish": { "kind": "tool-calls" } } ],
 *     [ { "text": "Hel" }, { "fail": { "code": "SERVER", "message": "overloaded" } } ],
 *     [ { "chunk": { "type": "text-delta", "index": 0, "text": "raw" } }, { "hang": true } ]
 *   ] }
 * ```
 *
 * A response is either an object shorthand for a whole response (`{"text"}` or `{"call"}`, as
 * {@link text} and {@link call}) or an array of items. Items: `{"text"}`, `{"reasoning"}`,
 * `{"toolCall": {id, name, arguments}}`, `{"usage": TokenUsage}`,
 * `{"finish": FinishReason, "replayState"?}`, `{"fail": {code, message?, status?, retryAfterMillis?}}`,
 * `{"delayMs"}`, `{"hang": true}`, `{"chunk": StreamChunk}`. Unknown keys are rejected.
 *
 * Decisions (DEC-10): requests are recorded (and a response consumed) when the stream starts
 * running, so a retried attempt consumes the next response; a responder function receives the
 * request and the 0-based call number; `fail` codes are free-form (e.g. `RATE_LIMIT` is retried by
 * the `Llm` service, `SCRIPT_EXHAUSTED` is not).
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import * as Llm from "../Llm/Llm.js"
import { Adapter, type LlmAdapter } from "../Llm/LlmAdapter.js"
import { type LlmError, ProviderError, type RegistryError, toCode } from "../Llm/LlmError.js"
import * as Message from "../Llm/Message.js"
import * as StreamChunk from "../Llm/StreamChunk.js"

// ---------------------------------------------------------------------------------------------
// Script model

/**
 * One element of a scripted response.
 *
 * @since 0.1.0
 * @category models
 */
export type Item =
  | { readonly _tag: "Chunks"; readonly chunks: ReadonlyArray<StreamChunk.StreamChunk> }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Reasoning"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly id: string; readonly name: string; readonly arguments: string }
  | { readonly _tag: "Usage"; readonly usage: Message.TokenUsage }
  | { readonly _tag: "Finish"; readonly reason: Message.FinishReason; readonly replayState?: Json.Json }
  | { readonly _tag: "Fail"; readonly error: ProviderError }
  | { readonly _tag: "Delay"; readonly duration: Duration.Duration }
  | { readonly _tag: "Hang" }

/**
 * A fixed response: items played in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = ReadonlyArray<Item>

/**
 * A response computed from the request (`call` is 0-based).
 *
 * @since 0.1.0
 * @category models
 */
export type Responder = (
  request: Message.GenerateOptions,
  call: number
) => Reply | Effect.Effect<Reply, ProviderError>

/**
 * One scripted response.
 *
 * @since 0.1.0
 * @category models
 */
export type Response = Reply | Responder

/**
 * The whole script: one response per call, in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Script = ReadonlyArray<Response>

/**
 * Raw chunks, emitted as they are.
 *
 * @since 0.1.0
 * @category items
 */
export const chunk = (...chunks: ReadonlyArray<StreamChunk.StreamChunk>): Item => ({ _tag: "Chunks", chunks })

/**
 * A text block: block-start, one delta per character, block-end.
 *
 * @since 0.1.0
 * @category items
 */
export const say = (text: string): Item => ({ _tag: "Text", text })

/**
 * A reasoning block: block-start, one delta per character, block-end.
 *
 * @since 0.1.0
 * @category items
 */
export const think = (text: string): Item => ({ _tag: "Reasoning", text })

/**
 * A tool-call block: block-start, two deltas splitting `args` (the first carries the name),
 * block-end with the complete block.
 *
 * @since 0.1.0
 * @category items
 */
export const toolCall = (id: string, name: string, args: string): Item => ({ _tag: "ToolCall", id, name, arguments: args })

/**
 * A usage chunk.
 *
 * @since 0.1.0
 * @category items
 */
export const usage = (
  inputTokens: number,
  outputTokens: number,
  extra: Omit<Message.TokenUsage, "inputTokens" | "outputTokens"> = {}
): Item => ({ _tag: "Usage", usage: { inputTokens, outputTokens, ...extra } })

/**
 * A finish chunk; a kind string is shorthand for `{kind}`.
 *
 * @since 0.1.0
 * @category items
 */
export const finish = (
  reason: Message.FinishReason | "stop" | "tool-calls" | "max-tokens" | "aborted",
  replayState?: Json.Json
): Item => {
  const r: Message.FinishReason = typeof reason === "string" ? { kind: reason } : reason
  return replayState === undefined ? { _tag: "Finish", reason: r } : { _tag: "Finish", reason: r, replayState }
}

/**
 * The stream fails here with a `ProviderError` of `code` (read by `LlmError.toCode`: a canonical
 * code as itself, any other string upper-cased as the provider-code fallback).
 *
 * @since 0.1.0
 * @category items
 */
export const fail = (
  code: string,
  message = `scripted failure ${code}`,
  extra: { readonly status?: number; readonly retryAfterMillis?: number } = {}
): Item => ({ _tag: "Fail", error: new ProviderError({ code: toCode(code), message, ...extra }) })

/**
 * The stream fails here with the given error.
 *
 * @since 0.1.0
 * @category items
 */
export const failWith = (error: ProviderError): Item => ({ _tag: "Fail", error })

/**
 * Waits before the next item.
 *
 * @since 0.1.0
 * @category items
 */
export const delay = (duration: Duration.Input): Item => ({ _tag: "Delay", duration: Duration.fromInputUnsafe(duration) })

/**
 * Waits until interrupted.
 *
 * @since 0.1.0
 * @category items
 */
export const forever: Item = { _tag: "Hang" }

/**
 * Spec §12 `text(s)`: a text block, usage `{10, length}` (length in code points), finish stop.
 *
 * @since 0.1.0
 * @category responses
 */
export const text = (s: string): Reply => [say(s), usage(10, Array.from(s).length), finish("stop")]

/**
 * Spec §12 `call(id, name, args)`: a tool-call block, usage `{10, length of args}`, finish tool-calls.
 *
 * @since 0.1.0
 * @category responses
 */
export const call = (id: string, name: string, args: string): Reply => [
  toolCall(id, name, args),
  usage(10, Array.from(args).length),
  finish("tool-calls")
]

/**
 * Spec §12 `hang`: the given items (default: one `block-start` of a text block), then wait until
 * interrupted.
 *
 * @since 0.1.0
 * @category responses
 */
export const hang = (...before: ReadonlyArray<Item>): Reply => [
  ...(before.length === 0 ? [chunk(StreamChunk.blockStart(0, "text"))] : before),
  forever
]

// ---------------------------------------------------------------------------------------------
// Expansion

type Segment =
  | { readonly _tag: "Chunks"; readonly chunks: ReadonlyArray<StreamChunk.StreamChunk> }
  | { readonly _tag: "Fail"; readonly error: ProviderError }
  | { readonly _tag: "Delay"; readonly duration: Duration.Duration }
  | { readonly _tag: "Hang" }

const indexOf = (c: StreamChunk.StreamChunk): number | undefined =>
  c.type === "usage" || c.type === "finish" ? undefined : c.index

const expand = (reply: Reply): ReadonlyArray<Segment> => {
  let next = 0
  const take = () => next++
  const out: Array<Segment> = []
  for (const item of reply) {
    switch (item._tag) {
      case "Chunks": {
        for (const c of item.chunks) {
          const i = indexOf(c)
          if (i !== undefined && i >= next) next = i + 1
        }
        out.push({ _tag: "Chunks", chunks: item.chunks })
        break
      }
      case "Text":
      case "Reasoning": {
        const index = take()
        const kind = item._tag === "Text" ? "text" : "reasoning"
        const chunks: Array<StreamChunk.StreamChunk> = [StreamChunk.blockStart(index, kind)]
        for (const ch of item.text) {
          chunks.push(kind === "text" ? StreamChunk.textDelta(index, ch) : StreamChunk.reasoningDelta(index, ch))
        }
        chunks.push(StreamChunk.blockEnd(index, kind === "text" ? ContentBlock.text(item.text) : ContentBlock.reasoning(item.text)))
        out.push({ _tag: "Chunks", chunks })
        break
      }
      case "ToolCall": {
        const index = take()
        const mid = Math.floor(item.arguments.length / 2)
        out.push({
          _tag: "Chunks",
          chunks: [
            StreamChunk.blockStart(index, "tool-call"),
            StreamChunk.toolCallDelta(index, item.id, item.arguments.slice(0, mid), item.name),
            StreamChunk.toolCallDelta(index, item.id, item.arguments.slice(mid)),
            StreamChunk.blockEnd(index, ContentBlock.toolCall(item.id, item.name, item.arguments))
          ]
        })
        break
      }
      case "Usage":
        out.push({ _tag: "Chunks", chunks: [StreamChunk.usage(item.usage)] })
        break
      case "Finish":
        out.push({ _tag: "Chunks", chunks: [StreamChunk.finish(item.reason, item.replayState)] })
        break
      case "Fail":
      case "Delay":
      case "Hang":
        out.push(item)
        break
    }
  }
  return out
}

/**
 * The chunks a fixed response emits, in order (control items — fail, delay, hang — are skipped).
 * Handy to compute expectations in tests.
 *
 * @since 0.1.0
 * @category utils
 */
export const toChunks = (reply: Reply): ReadonlyArray<StreamChunk.StreamChunk> =>
  expand(reply).flatMap((s) => (s._tag === "Chunks" ? s.chunks : []))

/**
 * Waits until interrupted, holding a timer meanwhile: a hang stands for a stalled connection, which
 * keeps the process alive (Effect 4's `Stream.never` holds no event-loop handle, Effect 3's did).
 */
const hangForever: Stream.Stream<never> = Stream.fromEffect(Effect.callback<never>(() => {
  const keep = setInterval(() => {}, 2 ** 31 - 1)
  return Effect.sync(() => clearInterval(keep))
}))

const play = (
  reply: Reply,
  chunkDelay: Duration.Duration | undefined
): Stream.Stream<StreamChunk.StreamChunk, LlmError> => {
  const played = Stream.fromIterable(expand(reply)).pipe(
    Stream.flatMap((segment): Stream.Stream<StreamChunk.StreamChunk, LlmError> => {
      switch (segment._tag) {
        case "Chunks":
          return Stream.fromArray(segment.chunks)
        case "Fail":
          return Stream.fail(segment.error)
        case "Delay":
          return Stream.drain(Stream.fromEffect(Effect.sleep(segment.duration)))
        case "Hang":
          return hangForever
      }
    })
  )
  if (chunkDelay === undefined) return played
  // one chunk at a time, each after the previous one by `chunkDelay`
  return played.pipe(
    Stream.rechunk(1),
    Stream.zipWithIndex,
    Stream.mapEffect(([c, i]) => (i === 0 ? Effect.succeed(c) : Effect.as(Effect.sleep(chunkDelay), c)))
  )
}

// ---------------------------------------------------------------------------------------------
// Adapter

/**
 * Options of a scripted adapter.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the route it serves (default `"scripted"`) */
  readonly provider?: string
  /** display name of the route (default `"Scripted"`) */
  readonly name?: string
  /** a model for the advisory catalog (none by default) */
  readonly model?: string
  /** a wait between two chunks (typewriter effect for demos); none by default */
  readonly chunkDelay?: Duration.Input
}

/**
 * A scripted adapter and its request log.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handle {
  readonly adapter: LlmAdapter
  /** every request received so far, in order (as received, not copied) */
  readonly requests: Effect.Effect<ReadonlyArray<Message.GenerateOptions>>
}

/**
 * The {@link Handle} of the scripted adapter a Layer built, for tests to read its requests.
 *
 * @since 0.1.0
 * @category tags
 */
export class Recorder extends Context.Service<Recorder, Handle>()("effect-harness/Adapter/Scripted/Recorder") {}

/**
 * Builds a scripted adapter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (script: Script, options: Options = {}): Effect.Effect<Handle> =>
  Effect.map(Ref.make<ReadonlyArray<Message.GenerateOptions>>([]), (log) => {
    const provider = options.provider ?? "scripted"
    const chunkDelay = options.chunkDelay === undefined ? undefined : Duration.fromInputUnsafe(options.chunkDelay)
    const adapter: LlmAdapter = {
      providers: [{ id: provider, name: options.name ?? "Scripted" }],
      models: options.model === undefined ? [] : [{ provider, id: options.model, name: options.model }],
      stream: (request) =>
        Stream.unwrap(Effect.gen(function*() {
          const call = yield* Ref.modify(log, (requests) => [requests.length, [...requests, request]])
          const response = script[call]
          if (response === undefined) {
            return Stream.fail(
              new ProviderError({
                code: "SCRIPT_EXHAUSTED",
                message: `scripted adapter: no response scripted for call ${call + 1} (the script has ${script.length})`,
                provider
              })
            )
          }
          const reply = typeof response === "function" ? response(request, call) : response
          return Effect.isEffect(reply)
            ? Stream.unwrap(Effect.map(reply, (r) => play(r, chunkDelay)))
            : play(reply, chunkDelay)
        }))
    }
    return { adapter, requests: Ref.get(log) }
  })

/**
 * A Layer providing the scripted adapter as {@link Adapter} and its {@link Recorder}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (script: Script, options: Options = {}): Layer.Layer<Adapter | Recorder> =>
  Layer.effectContext(Effect.map(make(script, options), (handle) =>
    Context.make(Recorder, handle).pipe(Context.add(Adapter, handle.adapter))))

/**
 * A Layer registering the scripted adapter with the `Llm` service (for the layer's lifetime) and
 * providing its {@link Recorder}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLlm = (script: Script, options: Options = {}): Layer.Layer<Recorder, RegistryError, Llm.Llm> =>
  Layer.effect(
    Recorder,
    Effect.tap(make(script, options), (handle) => Llm.register(handle.adapter.providers, handle.adapter))
  )

/**
 * The requests received by the scripted adapter of the context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const requests: Effect.Effect<ReadonlyArray<Message.GenerateOptions>, never, Recorder> = Effect.flatMap(
  Recorder,
  (recorder) => recorder.requests
)

// ---------------------------------------------------------------------------------------------
// Script files

/**
 * A script file could not be decoded.
 *
 * @since 0.1.0
 * @category errors
 */
export class ScriptError extends Schema.TaggedError<ScriptError>()("ScriptError", {
  code: Schema.Literal("INVALID_SCRIPT"),
  message: Schema.String
}) {}

const NonNegative = Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))

const ToolCallFields = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.String })

const JsonItem = Schema.Union([
  Schema.Struct({ text: Schema.String }),
  Schema.Struct({ reasoning: Schema.String }),
  Schema.Struct({ toolCall: ToolCallFields }),
  Schema.Struct({ usage: Message.TokenUsage }),
  Schema.Struct({ finish: Message.FinishReason, replayState: Schema.optionalKey(Json.Json) }),
  Schema.Struct({
    fail: Schema.Struct({
      code: Schema.String,
      message: Schema.optionalKey(Schema.String),
      status: Schema.optionalKey(Schema.Number),
      retryAfterMillis: Schema.optionalKey(NonNegative)
    })
  }),
  Schema.Struct({ delayMs: NonNegative }),
  Schema.Struct({ hang: Schema.Literal(true) }),
  Schema.Struct({ chunk: StreamChunk.StreamChunk })
])

const JsonResponse = Schema.Union([
  Schema.Array(JsonItem),
  Schema.Struct({ text: Schema.String }),
  Schema.Struct({ call: ToolCallFields })
])

/**
 * Schema of a script file (JSON): `{provider?, model?, responses: [...]}`; see the module doc.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScriptFile = Schema.Struct({
  provider: Schema.optionalKey(Schema.NonEmptyString),
  model: Schema.optionalKey(Schema.NonEmptyString),
  responses: Schema.Array(JsonResponse)
})

/**
 * The decoded form of a script file.
 *
 * @since 0.1.0
 * @category models
 */
export type ScriptFile = typeof ScriptFile.Type

const toItem = (item: typeof JsonItem.Type): Item => {
  if ("text" in item) return say(item.text)
  if ("reasoning" in item) return think(item.reasoning)
  if ("toolCall" in item) return toolCall(item.toolCall.id, item.toolCall.name, item.toolCall.arguments)
  if ("usage" in item) return { _tag: "Usage", usage: item.usage }
  if ("finish" in item) return finish(item.finish, item.replayState)
  if ("fail" in item) {
    const { code, message, ...extra } = item.fail
    return fail(code, message, extra)
  }
  if ("delayMs" in item) return delay(Duration.millis(item.delayMs))
  if ("hang" in item) return forever
  // the schema's chunk shape is the closed protocol; `blockType` stays open (V-2)
  return chunk(item.chunk as StreamChunk.StreamChunk)
}

/**
 * Converts a decoded script file into a {@link Script} plus the options it names.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromScriptFile = (file: ScriptFile): { readonly script: Script; readonly options: Options } => ({
  script: file.responses.map((response): Response => {
    if (Array.isArray(response)) return (response as ReadonlyArray<typeof JsonItem.Type>).map(toItem)
    const shorthand = response as Exclude<typeof JsonResponse.Type, ReadonlyArray<unknown>>
    return "text" in shorthand
      ? text(shorthand.text)
      : call(shorthand.call.id, shorthand.call.name, shorthand.call.arguments)
  }),
  options: {
    ...(file.provider === undefined ? {} : { provider: file.provider }),
    ...(file.model === undefined ? {} : { model: file.model })
  }
})

const decodeFile = Schema.decodeUnknownEffect(Schema.fromJsonString(ScriptFile), {
  onExcessProperty: "error",
  errors: "all"
})

/**
 * Decodes a script from JSON text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromJson = (
  json: string
): Effect.Effect<{ readonly script: Script; readonly options: Options }, ScriptError> =>
  decodeFile(json).pipe(
    Effect.map(fromScriptFile),
    Effect.mapError((error) =>
      new ScriptError({ code: "INVALID_SCRIPT", message: `invalid script: ${error.message}` })
    )
  )

/**
 * Reads and decodes a script file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (
  path: string
): Effect.Effect<
  { readonly script: Script; readonly options: Options },
  ScriptError | PlatformError.PlatformError,
  FileSystem.FileSystem
> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.flatMap(fromJson),
    Effect.mapError((e) =>
      e._tag === "ScriptError" ? new ScriptError({ code: "INVALID_SCRIPT", message: `${path}: ${e.message}` }) : e
    )
  )
