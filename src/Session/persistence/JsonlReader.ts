/**
 * Reading a JSONL log one line at a time (issue 26): the parser is fed the file's bytes in chunks
 * and holds at most one partial line, so a log of any size (past V8's 512 MiB string limit) loads
 * as long as its events fit in memory. A line longer than the record limit
 * (`Records.MAX_EVENT_BYTES`) is skipped without being held and scanned as a torn record: dropped
 * when it is the tail, `CORRUPT_LOG` naming it when a later `turn/end` follows.
 *
 * The checks are those of the load (D-4, D-5): the header line (`UNSUPPORTED_VERSION`, an id that
 * does not match the file), then `Records.Scanner` over the events; the last line without a
 * newline is an incomplete record.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import { FORMAT_VERSION } from "../SessionEvent.js"
import * as Records from "./Records.js"

/**
 * A parsed log: the header, the preserved events, how many records a torn tail drops and the
 * bytes to keep (header + preserved events).
 *
 * @since 0.1.0
 * @category models
 */
export interface ParsedLog {
  readonly header: SessionHeader
  readonly events: Array<SessionEvent>
  readonly dropped: number
  readonly keepBytes: number
}

/**
 * The size of one read (1 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const CHUNK_BYTES = 1024 * 1024

const NL = 10

const tryParse = (line: string): unknown => {
  try {
    return JSON.parse(line)
  } catch {
    return Records.UNPARSABLE
  }
}

const corrupt = (id: string, file: string, line: number, reason: string): SessionError.SessionError =>
  SessionError.make("CORRUPT_LOG", `${file}:${line}: ${reason}`, { sessionId: id, file, line })

const isTurnEnd = (line: string): boolean => {
  if (!line.includes("\"turn/end\"")) return false
  const value = tryParse(line)
  return typeof value === "object" && value !== null && (value as Record<string, unknown>)["type"] === "turn/end"
}

/**
 * The incremental parser: {@link Parser.feed} the bytes in order, then {@link Parser.end}. `feed`
 * answers a failure as soon as the log is known to be unloadable (stop reading then).
 *
 * @since 0.1.0
 * @category models
 */
export class Parser {
  private readonly scanner = new Records.Scanner()
  private header: SessionHeader | undefined = undefined
  private pieces: Array<Uint8Array> = []
  private partial = 0
  private oversized = false
  /** bytes consumed so far (the offset of the current line's next byte) */
  private offset = 0
  /** the offset where the current line starts */
  private lineStart = 0
  private keepBytes: number | undefined = undefined
  private failure: SessionError.SessionError | undefined = undefined

  constructor(
    private readonly file: string,
    private readonly id: string,
    private readonly maxLineBytes: number = Records.MAX_EVENT_BYTES
  ) {}

  /** Feeds the next bytes (the parser keeps references to them until their line ends). */
  feed(bytes: Uint8Array): SessionError.SessionError | undefined {
    let pos = 0
    while (this.failure === undefined && pos < bytes.byteLength) {
      const k = bytes.indexOf(NL, pos)
      if (k < 0) {
        this.hold(bytes.subarray(pos))
        break
      }
      this.hold(bytes.subarray(pos, k))
      this.line()
      pos = k + 1
      this.offset += 1
      this.lineStart = this.offset
    }
    return this.failure
  }

  /** Ends the input: the parsed log, or why it cannot be loaded. */
  end(): Result.Result<ParsedLog, SessionError.SessionError> {
    if (this.failure === undefined && (this.partial > 0 || this.oversized)) {
      if (this.header === undefined) this.failure = corrupt(this.id, this.file, 1, "incomplete session header")
      else this.event(Records.UNPARSABLE)
    }
    if (this.failure !== undefined) return Result.fail(this.failure)
    if (this.header === undefined) return Result.fail(corrupt(this.id, this.file, 1, "empty file, no session header"))
    const result = this.scanner.result()
    switch (result._tag) {
      case "legacy":
        return Result.fail(
          SessionError.make("LEGACY_EVENT", `${this.file}:${result.index + 2}: ${result.reason}`, {
            sessionId: this.id,
            file: this.file,
            line: result.index + 2
          })
        )
      case "corrupt":
        return Result.fail(corrupt(this.id, this.file, result.index + 2, result.reason))
      case "ok":
        return Result.succeed({
          header: this.header,
          events: result.events,
          dropped: result.dropped,
          keepBytes: result.dropped > 0 ? this.keepBytes ?? this.offset : this.offset
        })
    }
  }

  private hold(bytes: Uint8Array): void {
    this.offset += bytes.byteLength
    if (this.oversized || bytes.byteLength === 0) return
    if (this.partial + bytes.byteLength > this.maxLineBytes) {
      this.oversized = true
      this.pieces = []
      this.partial = 0
      return
    }
    this.pieces.push(bytes)
    this.partial += bytes.byteLength
  }

  /** The held line ended (its newline is next). */
  private line(): void {
    const oversized = this.oversized
    const text = oversized ? "" : this.take()
    this.oversized = false
    if (this.header === undefined) {
      if (oversized) {
        this.failure = corrupt(this.id, this.file, 1, `session header longer than ${this.maxLineBytes} bytes`)
        return
      }
      this.headerLine(text)
      return
    }
    const before = this.scanner.tornAt
    this.scanner.push(() => (oversized ? Records.TOO_LARGE : tryParse(text)), () => !oversized && isTurnEnd(text))
    if (before === undefined && this.scanner.tornAt !== undefined) this.keepBytes = this.lineStart
    if (this.scanner.done) this.failure = this.resultFailure()
  }

  /** An incomplete or unreadable last record. */
  private event(value: typeof Records.UNPARSABLE): void {
    const before = this.scanner.tornAt
    this.scanner.push(() => value, () => false)
    if (before === undefined && this.scanner.tornAt !== undefined) this.keepBytes = this.lineStart
  }

  private resultFailure(): SessionError.SessionError | undefined {
    const result = this.scanner.result()
    if (result._tag === "ok") return undefined
    return result._tag === "legacy"
      ? SessionError.make("LEGACY_EVENT", `${this.file}:${result.index + 2}: ${result.reason}`, {
        sessionId: this.id,
        file: this.file,
        line: result.index + 2
      })
      : corrupt(this.id, this.file, result.index + 2, result.reason)
  }

  private take(): string {
    const pieces = this.pieces
    const text = pieces.length === 1
      ? Buffer.from(pieces[0]!.buffer, pieces[0]!.byteOffset, pieces[0]!.byteLength).toString("utf8")
      : Buffer.concat(pieces, this.partial).toString("utf8")
    this.pieces = []
    this.partial = 0
    return text
  }

  private headerLine(text: string): void {
    const decoded = Records.decodeHeader(tryParse(text))
    if ("problem" in decoded) {
      this.failure = decoded.problem === "version"
        ? SessionError.make(
          "UNSUPPORTED_VERSION",
          `${this.file}:1: session format version ${JSON.stringify(decoded.version)} is not supported (expected ${FORMAT_VERSION})`,
          { sessionId: this.id, file: this.file, line: 1 }
        )
        : corrupt(this.id, this.file, 1, `invalid session header: ${decoded.problem}`)
      return
    }
    if (decoded.header.id !== this.id) {
      this.failure = corrupt(this.id, this.file, 1, `header id ${JSON.stringify(decoded.header.id)} does not match the file`)
      return
    }
    this.header = decoded.header
  }
}

/**
 * Parses a whole log held in memory (the same checks as {@link read}).
 *
 * @since 0.1.0
 * @category utils
 */
export const parse = (
  bytes: Uint8Array,
  file: string,
  id: string,
  maxLineBytes: number = Records.MAX_EVENT_BYTES
): Result.Result<ParsedLog, SessionError.SessionError> => {
  const parser = new Parser(file, id, maxLineBytes)
  parser.feed(bytes)
  return parser.end()
}

/**
 * Reads and parses the log at `file` chunk by chunk from an open handle (interruptible between
 * chunks). I/O failures stay `PlatformError`s for the caller to map.
 *
 * @since 0.1.0
 * @category utils
 */
export const read = (
  handle: FileSystem.File,
  file: string,
  id: string,
  options: { readonly maxLineBytes?: number; readonly chunkBytes?: number } = {}
): Effect.Effect<Result.Result<ParsedLog, SessionError.SessionError>, PlatformError.PlatformError> =>
  Effect.gen(function*() {
    const parser = new Parser(file, id, options.maxLineBytes ?? Records.MAX_EVENT_BYTES)
    const size = options.chunkBytes ?? CHUNK_BYTES
    for (;;) {
      // a fresh buffer per read: the parser keeps the unfinished line's bytes by reference
      const buffer = new Uint8Array(size)
      const n = Number(yield* handle.read(buffer))
      if (n === 0) break
      if (parser.feed(buffer.subarray(0, n)) !== undefined) break
    }
    return parser.end()
  })
