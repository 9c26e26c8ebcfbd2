/**
 * A persistence child for tests that need a process of their own (an esbuild bundle of this file;
 * `node [--expose-gc] persistence-child.cjs <mode> ...`):
 *
 * - `leak <memory|jsonl|sqlite> <location> <count> [backend|store]` (with `--expose-gc`): creates
 *   and disposes sessions (every 50th writes one turn through) straight through the backend (lock,
 *   create, append, sync, release: what a `SessionStore` asks of it) or through a `SessionStore`,
 *   warm-up first, and prints `{baseline, after, tracked}` (heap bytes after a full GC, and what
 *   the backend tracks).
 * - `fds <root> <maxOpenFiles> <sessions>`: keeps that many JSONL sessions live at once and writes
 *   two turns through in each, interleaved. Prints `{saved, expected, maxOpen, tracked}`; a
 *   failure is printed to stderr as `<code>: <message>`, then the child releases half the
 *   sessions, retries the failed session's flush and prints `RETRIED <ok|failed> <saved>/<committed>`
 *   (events read back from the log / events the session committed), and exits 1.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import * as Sqlite from "../../src/Session/persistence/Sqlite.js"
import type * as Tracked from "../../src/Session/persistence/Tracked.js"
import type * as Session from "../../src/Session/Session.js"
import type { Service } from "../../src/Session/SessionPersistence.js"
import { SessionPersistence } from "../../src/Session/SessionPersistence.js"
import * as SessionStore from "../../src/Session/SessionStore.js"
import { stepEnd, stepStart, turnEnd, turnStart, userMessage } from "./sessionInputs.js"
import { header, LogBuilder } from "./sessionLog.js"

const say = (line: string) => fs.writeSync(1, `${line}\n`)

const oneTurn = (s: Session.Session, turn: number) =>
  Effect.gen(function*() {
    yield* s.append(turnStart(turn))
    yield* s.append(userMessage(`prompt ${turn}`))
    yield* s.append(stepStart(turn, 0))
    yield* s.append(stepEnd(turn, 0))
    yield* s.append(turnEnd(turn))
  })

const storeOver = (p: Service) => SessionStore.make.pipe(Effect.provideService(SessionPersistence, p))

const backendOf = (kind: string, location: string): Effect.Effect<Service & Tracked.WithTracked, unknown, Scope.Scope> =>
  kind === "memory"
    ? Memory.make()
    : kind === "jsonl"
    ? Jsonl.make({ root: location }).pipe(Effect.provide(NodeFileSystem.layer))
    : Sqlite.open({ filename: location })

const heap = () => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("run with --expose-gc")
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage().heapUsed
}

/** one stored turn (the backend's view of `oneTurn`) */
const turnEvents = (id: string) => {
  const b = new LogBuilder()
  b.turnStart(0).user("prompt 0").stepStart(0, 0).stepEnd(0, 0).turnEnd(0)
  return { header: header(id, "/leak"), events: b.events }
}

const leak = (kind: string, location: string, count: number, via: string) =>
  Effect.scoped(Effect.gen(function*() {
    const p = yield* backendOf(kind, location)
    const store = yield* storeOver(p)
    const cycle = (i: number) =>
      Effect.scoped(
        via === "store"
          ? Effect.gen(function*() {
            const s = yield* store.create({ id: `leak-${i}`, cwd: "/leak" })
            if (i % 50 === 0) yield* oneTurn(s, 0)
          })
          : Effect.gen(function*() {
            // what the store asks of the backend: lock, create, write through, flush, release
            const { events, header: h } = turnEvents(`leak-${i}`)
            yield* p.lock(h.id)
            yield* p.create(h)
            if (i % 50 === 0) {
              yield* p.append(h.id, events.slice(0, 2), { sync: false })
              yield* p.append(h.id, events.slice(2))
              yield* p.sync(h.id)
            }
          })
      )
    const warm = Math.min(300, count)
    for (let i = 0; i < warm; i++) yield* cycle(i)
    const baseline = heap()
    for (let i = warm; i < warm + count; i++) yield* cycle(i)
    const after = heap()
    say(JSON.stringify({ baseline, after, tracked: p.tracked() }))
  }))

const fds = (root: string, maxOpenFiles: number, n: number) =>
  Effect.gen(function*() {
    const p = yield* Jsonl.make({ root, maxOpenFiles }).pipe(Effect.provide(NodeFileSystem.layer))
    const store = yield* storeOver(p)
    const live: Array<{ readonly scope: Scope.Closeable; readonly session: Session.Session }> = []
    let maxOpen = 0
    // every session live at once (locked, nothing written yet) ...
    for (let i = 0; i < n; i++) {
      const scope = yield* Scope.make()
      live.push({ scope, session: yield* Scope.provide(store.create({ id: `fd-${i}`, cwd: "/fds" }), scope) })
    }
    // ... then two turns written through in each, interleaved: every log is written while all are live
    const write = Effect.forEach([0, 1], (turn) =>
      Effect.forEach(live, ({ session }) =>
        Effect.andThen(
          Effect.mapError(oneTurn(session, turn), (error) => ({ error, session })),
          Effect.sync(() => {
            maxOpen = Math.max(maxOpen, p.tracked().openFiles)
          })
        )), { discard: true })
    const failed = yield* Effect.flip(write).pipe(Effect.option)
    if (failed._tag === "Some") {
      const { error, session } = failed.value
      fs.writeSync(2, `${error.code}: ${error.message}\n`)
      // nothing lost: release half of the sessions (their descriptors), retry the failed flush,
      // and read the log back
      for (const { scope } of live.slice(0, Math.floor(live.length / 2))) yield* Scope.close(scope, Exit.void)
      const retry = yield* Effect.exit(store.flush(session.id))
      const committed = (yield* session.events).length
      const snap = yield* p.snapshot(session.id)
      const saved = snap.events.length - snap.repaired.length
      say(`RETRIED ${Exit.isSuccess(retry) ? "ok" : "failed"} ${saved}/${committed}`)
      for (const { scope } of live) yield* Scope.close(scope, Exit.void)
      return yield* Effect.sync(() => process.exit(1))
    }
    for (const { scope } of live) yield* Scope.close(scope, Exit.void)
    // everything saved: a fresh instance reads every log back
    const q = yield* Jsonl.make({ root }).pipe(Effect.provide(NodeFileSystem.layer))
    let saved = 0
    for (let i = 0; i < n; i++) saved += (yield* q.snapshot(`fd-${i}` as Session.Session["id"])).events.length
    say(JSON.stringify({ saved, expected: n * 10, maxOpen, tracked: p.tracked() }))
  })

const [mode, ...args] = process.argv.slice(2)
const program = mode === "leak"
  ? leak(args[0]!, args[1]!, Number(args[2]), args[3] ?? "backend")
  : mode === "fds"
  ? fds(args[0]!, Number(args[1]), Number(args[2]))
  : Effect.die(new Error(`unknown mode ${String(mode)}`))

Effect.runPromise(program).then(
  () => process.exit(0),
  (e: unknown) => {
    fs.writeSync(2, `${String(e)}\n`)
    process.exit(2)
  }
)
