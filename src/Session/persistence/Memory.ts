/**
 * The in-memory `SessionPersistence` backend (tests, embedders that need no durability). It keeps
 * each materialized session as JSON text, exactly like a JSONL file minus the file: a header record
 * and one JSON text per event. So load parses, scans and repairs with the same rules as the
 * durable backends (`Records.scan`, `Repair.repair`), and a {@link Storage} can be shared by
 * several backend instances to play "a restarted process" or "a second writer".
 *
 * Semantics (D-1..D-8, DEC-4):
 * - `create` records intent only, in this instance; it fails `SESSION_ALREADY_EXISTS` when the id
 *   is tracked by this instance or stored (D-2). Intent lives until the first append or until this
 *   instance releases the id's lock, whichever comes first (a never-written id is then forgotten).
 * - Releasing a lock forgets the session in this instance (storage keeps its log; a later append
 *   adopts it again), so sessions created and disposed leave nothing behind but their stored log:
 *   the storage itself holds every materialized session in memory for its lifetime.
 * - The first non-empty `append` stores header and batch in one synchronous step (atomic, D-1);
 *   an empty batch is a no-op. A batch is validated and snapshotted first (D-3,
 *   `Records.validateBatch`): lossless JSON naming the event type, legacy rejection, contiguity
 *   from the stored next seq (`OUT_OF_SEQUENCE`); nothing is written on failure. Appending to a
 *   session this instance only knows from storage first adopts it (load + repair).
 * - `load` (D-4, D-5): unknown or never-appended → `SESSION_NOT_FOUND`; version ≠ 0 →
 *   `UNSUPPORTED_VERSION`; a legacy event → `LEGACY_EVENT`; a defect before a later `turn/end` →
 *   `CORRUPT_LOG`; a torn tail is dropped physically; closers are stored before returning.
 * - `lock` is exclusive per storage (so two instances over one storage contend like two
 *   processes); a second holder fails `SESSION_LOCKED`; closing the scope releases it.
 * - `snapshot` runs the same checks as `load` and repairs in memory only (nothing stored changes).
 * - Every append is durable at once (`sync` is a no-op).
 * - `locate` → `undefined` (no path).
 *
 * All state changes happen in synchronous sections, so every operation is atomic.
 *
 * Memory: this backend holds everything it stores, for its lifetime (every event of every session,
 * as JSON text). A store-backed live session drops the chunk events of its persisted assistant
 * messages from its own memory and reads them back from here (decision 0017), so over this
 * backend the chunks are held once, as text, instead of twice.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Json from "../../Llm/Json.js"
import type { SessionId } from "../../Llm/Message.js"
import * as Repair from "../Repair.js"
import * as SessionError from "../SessionError.js"
import type { SessionEvent, SessionHeader } from "../SessionEvent.js"
import type { Loaded, Service, SessionSummary } from "../SessionPersistence.js"
import { SessionPersistence } from "../SessionPersistence.js"
import * as Records from "./Records.js"
import * as Summary from "./Summary.js"
import type * as Tracked from "./Tracked.js"

/**
 * One stored session: the header record (JSON text of `{type: "session", ...header}`) and one
 * JSON text per event.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredSession {
  header: string
  readonly records: Array<string>
}

/**
 * The shared in-memory storage: materialized sessions and held locks.
 *
 * @since 0.1.0
 * @category models
 */
export interface Storage {
  readonly sessions: Map<string, StoredSession>
  readonly locks: Set<string>
}

/**
 * Fresh, empty storage.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStorage = (): Storage => ({ sessions: new Map(), locks: new Set() })

/**
 * Plants a session in storage verbatim, bypassing validation (tests: what a crash, an older
 * version or a hand edit leaves behind). A record given as a string is stored as is (it may be
 * torn or not JSON).
 *
 * @since 0.1.0
 * @category testing
 */
export const plant = (
  storage: Storage,
  headerRecord: Record<string, unknown>,
  records: ReadonlyArray<unknown>
): void => {
  storage.sessions.set(String(headerRecord["id"]), {
    header: JSON.stringify({ type: "session", ...headerRecord }),
    records: records.map((r) => (typeof r === "string" ? r : JSON.stringify(r)))
  })
}

/**
 * The stored text of a session (header line then one line per event), or `"<absent>"`.
 *
 * @since 0.1.0
 * @category testing
 */
export const dump = (storage: Storage, id: string): string => {
  const s = storage.sessions.get(id)
  return s === undefined ? "<absent>" : [s.header, ...s.records].map((l) => `${l}\n`).join("")
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return Records.UNPARSABLE
  }
}

const where = (id: string) => ({ sessionId: id, file: `memory:${id}` })

/**
 * A backend instance over `storage` (default: fresh storage).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (storage: Storage = makeStorage()): Effect.Effect<Service & Tracked.WithTracked> =>
  Effect.sync(() => {
    /** intents and adopted sessions of this instance */
    const tracked = new Map<string, SessionHeader>()
    /** ids created here and not yet written: a stored log under such an id is someone else's (D-8) */
    const intents = new Set<string>()
    /** ids whose lock this instance holds */
    const held = new Set<string>()
    /** intents recorded while this instance held the id's lock (forgotten with the lock) */
    const intentsUnderLock = new Set<string>()

    const loadSync = (id: string, write = true): Result.Result<Loaded, SessionError.SessionError> => {
      const stored = storage.sessions.get(id)
      if (stored === undefined) {
        return Result.fail(SessionError.make("SESSION_NOT_FOUND", `no stored session ${JSON.stringify(id)}`, { sessionId: id }))
      }
      const decoded = Records.decodeHeader(parse(stored.header))
      if ("problem" in decoded) {
        return Result.fail(
          decoded.problem === "version"
            ? SessionError.make(
              "UNSUPPORTED_VERSION",
              `session ${JSON.stringify(id)}: header version ${JSON.stringify(decoded.version)} is not 0 (no migration)`,
              { ...where(id), line: 1 }
            )
            : SessionError.make("CORRUPT_LOG", `session ${JSON.stringify(id)}: ${decoded.problem}`, { ...where(id), line: 1 })
        )
      }
      const parsed: Array<unknown> = stored.records.map(parse)
      const result = Records.scan({
        count: parsed.length,
        parse: (i) => parsed[i],
        isTurnEnd: (i) => {
          const v = parsed[i]
          return typeof v === "object" && v !== null && (v as { type?: unknown }).type === "turn/end"
        }
      })
      if (result._tag !== "ok") {
        return Result.fail(SessionError.make(
          result._tag === "legacy" ? "LEGACY_EVENT" : "CORRUPT_LOG",
          `session ${JSON.stringify(id)}: record ${result.index}: ${result.reason}`,
          { ...where(id), line: result.index + 2 }
        ))
      }
      const closers = Repair.repair(result.events)
      const events = Result.getOrThrow(Json.snapshotOf([...result.events, ...closers]))
      if (!write) return Result.succeed({ header: decoded.header, events, repaired: closers, truncated: result.dropped })
      // durable before returning: torn tail dropped, closers stored
      stored.records.length = result.events.length
      for (const c of closers) stored.records.push(Records.encodeEvent(c))
      tracked.set(id, decoded.header)
      intents.delete(id)
      return Result.succeed({ header: decoded.header, events, repaired: closers, truncated: result.dropped })
    }

    /** `append`, synchronously: the failure, else `undefined` (stored). */
    const appendSync = (id: SessionId, events: ReadonlyArray<SessionEvent>): SessionError.SessionError | undefined => {
      if (events.length === 0) return undefined
      let stored = storage.sessions.get(id)
      if (stored !== undefined && intents.has(id)) {
        return SessionError.make(
          "SESSION_ALREADY_EXISTS",
          `session ${JSON.stringify(id)} was stored by another writer meanwhile (load/resume it instead)`,
          { sessionId: id }
        )
      }
      if (stored !== undefined && !tracked.has(id)) {
        const adopted = loadSync(id)
        if (Result.isFailure(adopted)) return adopted.failure
        stored = storage.sessions.get(id)
      }
      const header = tracked.get(id)
      if (header === undefined) {
        return SessionError.make("SESSION_NOT_FOUND", `session ${JSON.stringify(id)} was never created`, {
          sessionId: id
        })
      }
      const nextSeq = stored === undefined ? 0 : stored.records.length
      const batch = Records.validateBatch(id, events, nextSeq)
      if (Result.isFailure(batch)) return batch.failure
      const lines = batch.success.map(Records.encodeEvent)
      if (stored === undefined) {
        storage.sessions.set(id, { header: JSON.stringify(Records.headerRecord(header)), records: lines })
        intents.delete(id)
      } else {
        for (const line of lines) stored.records.push(line)
      }
      return undefined
    }

    const service: Service & Tracked.WithTracked = {
      tracked: () => ({ sessions: tracked.size + intents.size + intentsUnderLock.size, serializing: 0, held: held.size, openFiles: 0 }),
      locate: () => undefined,
      create: (header) =>
        Effect.suspend(() => {
          const valid = Records.validateHeader(header)
          if (Result.isFailure(valid)) return Effect.fail(valid.failure)
          const id = valid.success.id
          if (tracked.has(id) || storage.sessions.has(id)) {
            return Effect.fail(SessionError.make(
              "SESSION_ALREADY_EXISTS",
              `session ${JSON.stringify(id)} already exists (load/resume it instead)`,
              { sessionId: id }
            ))
          }
          tracked.set(id, valid.success)
          intents.add(id)
          if (held.has(id)) intentsUnderLock.add(id)
          return Effect.void
        }),
      // every append is durable at once: always possible `now`
      append: Object.assign(
        (id: SessionId, events: ReadonlyArray<SessionEvent>) =>
          Effect.suspend(() => {
            const failure = appendSync(id, events)
            return failure === undefined ? Effect.void : Effect.fail(failure)
          }),
        { now: (id: SessionId, events: ReadonlyArray<SessionEvent>) => appendSync(id, events) ?? "written" }
      ),
      sync: () => Effect.void,
      load: (id) => Effect.suspend(() => Effect.fromResult(loadSync(id))),
      snapshot: (id) => Effect.suspend(() => Effect.fromResult(loadSync(id, false))),
      list: () =>
        Effect.sync(() => {
          const out: Array<SessionSummary> = []
          for (const stored of storage.sessions.values()) {
            const decoded = Records.decodeHeader(parse(stored.header))
            if ("problem" in decoded) continue
            const events = stored.records.map(parse).filter((e): e is SessionEvent =>
              typeof e === "object" && e !== null && typeof (e as { type?: unknown }).type === "string"
            )
            out.push(Summary.fromEvents(decoded.header, events))
          }
          return out.sort(Summary.order)
        }),
      exists: (id) => Effect.sync(() => storage.sessions.has(id)),
      remove: (id) =>
        Effect.suspend(() => {
          if (storage.locks.has(id)) {
            return Effect.fail(SessionError.make("SESSION_LOCKED", `session ${JSON.stringify(id)} is locked by another writer`, {
              sessionId: id
            }))
          }
          if (!storage.sessions.delete(id)) {
            return Effect.fail(SessionError.make("SESSION_NOT_FOUND", `no stored session ${JSON.stringify(id)}`, { sessionId: id }))
          }
          tracked.delete(id)
          return Effect.void
        }),
      lock: (id: SessionId) =>
        Effect.asVoid(Effect.acquireRelease(
          Effect.suspend(() => {
            if (storage.locks.has(id)) {
              return Effect.fail(SessionError.make("SESSION_LOCKED", `session ${JSON.stringify(id)} is locked by another writer`, {
                sessionId: id
              }))
            }
            storage.locks.add(id)
            held.add(id)
            return Effect.void
          }),
          // the instance forgets the session with its lock (storage keeps the log; a later writer
          // adopts it again), and a created but never-written session leaves nothing behind
          () =>
            Effect.sync(() => {
              storage.locks.delete(id)
              held.delete(id)
              if (storage.sessions.has(id) || intents.has(id) || intentsUnderLock.has(id)) {
                tracked.delete(id)
                intents.delete(id)
              }
              intentsUnderLock.delete(id)
            })
        ))
    }
    return service
  })

/**
 * The in-memory backend over fresh storage (one storage per layer build). Fresh at every use
 * (Effect 4 reuses a layer an enclosing `provide` already built), so two uses never share storage.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SessionPersistence> = Layer.fresh(
  Layer.effect(SessionPersistence, Effect.suspend(() => make()))
)

/**
 * The in-memory backend over the given storage.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (storage: Storage): Layer.Layer<SessionPersistence> =>
  Layer.effect(SessionPersistence, make(storage))
