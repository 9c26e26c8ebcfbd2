/**
 * What the persistence benches share: the backends over real files, a log cut into one batch per
 * turn, and a wall-clock timer.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Jsonl from "../src/Session/persistence/Jsonl.js"
import * as Sqlite from "../src/Session/persistence/Sqlite.js"
import type { SessionEvent } from "../src/Session/SessionEvent.js"
import type { Service } from "../src/Session/SessionPersistence.js"

/** One batch per turn (split after every `turn/end`). */
export const turns = (events: ReadonlyArray<SessionEvent>): Array<ReadonlyArray<SessionEvent>> => {
  const out: Array<ReadonlyArray<SessionEvent>> = []
  let start = 0
  events.forEach((e, i) => {
    if (e.type === "turn/end") {
      out.push(events.slice(start, i + 1))
      start = i + 1
    }
  })
  return out
}

/** The JSONL backend over the Node file system, rooted at `root`. */
export const jsonlBackend = (root: string) => Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer))

/** The SQLite backend over the database file `filename`. */
export const sqliteBackend = (filename: string) => Sqlite.open({ filename })

/** Opens a backend, runs `f` on it and closes it. */
export const withBackend = <A>(
  open: Effect.Effect<Service, unknown, Scope.Scope>,
  f: (p: Service) => Effect.Effect<A, unknown, Scope.Scope>
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.flatMap(open, f)))

/** Wall-clock milliseconds of `f`. */
export const time = async (f: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now()
  await f()
  return performance.now() - t0
}

/** Rounded to one decimal. */
export const round = (x: number) => Math.round(x * 10) / 10
