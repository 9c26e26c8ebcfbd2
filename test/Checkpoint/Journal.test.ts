/**
 * The pre-image journal over real files and real tools: `write` and `edit` through
 * `aroundPaths`, `bash` (a real child process) through `aroundScan`. The pre-image is in the store
 * before the body runs; the manifest names exactly the changed, created and deleted paths (a
 * touched but unchanged file is not a change); bounds give a notice and `stored: false`; an
 * unjournaled harness (the default reference) runs the body as is.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Checkpointed from "../../src/Checkpoint/Checkpointed.js"
import * as Journal from "../../src/Checkpoint/Journal.js"
import * as Store from "../../src/Checkpoint/Store.js"
import * as Bash from "../../src/Tools/Bash.js"
import * as Write from "../../src/Tools/Write.js"
import * as Tool from "../../src/Loop/Tool.js"
import { withWorkspace, writeFiles } from "../support/TempWorkspace.js"

const tempHome = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "journal-home-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const session = "harness-session-journal-test"

describe("Checkpoint/Journal", () => {
  it.live("write: the previous bytes are stored before the body runs; created parents are noted", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const home = yield* tempHome
        yield* writeFiles(root, { "a.txt": "old\n" })
        const journal = yield* Journal.make({ root, home })
        yield* journal.begin(session, 1, 1)
        const dir = Journal.dirOf(home, session)
        const oldHash = Store.hashFile(join(root, "a.txt"))
        yield* journal.aroundPaths(
          "write",
          ["a.txt"],
          Effect.andThen(
            // the pre-image is already kept when the body starts
            Effect.sync(() => expect(readFileSync(Store.objectPath(dir, oldHash), "utf8")).toBe("old\n")),
            Write.run({ file_path: "a.txt", content: "new\n" })
          )
        )
        yield* journal.aroundPaths("write", ["x/y/z.txt"], Write.run({ file_path: "x/y/z.txt", content: "z\n" }))
        const manifest = yield* journal.take()
        expect(manifest?.turn).toBe(1)
        expect(manifest?.changes.map((c) => [c.path, c.before.kind, c.after.kind, c.tool])).toEqual([
          ["a.txt", "file", "file", "write"],
          ["x", "absent", "dir", "write"],
          ["x/y", "absent", "dir", "write"],
          ["x/y/z.txt", "absent", "file", "write"]
        ])
        expect(yield* journal.take()).toBeUndefined()
      })
    ))

  it.live("bash: a before/after scan names exactly what changed (created, deleted, renamed, chmod); touch alone is no change", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const home = yield* tempHome
        yield* writeFiles(root, { "keep.txt": "k\n", "old.txt": "o\n", "gone.txt": "g\n", "mode.sh": "m\n", "touched.txt": "t\n" })
        yield* Effect.sync(() => chmodSync(join(root, "mode.sh"), 0o644))
        const journal = yield* Journal.make({ root, home })
        yield* journal.begin(session, 2, 1)
        yield* journal.aroundScan(
          "bash",
          Bash.run({ command: "mv old.txt new.txt && rm gone.txt && chmod 755 mode.sh && touch -d '2001-01-01' touched.txt && mkdir d && echo x > d/f" })
        )
        const manifest = yield* journal.take()
        expect(manifest?.changes.map((c) => `${c.path}:${c.before.kind}>${c.after.kind}`)).toEqual([
          "d:absent>dir",
          "d/f:absent>file",
          "gone.txt:file>absent",
          "mode.sh:file>file",
          "new.txt:absent>file",
          "old.txt:file>absent"
        ])
        const gone = manifest?.changes.find((c) => c.path === "gone.txt")
        expect(gone?.before.kind === "file" && gone.before.stored).toBe(true)
        if (gone?.before.kind === "file") {
          expect(readFileSync(Store.objectPath(Journal.dirOf(home, session), gone.before.hash), "utf8")).toBe("g\n")
        }
        // a second command only reads what changed since (the rest is matched by lstat)
        yield* Effect.sync(() => utimesSync(join(root, "keep.txt"), new Date(), new Date()))
        yield* journal.aroundScan("bash", Bash.run({ command: "echo more >> keep.txt" }))
        expect((yield* journal.take())?.changes.map((c) => c.path)).toEqual(["keep.txt"])
      })
    ))

  it.live("a write through a link inside the workspace keeps the file it points to", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const home = yield* tempHome
        yield* writeFiles(root, { "real.txt": "real\n" })
        yield* Effect.sync(() => symlinkSync("real.txt", join(root, "link.txt")))
        const journal = yield* Journal.make({ root, home })
        yield* journal.begin(session, 1, 1)
        yield* journal.aroundPaths("write", ["link.txt"], Write.run({ file_path: "link.txt", content: "changed\n" }))
        expect((yield* journal.take())?.changes.map((c) => c.path)).toEqual(["real.txt"])
        yield* journal.aroundScan("bash", Bash.run({ command: "echo y > y.txt" }))
        expect((yield* journal.take())?.changes.map((c) => c.path)).toEqual(["y.txt"])
      })
    ))

  it.live("bounds: a file over the per-file limit is not kept, with a notice; the change is still recorded", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const home = yield* tempHome
        yield* writeFiles(root, { "big.bin": "0123456789abcdef" })
        const journal = yield* Journal.make({ root, home, bounds: { maxFileBytes: 8, maxTotalBytes: 1024 } })
        yield* journal.begin(session, 1, 1)
        yield* journal.aroundPaths("write", ["big.bin"], Write.run({ file_path: "big.bin", content: "small" }))
        const manifest = yield* journal.take()
        const change = manifest?.changes[0]
        expect(change?.before.kind === "file" && change.before.stored).toBe(false)
        expect(manifest?.notices[0]).toContain("big.bin (16 bytes) is larger than the checkpoint limit of 8 bytes")
        expect(existsSync(join(Journal.dirOf(home, session), "objects"))).toBe(false)
      })
    ))

  it.live("the default journal is disabled: a wrapped tool runs as is and nothing is kept", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const wrapped = Checkpointed.wrapBuiltin(Write.tool)
        expect(wrapped).not.toBe(Write.tool)
        const read = Tool.make({ name: "read", description: "d", parameters: Write.parameters, execute: () => Effect.succeed([]) })
        expect(Checkpointed.wrapBuiltin(read)).toBe(read)
        expect((yield* Journal.Journal).enabled).toBe(false)
        yield* Write.run({ file_path: "plain.txt", content: "x" })
        expect(readFileSync(join(root, "plain.txt"), "utf8")).toBe("x")
      })
    ))
})
