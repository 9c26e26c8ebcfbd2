/**
 * `append.now` (issue 20): a batch of a held, stored log whose descriptor is open and idle, with
 * no operation of the session in flight and nothing to fsync, written by one synchronous `write`.
 *
 * @since 0.1.0
 * @internal
 */
import type * as FileSystem from "effect/FileSystem"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import type { SessionId } from "../../../Llm/Message.js"
import type { SessionEvent } from "../../SessionEvent.js"
import type { AppendNow, AppendOptions } from "../../SessionPersistence.js"
import * as Records from "../Records.js"
import type { Store } from "./Store.js"


/**
 * The OS descriptor of an open file when the file system is Node's: `NodeFileSystem`'s handles
 * carry it as `fd` at run time, but Effect 4 took it out of the public `File` type, so it is read
 * with a guard; `undefined` for any other `File` (then `append.now` answers `"later"`).
 */
const descriptorOf = (handle: FileSystem.File): number | undefined =>
  "fd" in handle && typeof handle.fd === "number" ? handle.fd : undefined

/** The synchronous append of an instance. */
export const make = (store: Store) => {
  const { entries, serialized, held, pool, queues, saveFailed } = store

  /**
   * `append.now` (issue 20): a batch of a held, stored log whose descriptor is open and idle,
   * with no operation of the session in flight and nothing to fsync, written by one synchronous
   * `write`. A failed write is taken back (truncated) and answered `"later"`: the effectful path
   * writes it again and reports what fails, in one place (a failed truncation is reported here).
   */
  const appendNow = (id: SessionId, events: ReadonlyArray<SessionEvent>, options?: AppendOptions): AppendNow => {
    if (events.length === 0) return "written"
    if (options?.sync !== false || !held.has(id) || queues.has(id) || serialized.busy(id)) return "later"
    const entry = entries.get(id)
    if (entry === undefined || !entry.stored) return "later"
    const handle = pool.peek(id)
    const fd = handle === undefined ? undefined : descriptorOf(handle)
    if (fd === undefined) return "later"
    const valid = Records.validateBatch(id, events, entry.nextSeq)
    if (Result.isFailure(valid)) return valid.failure
    let text = ""
    for (const event of valid.success) text += `${Records.encodeEvent(event)}\n`
    const bytes = Buffer.from(text, "utf8")
    const before = entry.size
    try {
      let written = 0
      while (written < bytes.byteLength) written += NodeFs.writeSync(fd, bytes, written)
    } catch {
      try {
        // drop whatever part of the batch reached the file (D-9), then let the effectful path
        // write it again and report what fails
        NodeFs.ftruncateSync(fd, before)
      } catch (truncate) {
        // the file may keep a partial batch: say so now rather than write after it
        return saveFailed(entry.path, "truncate a failed append to", id)(truncate)
      }
      return "later"
    }
    entry.size = before + bytes.byteLength
    entry.nextSeq += valid.success.length
    entry.dirty = true
    return "written"
  }

  return appendNow
}
