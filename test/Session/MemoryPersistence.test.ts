/**
 * The in-memory backend (`src/Session/persistence/Memory.ts`) under the ONE persistence contract
 * suite shared by every backend (AC-43..AC-49, AC-51, locks, list, idempotent reload). It lives
 * here rather than under `test/Session/persistence/` because that folder belongs to the durable
 * backends; it may move there.
 */
import * as Effect from "effect/Effect"
import * as Memory from "../../src/Session/persistence/Memory.js"
import { contract } from "../support/persistenceContract.js"

contract({
  name: "memory",
  storage: Effect.sync(() => {
    const storage = Memory.makeStorage()
    return {
      open: Memory.make(storage),
      raw: (h: Record<string, unknown>, records: ReadonlyArray<Record<string, unknown>>) =>
        Effect.sync(() => Memory.plant(storage, h, records)),
      dump: (id: string) => Effect.sync(() => Memory.dump(storage, id))
    }
  })
})
