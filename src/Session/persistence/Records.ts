/**
 * Stored records shared by the durable backends: the plain JSON shapes of the header and of
 * events (DEC-9), the checks a stored record must pass on load (S-9, S-11, S-12), the
 * classification of defects into a droppable torn tail or a corrupt log (D-5), and the validation
 * of an append batch (D-3).
 *
 * Torn vs corrupt (D-5). A record is *defective* when it is incomplete (the last line lacks its
 * newline), unparsable (not JSON, or not a JSON object) or out of sequence (`seq` is not its
 * index: a gap, a duplicate, a missing seq). The first defective record ends the preserved prefix.
 * When no later record is a complete `turn/end`, the defect and everything after it are a torn tail
 * that load drops physically; otherwise the log is unloadable (`CORRUPT_LOG` naming the file and
 * line of the first defect). [DECISION] A complete, in-sequence record that breaks another rule
 * (an envelope key too many, a non-surface type with `surfaceOp`, a negative time, `-0` ...) is
 * never silently dropped, wherever it is: it makes the log unloadable (`CORRUPT_LOG`), and a legacy
 * event (S-9) makes it unloadable with `LEGACY_EVENT`.
 *
 * Load applies the same rules as a seed (`Validate`: closed envelope, payload shapes, legacy
 * rejection, surface rules including replaces against the surface folded so far), so a log that
 * loads also seeds a live session. Performance: one synchronous check per parsed record (no Effect
 * per record, no copy): JSON text cannot produce anything but JSON values, so the lossless-JSON
 * check (V-11) reduces to a walk that rejects `-0` and non-finite numbers.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Json from "../../Llm/Json.js"
import type { SessionId } from "../../Llm/Message.js"
import * as EventSize from "../EventSize.js"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import { FORMAT_VERSION, isEnvelope } from "../SessionEvent.js"
import * as Surface from "../Surface.js"
import * as Validate from "../Validate.js"

// ---------------------------------------------------------------------------------------------
// encoding

/**
 * The JSON text of an event, keys in envelope order (`type, seq, time, data, surfaceOp?,
 * sourceEventSeqs?`), without a trailing newline.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeEvent = (event: SessionEvent): string => {
  let text = `{"type":${JSON.stringify(event.type)},"seq":${event.seq},"time":${event.time},"data":${
    JSON.stringify(event.data)
  }`
  if (event.surfaceOp !== undefined) text += `,"surfaceOp":${JSON.stringify(event.surfaceOp)}`
  if (event.sourceEventSeqs !== undefined) text += `,"sourceEventSeqs":${JSON.stringify(event.sourceEventSeqs)}`
  return text + "}"
}

/**
 * The header as a plain object tagged `type: "session"` (line 1 of a JSONL log).
 *
 * @since 0.1.0
 * @category encoding
 */
export const headerRecord = (header: SessionHeader): Record<string, unknown> => {
  const record: Record<string, unknown> = {
    type: "session",
    version: header.version,
    id: header.id,
    createdAt: header.createdAt
  }
  if (header.cwd !== undefined) record["cwd"] = header.cwd
  if (header.parentSession !== undefined) record["parentSession"] = header.parentSession
  if (header.seedLength !== undefined) record["seedLength"] = header.seedLength
  return record
}

// ---------------------------------------------------------------------------------------------
// header

const isNonNegativeInt = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0

const isAbsolutePath = (p: string): boolean => p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\")

/**
 * Why a header is invalid (S-12), or `undefined`. `version` is checked separately.
 *
 * @since 0.1.0
 * @category validation
 */
export const headerProblem = (header: {
  readonly id: unknown
  readonly createdAt: unknown
  readonly cwd?: unknown
  readonly parentSession?: unknown
  readonly seedLength?: unknown
}): string | undefined => {
  if (typeof header.id !== "string" || header.id.length === 0) return "id must be a non-empty string"
  if (!isNonNegativeInt(header.createdAt)) return "createdAt must be a non-negative safe integer"
  if (header.cwd !== undefined && (typeof header.cwd !== "string" || !isAbsolutePath(header.cwd))) {
    return "cwd must be an absolute path"
  }
  if (header.parentSession !== undefined && (typeof header.parentSession !== "string" || header.parentSession === "")) {
    return "parentSession must be a non-empty string"
  }
  if (header.seedLength !== undefined && !isNonNegativeInt(header.seedLength)) {
    return "seedLength must be a non-negative integer"
  }
  return undefined
}

/**
 * Validates a header given to `create` (S-12).
 *
 * @since 0.1.0
 * @category validation
 */
export const validateHeader = (header: SessionHeader): Result.Result<SessionHeader, SessionError.SessionError> => {
  if ((header.version as number) !== FORMAT_VERSION) {
    return Result.fail(
      SessionError.make("UNSUPPORTED_VERSION", `session header version ${String(header.version)} is not ${FORMAT_VERSION}`, {
        sessionId: String(header.id)
      })
    )
  }
  const problem = headerProblem(header)
  if (problem !== undefined) {
    return Result.fail(SessionError.make("INVALID_EVENT", `invalid session header (S-12): ${problem}`, { sessionId: String(header.id) }))
  }
  const copy: { -readonly [K in keyof SessionHeader]: SessionHeader[K] } = {
    version: FORMAT_VERSION,
    id: header.id,
    createdAt: header.createdAt
  }
  if (header.cwd !== undefined) copy.cwd = header.cwd
  if (header.parentSession !== undefined) copy.parentSession = header.parentSession
  if (header.seedLength !== undefined) copy.seedLength = header.seedLength
  return Result.succeed(Object.freeze(copy))
}

/**
 * A stored header decoded, or why not. `version` mismatches are reported as `"version"` so the
 * caller can fail `UNSUPPORTED_VERSION`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeHeader = (
  value: unknown
): { readonly header: SessionHeader } | { readonly problem: string; readonly version?: unknown } => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: "not a JSON object" }
  const o = value as Record<string, unknown>
  if (o["type"] !== "session") return { problem: `line 1 is not a session header (type ${JSON.stringify(o["type"])})` }
  if (o["version"] !== FORMAT_VERSION) return { problem: "version", version: o["version"] }
  const problem = headerProblem({
    id: o["id"],
    createdAt: o["createdAt"],
    cwd: o["cwd"],
    parentSession: o["parentSession"],
    seedLength: o["seedLength"]
  })
  if (problem !== undefined) return { problem }
  const header: { -readonly [K in keyof SessionHeader]: SessionHeader[K] } = {
    version: FORMAT_VERSION,
    id: o["id"] as SessionId,
    createdAt: o["createdAt"] as number
  }
  if (o["cwd"] !== undefined) header.cwd = o["cwd"] as string
  if (o["parentSession"] !== undefined) header.parentSession = o["parentSession"] as SessionId
  if (o["seedLength"] !== undefined) header.seedLength = o["seedLength"] as number
  return { header }
}

// ---------------------------------------------------------------------------------------------
// events

const envelopeKeys = new Set(["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"])

/** `true` when every number in a parsed JSON value is finite and not -0. */
const parsedIsLossless = (value: unknown): boolean => {
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0)
  if (typeof value !== "object" || value === null) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!parsedIsLossless(value[i])) return false
    return true
  }
  for (const key in value) {
    if (!parsedIsLossless((value as Record<string, unknown>)[key])) return false
  }
  return true
}

/**
 * The verdict on one stored record at position `index`.
 * - `ok`: a valid event;
 * - `torn`: unparsable or out of sequence (droppable after the last `turn/end`, D-5);
 * - `invalid` / `legacy`: a complete record that breaks a rule (never dropped).
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "ok"; readonly event: SessionEvent }
  | { readonly _tag: "torn"; readonly reason: string }
  | { readonly _tag: "invalid"; readonly reason: string }
  | { readonly _tag: "legacy"; readonly reason: string }

/**
 * Checks one parsed stored record expected at `index` against the rules of a seed (S-11, with the
 * same payload and surface checks as `Validate`): closed envelope, non-empty string type,
 * non-negative safe-integer seq (= index) and time, `data` present, legacy rejection (S-9), core
 * payload shape, surface rules against `surface` (which the caller updates with accepted events),
 * and no `-0` or non-finite number. Does not copy the record.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkRecord = (value: unknown, index: number, surface: Surface.State): Verdict => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { _tag: "torn", reason: "not a JSON object" }
  }
  const o = value as Record<string, unknown>
  const seq = o["seq"]
  if (seq !== index) {
    return {
      _tag: "torn",
      reason: isNonNegativeInt(seq) ? `out of sequence: seq ${seq} at position ${index}` : `invalid seq ${JSON.stringify(seq)}`
    }
  }
  const type = o["type"]
  if (typeof type !== "string" || type.length === 0) return { _tag: "invalid", reason: "S-11: type must be a non-empty string" }
  for (const key in o) {
    if (!envelopeKeys.has(key)) return { _tag: "invalid", reason: `S-11: unexpected envelope key ${JSON.stringify(key)} on ${type}` }
  }
  if (!isNonNegativeInt(o["time"])) return { _tag: "invalid", reason: `S-11: ${type}: time must be a non-negative safe integer` }
  const data = o["data"]
  if (data === undefined) return { _tag: "invalid", reason: `S-11: ${type}: data is missing` }
  const payload = Validate.checkPayload(type, type, data as Json.Json)
  if (payload !== undefined) return { _tag: payload.code === "LEGACY_EVENT" ? "legacy" : "invalid", reason: payload.message }
  const surfaceError = Surface.check(surface, type, o["surfaceOp"], o["sourceEventSeqs"], index)
  if (surfaceError !== undefined) return { _tag: "invalid", reason: `${type}: ${surfaceError}` }
  if (!parsedIsLossless(o)) return { _tag: "invalid", reason: `S-3: ${type}: not lossless JSON (-0 or a non-finite number)` }
  return isEnvelope(o) ? { _tag: "ok", event: o } : { _tag: "invalid", reason: `S-11: ${type}: not an event envelope` }
}

/**
 * Validates and snapshots an append batch (D-3) with `Validate.batch` (lossless JSON naming the
 * event type, per-event rules, legacy rejection, contiguity from `nextSeq` else
 * `OUT_OF_SEQUENCE`), naming the session in the error.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateBatch = (
  sessionId: string,
  events: ReadonlyArray<SessionEvent>,
  nextSeq: number
): Result.Result<ReadonlyArray<SessionEvent>, SessionError.SessionError> =>
  Result.mapError(Validate.batch(events, nextSeq), (e) =>
    e.sessionId === undefined
      ? SessionError.make(e.code, `session ${JSON.stringify(sessionId)}: ${e.message}`, {
        sessionId,
        ...(e.cause === undefined ? {} : { cause: e.cause })
      })
      : e)

// ---------------------------------------------------------------------------------------------
// load scan

/**
 * What a backend gives the load scan: `count` records, each parsed on demand.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly count: number
  /** the parsed record, or {@link UNPARSABLE} (including an incomplete last line) */
  readonly parse: (index: number) => unknown
  /** `true` when record `index` is a complete `turn/end` (asked only after a defect) */
  readonly isTurnEnd: (index: number) => boolean
}

/**
 * Marker for a record that is not JSON.
 *
 * @since 0.1.0
 * @category constants
 */
export const UNPARSABLE: unique symbol = Symbol.for("effect-harness/Session/persistence/Records/UNPARSABLE")

/**
 * The result of scanning a stored log.
 *
 * @since 0.1.0
 * @category models
 */
export type ScanResult =
  | {
    readonly _tag: "ok"
    /** the preserved prefix */
    readonly events: Array<SessionEvent>
    /** records dropped as a torn tail (`count - events.length`) */
    readonly dropped: number
    /** the reason the first dropped record was dropped */
    readonly tornReason?: string
  }
  | { readonly _tag: "corrupt" | "legacy"; readonly index: number; readonly reason: string }

/**
 * Marker for a record longer than {@link MAX_EVENT_BYTES}: a reader skips its bytes instead of
 * holding them, and the scan treats it as a torn record (dropped at the tail, corrupt before a
 * later `turn/end`).
 *
 * @since 0.1.0
 * @category constants
 */
export const TOO_LARGE: unique symbol = Symbol.for("effect-harness/Session/persistence/Records/TOO_LARGE")

/**
 * The largest stored record (one event's line): `EventSize.MAX_EVENT_BYTES` (64 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_EVENT_BYTES = EventSize.MAX_EVENT_BYTES

/**
 * The load scan fed one record at a time (D-5), for readers that stream a log: {@link scan} over
 * records pushed in order. After the first torn record it only asks whether later records are a
 * `turn/end` (which makes the log corrupt instead of torn).
 *
 * @since 0.1.0
 * @category validation
 */
export class Scanner {
  private readonly events: Array<SessionEvent> = []
  private readonly surface = Surface.makeState()
  private count = 0
  private torn: { readonly index: number; readonly reason: string } | undefined = undefined
  private failed: ScanResult | undefined = undefined

  /** the index of the first torn record, once one was pushed */
  get tornAt(): number | undefined {
    return this.torn?.index
  }

  /** `true` once the log is known to be unloadable (the result will not change) */
  get done(): boolean {
    return this.failed !== undefined
  }

  /**
   * Pushes the next record: its parsed value ({@link UNPARSABLE}, {@link TOO_LARGE}), or a thunk of
   * it (a thunk is called only while no record is torn), and whether it is a complete `turn/end`
   * (called only after a torn record).
   */
  push(value: () => unknown, isTurnEnd: () => boolean): void {
    const i = this.count++
    if (this.failed !== undefined) return
    if (this.torn !== undefined) {
      if (isTurnEnd()) {
        this.failed = { _tag: "corrupt", index: this.torn.index, reason: `${this.torn.reason}, before a later turn/end (D-5)` }
      }
      return
    }
    const parsed = value()
    const verdict: Verdict = parsed === UNPARSABLE
      ? { _tag: "torn", reason: "incomplete or unparsable record" }
      : parsed === TOO_LARGE
      ? { _tag: "torn", reason: `record larger than ${MAX_EVENT_BYTES} bytes` }
      : checkRecord(parsed, i, this.surface)
    switch (verdict._tag) {
      case "ok":
        this.events.push(verdict.event)
        Surface.apply(this.surface, verdict.event)
        return
      case "legacy":
        this.failed = { _tag: "legacy", index: i, reason: verdict.reason }
        return
      case "invalid":
        this.failed = { _tag: "corrupt", index: i, reason: verdict.reason }
        return
      case "torn":
        this.torn = { index: i, reason: verdict.reason }
        return
    }
  }

  /** The scan's result over the records pushed so far. */
  result(): ScanResult {
    if (this.failed !== undefined) return this.failed
    return this.torn === undefined
      ? { _tag: "ok", events: this.events, dropped: 0 }
      : { _tag: "ok", events: this.events, dropped: this.count - this.torn.index, tornReason: this.torn.reason }
  }
}

/**
 * Scans stored records in one pass (D-5): the preserved prefix, the torn tail to drop, or the
 * first record that makes the log unloadable.
 *
 * @since 0.1.0
 * @category validation
 */
export const scan = (source: Source): ScanResult => {
  const scanner = new Scanner()
  for (let i = 0; i < source.count && !scanner.done; i++) scanner.push(() => source.parse(i), () => source.isTurnEnd(i))
  return scanner.result()
}
