/**
 * `list` (D-6): per log, the header line, the first 64 KiB to find the first prompt (up to 1 MiB
 * when the first `user/message` is further down) and the last 64 KiB backwards until it has the
 * last event's time and turn number (`Summary`); orphans of a bucket are recovered first.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as path from "node:path"
import type * as SessionError from "../../SessionError.js"
import type { SessionEvent } from "../../SessionEvent.js"
import type { SessionSummary } from "../../SessionPersistence.js"
import * as IdEncoding from "../IdEncoding.js"
import * as Records from "../Records.js"
import * as Summary from "../Summary.js"
import { isReason, KIND, orphanRe } from "./Store.js"
import type { Store } from "./Store.js"


const WINDOW = 64 * 1024
const PROMPT_SCAN_LIMIT = 1024 * 1024
const NL = 10

const utf8 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")

const tryParse = (line: string): unknown => {
  try {
    return JSON.parse(line)
  } catch {
    return Records.UNPARSABLE
  }
}

/** The listing of an instance; `recoverOrphans` recovers the orphans of a bucket's files. */
export const make = (
  store: Store,
  recoverOrphans: (dir: string, names: ReadonlyArray<string>) => Effect.Effect<void>
) => {
  const { fs, root, pool, buckets, ioError } = store

  const summarize = (file: string, expectedId: string) =>
    pool.withSlot(Effect.scoped(
      Effect.gen(function*() {
        const handle = yield* fs.open(file, { flag: "r" })
        const size = Number((yield* handle.stat).size)
        if (size === 0) return undefined
        const readAt = (offset: number, length: number) =>
          Effect.gen(function*() {
            const buffer = new Uint8Array(length)
            yield* handle.seek(BigInt(offset), "start")
            let filled = 0
            while (filled < length) {
              const n = Number(yield* handle.read(buffer.subarray(filled)))
              if (n === 0) break
              filled += n
            }
            return buffer.subarray(0, filled)
          })
        const head = yield* readAt(0, Math.min(size, WINDOW))
        const headerEnd = head.indexOf(NL)
        if (headerEnd < 0) return undefined
        const decoded = Records.decodeHeader(tryParse(utf8(head.subarray(0, headerEnd))))
        if ("problem" in decoded || decoded.header.id !== expectedId) return undefined
        const header = decoded.header

        const bodyStart = headerEnd + 1
        // the first event's turn number: where this log's turn numbering starts (Summary.make)
        const firstEnd = head.indexOf(NL, bodyStart)
        const firstEvent = firstEnd < 0 ? undefined : tryParse(utf8(head.subarray(bodyStart, firstEnd)))
        const firstTurn = typeof firstEvent === "object" && firstEvent !== null && !Array.isArray(firstEvent)
          ? Summary.turnOf(firstEvent as { type: string; data: unknown })
          : undefined

        // first prompt: complete lines forward from the header, up to PROMPT_SCAN_LIMIT bytes
        let firstPrompt: string | undefined
        let carry: Uint8Array = new Uint8Array(0)
        for (let pos = bodyStart; firstPrompt === undefined && pos < size && pos < PROMPT_SCAN_LIMIT;) {
          const chunk = pos < head.byteLength ? head.subarray(pos) : yield* readAt(pos, Math.min(WINDOW, size - pos))
          pos += chunk.byteLength
          const buffer = carry.byteLength === 0 ? chunk : Buffer.concat([carry, chunk])
          const k = buffer.lastIndexOf(NL)
          carry = buffer.subarray(k + 1)
          if (k < 0) continue
          for (const line of utf8(buffer.subarray(0, k)).split("\n")) {
            if (!line.includes("\"user/message\"")) continue
            const value = tryParse(line)
            if (typeof value === "object" && value !== null && !Array.isArray(value)) {
              firstPrompt = Summary.promptOf(value as SessionEvent)
              if (firstPrompt !== undefined) break
            }
          }
        }

        // tail: the end of the last complete line (a torn last line is ignored) ...
        let end = bodyStart
        for (let pos = size; pos > bodyStart;) {
          const start = Math.max(bodyStart, pos - WINDOW)
          const k = (yield* readAt(start, pos - start)).lastIndexOf(NL)
          if (k >= 0) {
            end = start + k + 1
            break
          }
          pos = start
        }
        // ... then complete lines backwards until the last event's time and turn number are known
        let lastTime: number | undefined
        let lastTurn: number | undefined
        carry = new Uint8Array(0)
        for (let pos = end; pos > bodyStart && (lastTime === undefined || lastTurn === undefined);) {
          const start = Math.max(bodyStart, pos - WINDOW)
          const chunk = yield* readAt(start, pos - start)
          const buffer = carry.byteLength === 0 ? chunk : Buffer.concat([chunk, carry])
          // the bytes up to the first newline belong to a line that starts in an earlier window
          const k = start > bodyStart ? buffer.indexOf(NL) : -1
          carry = buffer.subarray(0, k + 1)
          const lines = utf8(buffer.subarray(k + 1)).split("\n")
          for (let i = lines.length - 2; i >= 0 && (lastTime === undefined || lastTurn === undefined); i--) {
            const value = tryParse(lines[i]!)
            if (typeof value !== "object" || value === null || Array.isArray(value)) continue
            const event = value as { type: unknown; time: unknown; data: unknown }
            if (typeof event.type !== "string") continue
            if (lastTime === undefined && typeof event.time === "number") lastTime = event.time
            if (lastTurn === undefined) lastTurn = Summary.turnOf({ type: event.type, data: event.data })
          }
          pos = start
        }
        return Summary.make({ header, lastTime, lastTurn, firstTurn, firstPrompt, location: { kind: KIND, path: file } })
      })
    )).pipe(
      Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed(undefined)),
      Effect.mapError(ioError(file, "read"))
    )

  const list = (): Effect.Effect<ReadonlyArray<SessionSummary>, SessionError.SessionError> =>
    Effect.gen(function*() {
      const files: Array<{ file: string; id: string }> = []
      for (const bucket of yield* buckets) {
        const dir = path.join(root, bucket)
        const read = pool.withSlot(fs.readDirectory(dir)).pipe(
          Effect.catchIf((e) => isReason(e, "NotFound"), () => Effect.succeed([])),
          Effect.mapError(ioError(dir, "read directory"))
        )
        let names = yield* read
        if (names.some((name) => orphanRe.test(name))) {
          yield* recoverOrphans(dir, names)
          names = yield* read
        }
        for (const name of names) {
          if (!name.endsWith(".jsonl")) continue
          const id = IdEncoding.decode(name.slice(0, -".jsonl".length))
          if (id !== undefined) files.push({ file: path.join(dir, name), id })
        }
      }
      const summaries = yield* Effect.forEach(files, ({ file, id }) => summarize(file, id), { concurrency: 4 })
      return summaries.filter((s): s is SessionSummary => s !== undefined).sort(Summary.order)
    })

  return { list }
}
