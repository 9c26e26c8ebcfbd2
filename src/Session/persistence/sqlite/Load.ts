/**
 * Loading a stored session (`Sqlite` module doc): the header and events read in one transaction,
 * checked (`Records.scan`) and repaired; a read-only load that finds something to repair asks for
 * the write lock (`NeedsWrite`) and is run again under it.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Repair from "../../Repair.js"
import * as SessionError from "../../SessionError.js"
import { FORMAT_VERSION } from "../../SessionEvent.js"
import type { Loaded } from "../../SessionPersistence.js"
import * as Lock from "../Lock.js"
import * as Records from "../Records.js"
import { headerOf, insertEvents, notFound, rowEvent } from "./Rows.js"
import type { Run } from "./Rows.js"
import { NeedsWrite } from "./Store.js"
import type { Store } from "./Store.js"


/** The loads of an instance. */
export const make = (store: Store) => {
  const { file, entries, held, lockStoreIn } = store

  const headerError = (id: string, decoded: { readonly problem: string; readonly version?: unknown }) =>
    decoded.problem === "version"
      ? SessionError.make(
        "UNSUPPORTED_VERSION",
        `${file}: session ${JSON.stringify(id)} has format version ${JSON.stringify(decoded.version)} (expected ${FORMAT_VERSION})`,
        { sessionId: id, file }
      )
      : SessionError.make("CORRUPT_LOG", `${file}: session ${JSON.stringify(id)}: invalid header: ${decoded.problem}`, {
        sessionId: id,
        file
      })

  const loadIn = (
    run: Run,
    id: string,
    mode: "read" | "write" | "snapshot"
  ): Effect.Effect<Loaded, SessionError.SessionError | NeedsWrite> =>
    Effect.gen(function*() {
      const headerRows = yield* run("SELECT * FROM sessions WHERE id = ?", [id])
      const headerRow = headerRows[0]
      if (headerRow === undefined) {
        if (mode !== "snapshot" && entries.get(id)?.stored === true) entries.delete(id)
        return yield* Effect.fail(notFound(id))
      }
      if (mode !== "snapshot") yield* Lock.check(lockStoreIn(run, id), id)
      const decoded = headerOf(headerRow)
      if ("problem" in decoded) return yield* Effect.fail(headerError(id, decoded))
      const rows = yield* run(
        "SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq",
        [id]
      )
      const result = Records.scan({
        count: rows.length,
        parse: (i) => rowEvent(rows[i]!),
        isTurnEnd: (i) => rows[i]!["type"] === "turn/end" && rowEvent(rows[i]!) !== Records.UNPARSABLE
      })
      if (result._tag !== "ok") {
        const seq = rows[result.index]!["seq"]
        return yield* Effect.fail(
          SessionError.make(
            result._tag === "legacy" ? "LEGACY_EVENT" : "CORRUPT_LOG",
            `${file}: session ${JSON.stringify(id)}, events row ${result.index + 1} (seq ${String(seq)}): ${result.reason}`,
            { sessionId: id, file, line: result.index + 1 }
          )
        )
      }
      const closers = Repair.repair(result.events)
      const events = closers.length === 0 ? result.events : result.events.concat(closers)
      const loaded: Loaded = { header: decoded.header, events, repaired: closers, truncated: result.dropped }
      if (mode === "snapshot") return loaded
      if (mode === "read" && (result.dropped > 0 || closers.length > 0)) return yield* Effect.fail(new NeedsWrite())
      if (result.dropped > 0) {
        yield* run("DELETE FROM events WHERE session_id = ? AND seq >= ?", [id, result.events.length])
      }
      yield* insertEvents(run, id, closers)
      entries.set(id, { header: decoded.header, stored: true, dirty: entries.get(id)?.dirty ?? false, underLock: held.has(id) })
      return loaded
    })

  /** load inside a write transaction, repairing when needed */
  const loadRepairing = (run: Run, id: string): Effect.Effect<Loaded, SessionError.SessionError> =>
    loadIn(run, id, "write").pipe(
      Effect.catchTag("NeedsWrite", () => Effect.die(new Error("unreachable: a writable load never asks for write access")))
    )

  return { loadIn, loadRepairing }
}
