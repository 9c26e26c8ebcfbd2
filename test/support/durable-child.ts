/**
 * A write-through crash child (DEC-11): `node <bundle> <jsonl|sqlite> <root|file> <seed>`.
 *
 * Runs the real write path the loop uses — a `SessionStore` session over the real backend, an
 * observer that prints every event as one JSON line on stdout the moment it is published (what
 * `harness run --json` does) — and appends whole turns forever, the way the loop does: turn
 * start and prompt, streamed `assistant/chunk` batches (1–6 chunks per `appendAll`, with pauses),
 * the assistant message, a tool call with a pause while the "tool runs", its result, step ends
 * (fsynced), the turn end (fsynced) and the turn-end flush. Prints `READY` before the session's
 * first event, so a parent killing soon after READY hits the first (atomic) write. Killed by the
 * parent with SIGKILL; the seed drives every size and pause.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as Sqlite from "../../src/Session/persistence/Sqlite.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import type { SessionPersistence } from "../../src/Session/SessionPersistence.js"
import * as SessionStore from "../../src/Session/SessionStore.js"
import { asInput } from "./sessionInputs.js"
import { LogBuilder } from "./sessionLog.js"

const [backend, location, seedText] = process.argv.slice(2)
if (backend === undefined || location === undefined || seedText === undefined) {
  throw new Error("usage: durable-child <jsonl|sqlite> <root|file> <seed>")
}

/** the session id every crash child writes (the crash matrix test knows it) */
const SESSION_ID = "durable-matrix"

/** mulberry32: a small seeded generator (same sequence for the same seed) */
const rng = (seed: number) => () => {
  seed = (seed + 0x6D2B79F5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const random = rng(Number(seedText))
const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))

const persistence: Layer.Layer<SessionPersistence, unknown> = backend === "jsonl"
  ? Jsonl.layer({ root: location })
  : Sqlite.layer({ filename: location })

const say = (line: string) => Effect.sync(() => fs.writeSync(1, `${line}\n`))
const pause = (maxMs: number) => Effect.suspend(() => Effect.sleep(between(0, maxMs)))

const program = Effect.gen(function*() {
  const store = yield* SessionStore.SessionStore
  const session = yield* store.create({ id: SESSION_ID, cwd: "/work/durable" })
  // printed ⇒ written: what a `--json` consumer sees, printed when the session publishes it
  yield* session.observe((event) => say(JSON.stringify(event)))
  yield* say("READY")
  for (let turn = 0;; turn++) {
    const before = yield* session.events
    const pieces = Array.from({ length: between(4, 60) }, (_, i) => `p${turn}.${i} `)
    const b = new LogBuilder((before.at(-1)?.time ?? 1_700_000_000_000) + 1, before)
      .completeTurn(`turn ${turn}: ${"x".repeat(between(0, 300))}`, { tool: random() < 0.7, pieces })
    const inputs: ReadonlyArray<SessionEvent> = b.from(before.length)
    for (let i = 0; i < inputs.length;) {
      const event = inputs[i]!
      if (event.type === "assistant/chunk") {
        // one stream chunk batch: consecutive chunks, 1..6 of them
        let j = i + 1
        const end = i + between(1, 6)
        while (j < inputs.length && j < end && inputs[j]!.type === "assistant/chunk") j++
        yield* session.appendAll(inputs.slice(i, j).map(asInput))
        yield* pause(1)
        i = j
        continue
      }
      yield* session.append(asInput(event))
      if (event.type === "tool/call") yield* pause(4) // the tool runs
      i++
    }
    yield* store.flush(session.id)
  }
}).pipe(
  Effect.scoped,
  Effect.provide(SessionStore.layer),
  Effect.provide(persistence)
)

NodeRuntime.runMain(program)
