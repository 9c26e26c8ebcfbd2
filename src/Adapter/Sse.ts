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
 *   it is not emitted, and later bytes are never read (the response body is released, which closes
 *   the connection);
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
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
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

  // Processes one complete line (without its `\n`). Returns true when the terminal event was seen.
  const line = (text: string, out: Array<Event>): boolean => {
    const length = text.length
    const last = length > 0 ? text.charCodeAt(length - 1) : -1
    const l = last === 13 ? text.slice(0, length - 1) : text
    if (l.length === 0) {
      if (data !== undefined) {
        const event: Event = { event: name, data }
        data = undefined
        name = "message"
        pendingSize = 0
        if (isTerminal(event)) return true
        out.push(event)
      } else {
        name = "message"
        pendingSize = 0
      }
      return false
    }
    const first = l.charCodeAt(0)
    if (first === 58 /* : */) return false
    // fast path: "data:" / "data: "
    if (first === 100 && l.startsWith("data:")) {
      const value = l.charCodeAt(5) === 32 ? l.slice(6) : l.slice(5)
      data = data === undefined ? value : data + "\n" + value
      pendingSize += value.length + 1
      return false
    }
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

  const feed = (bytes: Uint8Array, out: Array<Event>): FeedResult => {
    if (finished) return "terminal"
    const text = rest.length === 0
      ? decoder.decode(bytes, { stream: true })
      : rest + decoder.decode(bytes, { stream: true })
    let position = 0
    let newline = text.indexOf("\n")
    while (newline >= 0) {
      if (line(text.slice(position, newline), out)) {
        finished = true
        rest = ""
        return "terminal"
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

  const end = (out: Array<Event>): "terminal" | ProviderError => {
    if (finished) return "terminal"
    finished = true
    const tail = rest + decoder.decode()
    rest = ""
    const closed = () =>
      new ProviderError({
        code: "STREAM_CLOSED",
        message: `stream ended without ${terminalName}`,
        ...providerExtra
      })
    // the final, unterminated line (never treated as the blank line that would dispatch)
    const partial = tail.charCodeAt(tail.length - 1) === 13 ? tail.slice(0, -1) : tail
    if (partial.length > 0) line(partial, out)
    if (data !== undefined && isTerminal({ event: name, data })) return "terminal"
    return closed()
  }

  return { feed, end }
}

/**
 * Decodes a byte stream into SSE events (P-4). Ends after the terminal event, fails with
 * `STREAM_CLOSED` at EOF without it, and with `MALFORMED_RESPONSE` on an oversized event.
 *
 * @since 0.1.0
 * @category combinators
 */
export const decode = (options: DecodeOptions = {}) =>
<E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Event, E | ProviderError, R> =>
  Stream.suspend(() => {
    const parser = makeParser(options)
    const loop: Channel.Channel<Chunk.Chunk<Event>, Chunk.Chunk<Uint8Array>, E | ProviderError, E, unknown, unknown> =
      Channel.readWithCause({
        onInput: (input: Chunk.Chunk<Uint8Array>) => {
          const out: Array<Event> = []
          let result: FeedResult = "more"
          for (const bytes of input) {
            result = parser.feed(bytes, out)
            if (result !== "more") break
          }
          const emitted = out.length === 0 ? undefined : Channel.write(Chunk.unsafeFromArray(out))
          if (result === "more") return emitted === undefined ? loop : Channel.zipRight(emitted, loop)
          if (result === "terminal") return emitted ?? Channel.void
          return emitted === undefined ? Channel.fail(result) : Channel.zipRight(emitted, Channel.fail(result))
        },
        onFailure: (cause: Cause.Cause<E>) => Channel.failCause(cause),
        onDone: () => {
          const out: Array<Event> = []
          const result = parser.end(out)
          const emitted = out.length === 0 ? undefined : Channel.write(Chunk.unsafeFromArray(out))
          if (result === "terminal") return emitted ?? Channel.void
          return emitted === undefined ? Channel.fail(result) : Channel.zipRight(emitted, Channel.fail(result))
        }
      })
    return Stream.pipeThroughChannelOrFail(bytes, loop)
  })

// ---------------------------------------------------------------------------------------------
// Translation driver

/**
 * A provider translator: per-response mutable state owned by ONE stream run (created inside
 * `Stream.suspend`, never shared across fibers). `event` pushes chunks and returns `"done"` when
 * the response is complete (an in-band error) or a typed failure; `end` runs when the event stream
 * ended normally (terminal marker) and pushes the closing chunks.
 *
 * @since 0.1.0
 * @category models
 */
export interface Translator {
  readonly event: (event: Event, out: Array<StreamChunk.StreamChunk>) => "more" | "done" | ProviderError
  readonly end: (out: Array<StreamChunk.StreamChunk>) => ProviderError | undefined
}

/**
 * Runs a {@link Translator} over an event stream, one output `Chunk` per input `Chunk`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const translate = (make: () => Translator) =>
<E, R>(events: Stream.Stream<Event, E, R>): Stream.Stream<StreamChunk.StreamChunk, E | ProviderError, R> =>
  Stream.suspend(() => {
    const translator = make()
    const write = (out: Array<StreamChunk.StreamChunk>) =>
      out.length === 0 ? undefined : Channel.write(Chunk.unsafeFromArray(out))
    const loop: Channel.Channel<
      Chunk.Chunk<StreamChunk.StreamChunk>,
      Chunk.Chunk<Event>,
      E | ProviderError,
      E,
      unknown,
      unknown
    > = Channel.readWithCause({
      onInput: (input: Chunk.Chunk<Event>) => {
        const out: Array<StreamChunk.StreamChunk> = []
        let result: "more" | "done" | ProviderError = "more"
        for (const event of input) {
          result = translator.event(event, out)
          if (result !== "more") break
        }
        const emitted = write(out)
        if (result === "more") return emitted === undefined ? loop : Channel.zipRight(emitted, loop)
        if (result === "done") return emitted ?? Channel.void
        return emitted === undefined ? Channel.fail(result) : Channel.zipRight(emitted, Channel.fail(result))
      },
      onFailure: (cause: Cause.Cause<E>) => Channel.failCause(cause),
      onDone: () => {
        const out: Array<StreamChunk.StreamChunk> = []
        const error = translator.end(out)
        const emitted = write(out)
        if (error === undefined) return emitted ?? Channel.void
        return emitted === undefined ? Channel.fail(error) : Channel.zipRight(emitted, Channel.fail(error))
      }
    })
    return Stream.pipeThroughChannelOrFail(events, loop)
  })
