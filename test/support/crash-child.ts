/**
 * A crash child: `node --import tsx test/support/crash-child.ts <jsonl|sqlite> <root|file> <scenario>`
 * (the crash tests run an esbuild bundle of this file, same arguments).
 * Takes the writer lock, creates the session, appends the scenario's batches through the real
 * backend (each durable), optionally writes a torn line straight into the JSONL file, prints
 * `READY <flushed events>` and then waits (or keeps appending whole turns, printing
 * `COMMITTED <events>` after each) until the parent kills it with SIGKILL.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as Sqlite from "../../src/Session/persistence/Sqlite.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { SessionPersistence } from "../../src/Session/SessionPersistence.js"
import * as Scenarios from "./crashScenarios.js"

const [backend, location, name] = process.argv.slice(2)
if (backend === undefined || location === undefined || name === undefined || !Scenarios.isName(name)) {
  throw new Error("usage: crash-child.ts <jsonl|sqlite> <root|file> <scenario>")
}
const scenario = Scenarios.make(name)
const layer: Layer.Layer<SessionPersistence, unknown> = backend === "jsonl"
  ? Jsonl.layer({ root: location })
  : Sqlite.layer({ filename: location })

const say = (line: string) => Effect.sync(() => fs.writeSync(1, `${line}\n`))

const program = Effect.gen(function*() {
  const p = yield* SessionPersistence
  const id = scenario.header.id
  yield* p.lock(id)
  yield* p.create(scenario.header)
  let events: Array<SessionEvent> = []
  for (const batch of scenario.batches) {
    yield* p.append(id, batch)
    events = events.concat(batch)
  }
  if (scenario.partialLine !== undefined) {
    const file = p.locate(scenario.header)!.path
    yield* Effect.sync(() => fs.appendFileSync(file, scenario.partialLine!))
  }
  yield* say(`READY ${events.length}`)
  if (scenario.endless === true) {
    for (;;) {
      const turn = Scenarios.nextTurn(events)
      yield* p.append(id, turn)
      events = events.concat(turn)
      yield* say(`COMMITTED ${events.length}`)
    }
  }
  return yield* Effect.never
}).pipe(Effect.scoped, Effect.provide(layer))

NodeRuntime.runMain(program)
