/**
 * Validation of appends (S-3..S-9), seeds (S-11) and persisted batches (D-3).
 *
 * Strictness (DEC-10, the same for append, seed, batch and load):
 * - Everything must be lossless JSON (V-11); the value is copied and deep-frozen in the same pass
 *   (`Json.snapshot`), so the stored event is detached from the caller (S-4).
 * - Legacy shapes fail with `LEGACY_EVENT` before anything else about the payload: type
 *   `request/header-delta` and `request/header` with reason `fallback` (S-9).
 * - Core payloads (the types of `SessionEvent.payloadSchemas`) are validated structurally: every
 *   declared field with its type, open unions accepting unknown lossless-JSON members, extra keys
 *   kept verbatim. In particular `request/header` needs a non-empty `config.provider` and
 *   `config.model`, and `assistant/message` a non-empty provenance `provider` and `model` (S-11).
 * - Unknown (extension) types accept any lossless-JSON `data`, including `null` (V-2).
 * - Envelope keys are closed: an append input has only `type`, `data`, `surfaceOp`,
 *   `sourceEventSeqs`; a stored/seeded event only `type`, `seq`, `time`, `data`, `surfaceOp`,
 *   `sourceEventSeqs` (S-11). `type` must be a non-empty string.
 * - Surface metadata is checked against the surface built so far (S-5..S-8, see `Surface`); a
 *   persisted batch (D-3) is checked without the surface (the backend has no live surface): the
 *   shape rules of S-5..S-7 that need no surface still apply at seed/load time.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Json from "../Llm/Json.js"
import * as ChunkFastPath from "./ChunkFastPath.js"
import * as EventSize from "./EventSize.js"
import * as SessionError from "./SessionError.js"
import type { SessionEvent } from "./SessionEvent.js"
import { isCoreType, isEnvelope, payloadSchemas } from "./SessionEvent.js"
import * as Surface from "./Surface.js"

const appendKeys: ReadonlySet<string> = new Set(["type", "data", "surfaceOp", "sourceEventSeqs"])
const storedKeys: ReadonlySet<string> = new Set(["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"])

/**
 * Batches vouched for by {@link committedBatch}: frozen arrays of events a live session committed
 * (built by {@link appendInput}, deeply frozen, already valid), which {@link batch} takes as is.
 */
const vouched = new WeakSet<ReadonlyArray<SessionEvent>>()

const guards: Record<string, (u: unknown) => boolean> = {}
for (const [type, schema] of Object.entries(payloadSchemas)) guards[type] = Schema.is(schema as Schema.Top)

const isSafeNat = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

const invalid = (where: string, message: string): SessionError.SessionError =>
  SessionError.make("INVALID_EVENT", `${where}: ${message}`)

const describeType = (raw: unknown): string => {
  if (typeof raw !== "object" || raw === null) return "?"
  try {
    const t = (raw as { type?: unknown }).type
    return typeof t === "string" ? t : "?"
  } catch {
    return "?"
  }
}

/**
 * Checks the payload of an event of `type` (legacy rejection, core payload schema). Returns the
 * error or `undefined`.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkPayload = (where: string, type: string, data: Json.Json): SessionError.SessionError | undefined => {
  if (type === "request/header-delta") {
    return SessionError.make("LEGACY_EVENT", `${where}: S-9: legacy event type request/header-delta is not supported`)
  }
  if (
    type === "request/header" && typeof data === "object" && data !== null && !Array.isArray(data) &&
    (data as Json.JsonObject)["reason"] === "fallback"
  ) {
    return SessionError.make("LEGACY_EVENT", `${where}: S-9: legacy request/header reason "fallback" is not supported`)
  }
  if (!isCoreType(type)) return undefined
  if (type === "assistant/chunk" && ChunkFastPath.isChunkPayload(data)) return undefined
  const guard = guards[type] as (u: unknown) => boolean
  if (guard(data)) return undefined
  const schema = payloadSchemas[type] as Schema.Top
  const detail = Result.match(Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)(data), {
    onFailure: (e) => e.message,
    onSuccess: () => "invalid payload"
  })
  return invalid(where, `invalid ${type} payload: ${detail}`)
}

/**
 * Validates an append input for the event about to get `seq` and `time` against the live
 * surface, and returns the stored, deeply frozen event (S-3..S-9). Does not mutate `surface`.
 *
 * @since 0.1.0
 * @category validation
 */
export const appendInput = (
  surface: Surface.State,
  input: unknown,
  seq: number,
  time: number
): Result.Result<SessionEvent, SessionError.SessionError> => {
  const fast = ChunkFastPath.chunkEvent(input, seq, time)
  if (fast !== undefined) return Result.succeed(fast as SessionEvent)
  return appendInputGeneric(surface, input, seq, time)
}

/**
 * {@link appendInput} without the `assistant/chunk` fast path (`ChunkFastPath`): the reference
 * the fast path must agree with (same acceptance, same stored event). For equivalence tests.
 *
 * @since 0.1.0
 * @category validation
 */
export const appendInputGeneric = (
  surface: Surface.State,
  input: unknown,
  seq: number,
  time: number
): Result.Result<SessionEvent, SessionError.SessionError> => {
  const snap = Json.snapshot(input)
  if (Result.isFailure(snap)) {
    return Result.fail(invalid(`append (${describeType(input)})`, `S-3: ${snap.failure.message}`))
  }
  const value = snap.success
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Result.fail(invalid("append", "an event must be an object"))
  }
  const obj = value as Json.JsonObject
  const type = obj["type"]
  if (typeof type !== "string" || type.length === 0) {
    return Result.fail(invalid("append", "type must be a non-empty string"))
  }
  const where = `append (${type})`
  for (const key of Object.keys(obj)) {
    if (!appendKeys.has(key)) return Result.fail(invalid(where, `unexpected envelope key "${key}"`))
  }
  if (!("data" in obj)) return Result.fail(invalid(where, "data is required"))
  const data = obj["data"] as Json.Json
  const payloadError = checkPayload(where, type, data)
  if (payloadError !== undefined) return Result.fail(payloadError)
  const size = EventSize.oversize(data)
  if (size !== undefined) {
    return Result.fail(invalid(where, `the event is ${size} bytes, over the limit of ${EventSize.MAX_EVENT_BYTES} bytes for one event`))
  }
  const surfaceOp = obj["surfaceOp"]
  const sources = obj["sourceEventSeqs"]
  const surfaceError = Surface.check(surface, type, surfaceOp, sources, seq)
  if (surfaceError !== undefined) return Result.fail(invalid(where, surfaceError))
  return build(where, type, seq, time, data, surfaceOp, sources)
}

const build = (
  where: string,
  type: string,
  seq: number,
  time: number,
  data: Json.Json,
  surfaceOp: Json.Json | undefined,
  sources: Json.Json | undefined
): Result.Result<SessionEvent, SessionError.SessionError> => {
  const event: Record<string, unknown> = { type, seq, time, data }
  if (surfaceOp !== undefined) event["surfaceOp"] = surfaceOp
  if (sources !== undefined) event["sourceEventSeqs"] = sources
  Object.freeze(event)
  return isEnvelope(event) ? Result.succeed(event) : Result.fail(invalid(where, "not an event envelope"))
}

/**
 * A frozen copy of `events` that {@link batch} accepts without copying or re-validating each
 * event (only seq contiguity and `time` are checked). Use it ONLY for events a live session
 * committed (what `Session.make`'s `onCommit` receives): they were validated against the live
 * surface (a stricter check than a batch's) and are deeply frozen, so validating them again would
 * give the same result. The D-7 write path of `SessionStore` uses it.
 *
 * @since 0.1.0
 * @category validation
 */
export const committedBatch = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<SessionEvent> => {
  const frozen = Object.freeze(events.slice())
  vouched.add(frozen)
  return frozen
}

/**
 * Validates one stored event envelope expected at `expectedSeq`: lossless JSON, closed envelope
 * keys, string type, non-negative safe-integer `seq` and `time`, `data` present, legacy rejection,
 * core payload. When `surface` is given the surface rules are checked against it too (but the
 * state is not updated). Returns a detached, deeply frozen event.
 *
 * @since 0.1.0
 * @category validation
 */
export const storedEvent = (
  raw: unknown,
  expectedSeq: number,
  surface?: Surface.State
): Result.Result<SessionEvent, SessionError.SessionError> => {
  const fast = ChunkFastPath.storedChunkEvent(raw, expectedSeq)
  if (fast !== undefined) return Result.succeed(fast as SessionEvent)
  return storedEventGeneric(raw, expectedSeq, surface)
}

/**
 * {@link storedEvent} without the `assistant/chunk` fast path: the reference the fast path must
 * agree with. For equivalence tests.
 *
 * @since 0.1.0
 * @category validation
 */
export const storedEventGeneric = (
  raw: unknown,
  expectedSeq: number,
  surface?: Surface.State
): Result.Result<SessionEvent, SessionError.SessionError> => {
  const snap = Json.snapshot(raw)
  if (Result.isFailure(snap)) {
    return Result.fail(invalid(`event ${expectedSeq} (${describeType(raw)})`, `S-3: ${snap.failure.message}`))
  }
  const value = snap.success
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Result.fail(invalid(`event ${expectedSeq}`, "an event must be an object"))
  }
  const obj = value as Json.JsonObject
  const type = obj["type"]
  if (typeof type !== "string" || type.length === 0) {
    return Result.fail(invalid(`event ${expectedSeq}`, "S-11: type must be a non-empty string"))
  }
  const where = `event ${expectedSeq} (${type})`
  for (const key of Object.keys(obj)) {
    if (!storedKeys.has(key)) return Result.fail(invalid(where, `S-11: unexpected envelope key "${key}"`))
  }
  const seq = obj["seq"]
  const time = obj["time"]
  if (!isSafeNat(seq)) return Result.fail(invalid(where, "S-11: seq must be a non-negative safe integer"))
  if (!isSafeNat(time)) return Result.fail(invalid(where, "S-11: time must be a non-negative safe integer"))
  if (seq !== expectedSeq) return Result.fail(invalid(where, `S-11: seq ${seq} must equal its index ${expectedSeq}`))
  if (!("data" in obj)) return Result.fail(invalid(where, "S-11: data is required"))
  const data = obj["data"] as Json.Json
  const payloadError = checkPayload(where, type, data)
  if (payloadError !== undefined) return Result.fail(payloadError)
  const size = EventSize.oversize(data)
  if (size !== undefined) {
    return Result.fail(invalid(where, `the event is ${size} bytes, over the limit of ${EventSize.MAX_EVENT_BYTES} bytes for one event`))
  }
  const surfaceOp = obj["surfaceOp"]
  const sources = obj["sourceEventSeqs"]
  const surfaceError = Surface.check(surface ?? Surface.makeState(), type, surfaceOp, sources, seq)
  // without a surface, replace endpoints cannot be resolved: only S-5..S-7 shape rules apply
  if (surfaceError !== undefined && (surface !== undefined || !surfaceError.startsWith("S-8"))) {
    return Result.fail(invalid(where, surfaceError))
  }
  return build(where, type, seq, time, data, surfaceOp, sources)
}

/**
 * Validates a whole seed (S-11) into `surface` (which is updated as events are accepted; pass a
 * fresh state). All-or-nothing for the caller: on failure discard `surface`.
 *
 * @since 0.1.0
 * @category validation
 */
export const seedInto = (
  surface: Surface.State,
  events: ReadonlyArray<unknown>
): Result.Result<ReadonlyArray<SessionEvent>, SessionError.SessionError> => {
  const out: Array<SessionEvent> = new Array(events.length)
  for (let i = 0; i < events.length; i++) {
    const r = storedEvent(events[i], i, surface)
    if (Result.isFailure(r)) return Result.fail(r.failure)
    Surface.apply(surface, r.success)
    out[i] = r.success
  }
  return Result.succeed(Object.freeze(out))
}

/**
 * Validates a whole log as a seed (S-11): every event, contiguous from 0, surface rules included.
 * Returns the detached, deeply frozen events.
 *
 * @since 0.1.0
 * @category validation
 */
export const seed = (
  events: ReadonlyArray<unknown>
): Result.Result<ReadonlyArray<SessionEvent>, SessionError.SessionError> => seedInto(Surface.makeState(), events)

/**
 * Validates a persisted batch (D-3): each event per {@link storedEvent} (without surface
 * resolution), contiguous from `nextSeq` (else `OUT_OF_SEQUENCE`). Nothing is partially accepted.
 *
 * @since 0.1.0
 * @category validation
 */
export const batch = (
  events: ReadonlyArray<unknown>,
  nextSeq: number
): Result.Result<ReadonlyArray<SessionEvent>, SessionError.SessionError> => {
  const out: Array<SessionEvent> = new Array(events.length)
  const trusted = vouched.has(events as ReadonlyArray<SessionEvent>)
  for (let i = 0; i < events.length; i++) {
    const raw = events[i]
    const expected = nextSeq + i
    let seqOf: unknown
    try {
      seqOf = typeof raw === "object" && raw !== null ? (raw as { seq?: unknown }).seq : undefined
    } catch {
      seqOf = undefined
    }
    if (seqOf !== expected) {
      return Result.fail(
        SessionError.make(
          "OUT_OF_SEQUENCE",
          `event ${i} of the batch (${describeType(raw)}) has seq ${String(seqOf)}; expected ${expected}`
        )
      )
    }
    // a committed event is immutable and already valid (its seq was checked above; its time is
    // checked again because a live append takes it from the clock unchecked)
    if (trusted && isSafeNat((raw as SessionEvent).time)) {
      out[i] = raw as SessionEvent
      continue
    }
    const r = storedEvent(raw, expected)
    if (Result.isFailure(r)) return Result.fail(r.failure)
    out[i] = r.success
  }
  return Result.succeed(Object.freeze(out))
}
