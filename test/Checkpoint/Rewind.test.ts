/**
 * Code rewind over a journal's manifests (library API): the target of each path is its state when
 * the turn ended; a hand change is refused with the paths listed (nothing changed) unless forced; a
 * pre-image too large to keep is refused the same way and left as is when forced; a marker left by
 * a cut-off restore is resumed (idempotent steps); an unknown or open turn is `REWIND_TARGET`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Journal from "../../src/Checkpoint/Journal.js"
import * as Manifest from "../../src/Checkpoint/Manifest.js"
import * as Rewind from "../../src/Checkpoint/Rewind.js"
import type * as Store from "../../src/Checkpoint/Store.js"
import * as Bash from "../../src/Tools/Bash.js"
import * as Write from "../../src/Tools/Write.js"
import { userSource } from "../../src/Llm/Message.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { withWorkspace, writeFiles } from "../support/TempWorkspace.js"

const session = "harness-session-rewind-test"

const tempHome = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "rewind-home-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A log of turns whose bodies run through the journal: turn/start, its manifest, turn/end. */
const turns = <R>(
  journal: Journal.Service,
  bodies: ReadonlyArray<Effect.Effect<unknown, unknown, R>>
) =>
  Effect.gen(function*() {
    const events: Array<SessionEvent> = []
    for (const [i, body] of bodies.entries()) {
      const turn = i + 1
      events.push({ type: "turn/start", seq: events.length, time: 0, data: { turn, trigger: { kind: "message", source: userSource } } })
      yield* journal.begin(session, turn, 1)
      yield* Effect.ignore(body)
      const data = yield* journal.take()
      if (data !== undefined) events.push({ type: Manifest.TYPE, seq: events.length, time: 0, data })
      events.push({ type: "turn/end", seq: events.length, time: 0, data: { turn, reason: { kind: "completed" } } })
    }
    return events
  })

const setup = (root: string, bounds?: Store.Bounds) =>
  Effect.gen(function*() {
    const home = yield* tempHome
    yield* writeFiles(root, { "a.txt": "one\n", "big.bin": "0123456789abcdef" })
    const journal = yield* Journal.make({ root, home, ...(bounds === undefined ? {} : { bounds }) })
    const events = yield* turns(journal, [
      journal.aroundPaths("write", ["a.txt"], Write.run({ file_path: "a.txt", content: "two\n" })),
      journal.aroundScan("bash", Bash.run({ command: "echo three > a.txt && mkdir -p out && echo o > out/o.txt && echo B > big.bin" }))
    ])
    const dir = Journal.dirOf(home, session)
    const options = (turn: number, force = false): Rewind.Options => ({
      root, dir, objectDirs: [dir], events, turn, force, recordTo: session
    })
    return { dir, events, options }
  })

const read = (root: string, rel: string) => existsSync(join(root, rel)) ? readFileSync(join(root, rel), "utf8") : undefined

describe("Checkpoint/Rewind", () => {
  it.live("restores each turn's end state; the record undoes the rewind", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const { dir, events, options } = yield* setup(root)
        const first = yield* Rewind.run(options(1))
        expect(first.resumed).toBe(false)
        expect([read(root, "a.txt"), read(root, "out/o.txt"), existsSync(join(root, "out"))]).toEqual(["two\n", undefined, false])
        expect(read(root, "big.bin")).toBe("0123456789abcdef")
        yield* Rewind.finish(dir)
        // with the record logged, rewinding to turn 2 goes forward again
        const record: SessionEvent = { type: Manifest.TYPE, seq: events.length, time: 0, data: Rewind.record(first.marker, 2) }
        const logged = [...events, record]
        const forward = yield* Rewind.run({ ...options(2), events: logged })
        expect([read(root, "a.txt"), read(root, "out/o.txt")]).toEqual(["three\n", "o\n"])
        yield* Rewind.finish(dir)
        // without the second record the log does not know the workspace went forward: refused
        expect((yield* Effect.flip(Rewind.run({ ...options(0), events: logged })))._tag).toBe("RewindConflictError")
        const again: SessionEvent = { type: Manifest.TYPE, seq: logged.length, time: 0, data: Rewind.record(forward.marker, 2) }
        yield* Rewind.run({ ...options(0), events: [...logged, again] })
        expect([read(root, "a.txt"), read(root, "big.bin")]).toEqual(["one\n", "0123456789abcdef"])
      })
    ))

  it.live("a hand change is refused and listed (nothing changes) unless forced", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const { options } = yield* setup(root)
        yield* Effect.sync(() => writeFileSync(join(root, "a.txt"), "by hand\n"))
        const refused = yield* Effect.flip(Rewind.run(options(0)))
        expect(refused._tag).toBe("RewindConflictError")
        expect(refused.code).toBe("REWIND_CONFLICT")
        expect(refused._tag === "RewindConflictError" && refused.changed).toEqual(["a.txt"])
        expect([read(root, "a.txt"), read(root, "out/o.txt")]).toEqual(["by hand\n", "o\n"])
        yield* Rewind.run(options(0, true))
        expect([read(root, "a.txt"), read(root, "out/o.txt")]).toEqual(["one\n", undefined])
      })
    ))

  it.live("a pre-image too large to keep: refused and listed; forced, that file is left as is", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const { options } = yield* setup(root, { maxFileBytes: 8, maxTotalBytes: 1024 })
        const refused = yield* Effect.flip(Rewind.run(options(1)))
        expect(refused._tag === "RewindConflictError" && refused.unrecorded).toEqual(["big.bin"])
        const forced = yield* Rewind.run(options(1, true))
        expect(forced.marker.skipped).toEqual(["big.bin"])
        expect([read(root, "a.txt"), read(root, "big.bin")]).toEqual(["two\n", "B\n"])
      })
    ))

  it.live("a marker left by a cut-off restore is resumed, whatever was already done", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const { dir, options } = yield* setup(root)
        yield* Rewind.run(options(0))
        // as if cut off half-way: part of the workspace is back in its pre-rewind state
        yield* Effect.sync(() => writeFileSync(join(root, "a.txt"), "three\n"))
        // and killed between writing a file's temporary copy and renaming it into place
        yield* Effect.sync(() => writeFileSync(join(root, "a.txt.harness-rewind.tmp"), "half"))
        expect(existsSync(Rewind.markerPath(dir))).toBe(true)
        const resumed = yield* Rewind.run(options(2))
        expect(resumed.resumed).toBe(true)
        expect(resumed.marker.turn).toBe(0)
        expect([read(root, "a.txt"), existsSync(join(root, "out"))]).toEqual(["one\n", false])
        // the rerun wrote the same temporary file again and renamed it: no stray copy is left
        expect(existsSync(join(root, "a.txt.harness-rewind.tmp"))).toBe(false)
        expect(Rewind.recorded([], resumed.marker.id)).toBe(false)
        yield* Rewind.finish(dir)
        expect(existsSync(Rewind.markerPath(dir))).toBe(false)
      })
    ))

  it.live("an unknown or open turn is REWIND_TARGET", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const { options } = yield* setup(root)
        const unknown = yield* Effect.flip(Rewind.run(options(7)))
        expect(unknown.code).toBe("REWIND_TARGET")
        expect(unknown.message).toBe("there is no turn 7 in this session")
        const negative = yield* Effect.flip(Rewind.run(options(-1)))
        expect(negative.code).toBe("REWIND_TARGET")
      })
    ))
})
