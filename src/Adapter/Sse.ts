/**
 * Server-sent events decoding (P-4) as a `Stream` transformation from response bytes to events, and
 * the driver that runs a provider translator over those events.
 *
 * Framing, exactly as P-4 asks:
 * - bytes are decoded with ONE streaming `TextDecoder` (`stream: true`), so a read may end anywhere,
 *   including inside a multi-byte UTF-8 character; a leading BOM is dropped;
 * - lines end at `\n`; a trailing `\r` is stripped per line, so `\n`, `\r\n` and mixed framing all
 *   work (a bare `\r` is not a line end, as in P-4);
 * - an empty line dispatches the pending event; comment lines (`:` first) are skipped;
 * - `data:` lines count, one optional leading space removed, several joined with `\n` (a bare `data:`
 *   adds an empty line); `event:` sets the event name (kept, default `"message"`, so providers'
 *   `event: error` is visible); `id:` and `retry:` are ignored (no reconnection: a retry is a new
 *   request decided by the retry policy, DEC-3); any other field is ignored;
 * - an event without data is skipped;
 * - the terminal-marker rule is a parameter ({@link DecodeOptions.isTerminal}; default: data
 *   `[DONE]`, OpenAI style; Anthropic passes `message_stop`). The terminal event ends the stream:
 *   it is not emitted, and the decoder reads nothing after it (the HTTP edge then drains the rest
 *   of the body, bounded, so the keep-alive connection is reused: `HttpEdge.drainLimit`);
 * - at EOF the pending unterminated event is still parsed: when it is the terminal marker the
 *   stream ends normally (a final `data: [DONE]` without blank line is fine). Otherwise the stream
 *   fails with `STREAM_CLOSED` (EOF without terminal marker: empty body, close mid-event or
 *   between events). [DECISION] A pending non-terminal event at EOF is NOT dispatched: after a cut
 *   connection its last line may be half-written, and dispatching it would turn a dropped
 *   connection (retryable) into `MALFORMED_RESPONSE` (fixture `deepseek/truncated-no-done`).
 *
 * [DECISION] `@effect/experimental`'s `Sse` parser is not used: it turns an oversized event into a
 * defect (`Cause.die`), sleeps on `retry:` fields (reconnection semantics we do not want), does not
 * dispatch a final unterminated event, and has no terminal-marker rule. This module's parser fails
 * with a typed `ProviderError` (`MALFORMED_RESPONSE`) when one event exceeds
 * {@link DecodeOptions.maxEventSize} characters (default 16 MiB).
 *
 * Hot path: whole `Uint8Array` chunks are decoded at once, lines are found with `indexOf`, and the
 * channel emits one `Chunk` of events per input `Chunk` (no per-character or per-event Effect).
 *
 * @since 0.1.0
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import { ProviderError } from "../Llm/LlmError.js"
import type * as StreamChunk from "../Llm/StreamChunk.js"

/**
 * One dispatched event: its name (`"message"` when the event had no `event:` field) and its data
 * (all `data:` lines joined with `\n`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Event {
  readonly event: string
  readonly data: string
}

/**
 * Decoder options.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  /** `true` for the event that ends the stream; default: data is exactly `[DONE]` */
  readonly isTerminal?: ((event: Event) => boolean) | undefined
  /** description of the terminal marker used in the `STREAM_CLOSED` message; default `[DONE]` */
  readonly terminalName?: string | undefined
  /** maximum characters of one pending event (lines + data) before failing; default 16 MiB */
  readonly maxEventSize?: number | undefined
  /** provider route put on errors */
  readonly provider?: string | undefined
}

/**
 * The default terminal rule: data `[DONE]` (OpenAI-compatible streams).
 *
 * @since 0.1.0
 * @category utils
 */
export const isDone = (event: Event): boolean => event.data === "[DONE]"

const defaultMaxEventSize = 16 * 1024 * 1024

/**
 * What one {@link Parser.feed} produced.
 *
 * @since 0.1.0
 * @category models
 */
export type FeedResult = "more" | "terminal" | ProviderError

/**
 * The incremental parser (plain, synchronous; used by {@link decode}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Parser {
  /** parses one read, pushing dispatched events to `out`; stops at the terminal event */
  readonly feed: (bytes: Uint8Array, out: Array<Event>) => FeedResult
  /** end of input: `"terminal"` when the pending event is the terminal marker, else `STREAM_CLOSED` */
  readonly end: (out: Array<Event>) => "terminal" | ProviderError
  /**
   * {@link Parser.feed} handing each dispatched event to `onEvent` instead; `onEvent` returns
   * `true` to stop parsing (`"stopped"`; the parser must not be fed again).
   */
  readonly feedWith: (bytes: Uint8Array, onEvent: (event: Event) => boolean) => FeedResult | "stopped"
  /** {@link Parser.end} handing the last event (if any) to `onEvent` */
  readonly endWith: (onEvent: (event: Event) => boolean) => "terminal" | "stopped" | ProviderError
}

/**
 * Builds an incremental SSE parser.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeParser = (options: DecodeOptions = {}): Parser => {
  const isTerminal = options.isTerminal ?? isDone
  const maxEventSize = options.maxEventSize ?? defaultMaxEventSize
  const terminalName = options.terminalName ?? "[DONE]"
  const providerExtra = options.provider === undefined ? {} : { provider: options.provider }
  const decoder = new TextDecoder("utf-8")
  let rest = ""
  let data: string | undefined = undefined
  let name = "message"
  let pendingSize = 0
  let finished = false

  const tooLarge = () =>
    new ProviderError({
      code: "MALFORMED_RESPONSE",
      message: `SSE event exceeds the maximum size of ${maxEventSize} characters`,
      ...providerExtra
    })

  // the consumer of dispatched events of the current feed; `true` = stop
  let onEvent: (event: Event) => boolean = () => false
  let stopped = false

  const dispatch = (): boolean => {
    const event: Event = { event: name, data: data as string }
    data = undefined
    name = "message"
    pendingSize = 0
    if (isTerminal(event)) return true
    if (onEvent(event)) stopped = true
    return stopped
  }

  // Processes the line `text[start, end)` (without its `\n`). Returns true when parsing must stop
  // (the terminal event, or the consumer asked to stop). Data lines are sliced once, in place.
  const line = (text: string, start: number, end: number): boolean => {
    if (end > start && text.charCodeAt(end - 1) === 13) end--
    if (end === start) {
      if (data !== undefined) return dispatch()
      name = "message"
      pendingSize = 0
      return false
    }
    const first = text.charCodeAt(start)
    if (first === 58 /* : */) return false
    // fast path: "data:" / "data: "
    if (first === 100 && text.startsWith("data:", start)) {
      const from = start + 5 < end && text.charCodeAt(start + 5) === 32 ? start + 6 : start + 5
      const value = text.slice(from, end)
      data = data === undefined ? value : data + "\n" + value
      pendingSize += value.length + 1
      return false
    }
    // fast path: "event:" / "event: " (Anthropic names every event)
    if (first === 101 && text.startsWith("event:", start)) {
      name = text.slice(start + 6 < end && text.charCodeAt(start + 6) === 32 ? start + 7 : start + 6, end)
      return false
    }
    const l = text.slice(start, end)
    const colon = l.indexOf(":")
    const field = colon < 0 ? l : l.slice(0, colon)
    if (field === "event") {
      const value = colon < 0 ? "" : l.charCodeAt(colon + 1) === 32 ? l.slice(colon + 2) : l.slice(colon + 1)
      name = value
    } else if (field === "data") {
      // `data` without a colon: an empty data line
      data = data === undefined ? "" : data + "\n"
      pendingSize += 1
    }
    return false
  }

  const feedWith = (bytes: Uint8Array, consumer: (event: Event) => boolean): FeedResult | "stopped" => {
    if (finished) return stopped ? "stopped" : "terminal"
    onEvent = consumer
    const text = rest.length === 0
      ? decoder.decode(bytes, { stream: true })
      : rest + decoder.decode(bytes, { stream: true })
    let position = 0
    let newline = text.indexOf("\n")
    while (newline >= 0) {
      if (line(text, position, newline)) {
        finished = true
        rest = ""
        return stopped ? "stopped" : "terminal"
      }
      position = newline + 1
      newline = text.indexOf("\n", position)
    }
    rest = position === 0 ? text : text.slice(position)
    if (pendingSize + rest.length > maxEventSize) {
      finished = true
      return tooLarge()
    }
    return "more"
  }

  const endWith = (consumer: (event: Event) => boolean): "terminal" | "stopped" | ProviderError => {
    if (finished) return stopped ? "stopped" : "terminal"
    finished = true
    onEvent = consumer
    const tail = rest + decoder.decode()
    rest = ""
    const closed = () =>
      new ProviderError({
        code: "STREAM_CLOSED",
        message: `stream ended without ${terminalName}`,
        ...providerExtra
      })
    // the final, unterminated line (never treated as the blank line that would dispatch)
    const length = tail.charCodeAt(tail.length - 1) === 13 ? tail.length - 1 : tail.length
    if (length > 0) line(tail, 0, length)
    if (data !== undefined && isTerminal({ event: name, data })) return "terminal"
    return closed()
  }

  const pushTo = (out: Array<Event>) => (event: Event): boolean => {
    out.push(event)
    return false
  }

  const feed = (bytes: Uint8Array, out: Array<Event>): FeedResult => feedWith(bytes, pushTo(out)) as FeedResult

  const end = (out: Array<Event>): "terminal" | ProviderError => endWith(pushTo(out)) as "terminal" | ProviderError

  return { feed, end, feedWith, endWith }
}

/**
 * What one step of a {@link transduce}r produced: output batches (each emitted as one stream batch,
 * empty ones skipped) and whether the stream goes on, ends, or fails after them.
 */
interface Step<B, E> {
  readonly batches: ReadonlyArray<Array<B>>
  readonly next: "more" | "done" | E
}

const isNonEmpty = <A>(batch: ReadonlyArray<A>): batch is Arr.NonEmptyReadonlyArray<A> => batch.length > 0

/**
 * Effect 4 port of the v3 `Channel.readWithCause` loops: a stateful array → arrays transducer over a
 * stream's pull (`Stream.transformPull`): one input batch in, its output batches out, and a last step
 * at the end of input. Per input batch: one `Pull.matchEffect` over the upstream pull, no generator.
 */
const transduce = <A, B, E, E2, R>(
  self: Stream.Stream<A, E, R>,
  make: () => {
    readonly onInput: (input: Arr.NonEmptyReadonlyArray<A>) => Step<B, E2>
    readonly onEnd: () => Step<B, E2>
  }
): Stream.Stream<B, E | E2, R> =>
  Stream.transformPull(self, (pull) =>
    Effect.sync(() => {
      const t = make()
      const queue: Array<Arr.NonEmptyReadonlyArray<B>> = []
      let state: "more" | "done" | { readonly error: E2 } = "more" as "more" | "done" | { readonly error: E2 }
      const settle = (step: Step<B, E2>): Pull.Pull<Arr.NonEmptyReadonlyArray<B>, E | E2, void> => {
        for (const batch of step.batches) if (isNonEmpty(batch)) queue.push(batch)
        const n = step.next
        state = n === "more" ? "more" : n === "done" ? "done" : { error: n as E2 }
        return next
      }
      const onSuccess = (input: Arr.NonEmptyReadonlyArray<A>) => settle(t.onInput(input))
      const onDone = () => settle(t.onEnd())
      const handlers = { onSuccess, onFailure: Effect.failCause, onDone }
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<B>, E | E2, void> = Effect.suspend(() => {
        if (queue.length > 0) return Effect.succeed(queue.shift()!)
        if (state === "done") return Cause.done()
        if (state !== "more") return Effect.fail(state.error)
        return Pull.matchEffect(pull, handlers) as Pull.Pull<Arr.NonEmptyReadonlyArray<B>, E | E2, void>
      })
      return next
    }))

/**
 * Decodes an SSE byte stream into events (see the module doc). Ends at the terminal event.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (options: DecodeOptions = {}) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Event, E | ProviderError, R> =>
  transduce(bytes, () => {
    const parser = makeParser(options)
    return {
      onInput: (input) => {
        const out: Array<Event> = []
        let result: FeedResult = "more"
        for (const bytes of input) {
          result = parser.feed(bytes, out)
          if (result !== "more") break
        }
        return { batches: [out], next: result === "terminal" ? "done" : result }
      },
      onEnd: () => {
        const out: Array<Event> = []
        const result = parser.end(out)
        return { batches: [out], next: result === "terminal" ? "done" : result }
      }
    }
  })

// ---------------------------------------------------------------------------------------------
// Translation driver

/**
 * A provider translator: events in, chunks out.
 *
 * @since 0.1.0
 * @category models
 */
export interface Translator {
  readonly event: (event: Event, out: Array<StreamChunk.StreamChunk>) => "more" | "done" | ProviderError
  readonly end: (out: Array<StreamChunk.StreamChunk>) => ProviderError | undefined
}

/**
 * Translates an event stream with a fresh translator per run.
 *
 * @since 0.1.0
 * @category decoding
 */
export const translate = (make: () => Translator) =>
<E, R>(events: Stream.Stream<Event, E, R>): Stream.Stream<StreamChunk.StreamChunk, E | ProviderError, R> =>
  transduce(events, () => {
    const translator = make()
    return {
      onInput: (input) => {
        const out: Array<StreamChunk.StreamChunk> = []
        let result: "more" | "done" | ProviderError = "more"
        for (const event of input) {
          result = translator.event(event, out)
          if (result !== "more") break
        }
        return { batches: [out], next: result }
      },
      onEnd: () => {
        const out: Array<StreamChunk.StreamChunk> = []
        const error = translator.end(out)
        return { batches: [out], next: error ?? "done" }
      }
    }
  })

/**
 * {@link decode} and {@link translate} in one stage (no intermediate event batches): what the
 * adapters use.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeTranslate = (options: DecodeOptions, make: () => Translator) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<StreamChunk.StreamChunk, E | ProviderError, R> =>
  transduce(bytes, () => {
    const parser = makeParser(options)
    const translator = make()
    let out: Array<StreamChunk.StreamChunk> = []
    let result: "more" | "done" | ProviderError = "more"
    const onEvent = (event: Event): boolean => {
      result = translator.event(event, out)
      return result !== "more"
    }
    // what follows the parser's outcome: the translator's verdict first (it may have stopped
    // parsing), then the end of the event stream (terminal: `translator.end`) or a parse failure
    const settle = (parsed: FeedResult | "stopped"): Step<StreamChunk.StreamChunk, ProviderError> => {
      const chunks = out
      if (result === "done") return { batches: [chunks], next: "done" }
      if (result !== "more") return { batches: [chunks], next: result }
      if (parsed === "more") return { batches: [chunks], next: "more" }
      if (parsed === "terminal") {
        // the closing chunks form their own batch, as `translate` emits them at the end of input
        const closing: Array<StreamChunk.StreamChunk> = []
        const error = translator.end(closing)
        return { batches: [chunks, closing], next: error ?? "done" }
      }
      return { batches: [chunks], next: parsed as ProviderError }
    }
    return {
      onInput: (input) => {
        out = []
        let parsed: FeedResult | "stopped" = "more"
        for (const piece of input) {
          parsed = parser.feedWith(piece, onEvent)
          if (parsed !== "more") break
        }
        return settle(parsed)
      },
      onEnd: () => {
        out = []
        return settle(parser.endWith(onEvent))
      }
    }
  })
