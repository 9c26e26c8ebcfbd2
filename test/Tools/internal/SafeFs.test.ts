// vitest project: integration
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Edit from "../../../src/Tools/Edit.js"
import * as Read from "../../../src/Tools/Read.js"
import * as SafeFs from "../../../src/Tools/internal/SafeFs.js"
import * as Write from "../../../src/Tools/Write.js"
import { textOf, withWorkspace, writeFiles } from "../../support/TempWorkspace.js"

const ITERATIONS = 1000

const hasPython = spawnSync("python3", ["-c", "import ctypes"], { stdio: "ignore" }).status === 0

/**
 * Swaps `<ws>/d` (a real directory) and `<ws>/l` (a symlink to the outside directory) in a loop:
 * `renameat2(RENAME_EXCHANGE)` through python3's ctypes when available, else two renames
 * through a spare name. Prints the number of swaps when it receives SIGTERM.
 */
const SWAPPER = `
import ctypes, os, signal, sys
a, b, spare = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, "renameat2", None)
count = 0
def stop(*_):
    print(count, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
while True:
    if exchange is not None and exchange(-100, a.encode(), -100, b.encode(), 2) == 0:
        count += 1
        continue
    os.rename(a, spare); os.rename(b, a); os.rename(spare, b)
    count += 1
`

describe("race-free confinement (issue 16)", () => {
  it.live.skipIf(!hasPython)(
    "a directory swapped with a link to outside, 1000 reads and writes: the outside canary is never touched",
    () =>
      withWorkspace((root) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const outside = yield* fs.makeTempDirectoryScoped({ prefix: "harness-outside-" })
          writeFileSync(join(outside, "f.txt"), "CANARY-READ\n")
          writeFileSync(join(outside, "out.txt"), "CANARY-WRITE\n")
          writeFileSync(join(outside, "e.txt"), "A CANARY-EDIT\n")
          const canaries = ["f.txt", "out.txt", "e.txt"]
          const before = canaries.map((name) => statSync(join(outside, name)).mtimeMs)
          yield* writeFiles(root, { "d/f.txt": "inside\n", "d/out.txt": "inside\n", "d/e.txt": "A\n" })
          yield* fs.symlink(outside, join(root, "l"))

          const swapper = yield* Effect.acquireRelease(
            Effect.sync(() =>
              spawn("python3", ["-c", SWAPPER, join(root, "d"), join(root, "l"), join(root, "spare")], {
                stdio: ["ignore", "pipe", "inherit"]
              })
            ),
            (child) => Effect.sync(() => child.kill("SIGKILL"))
          )
          let output = ""
          swapper.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
          yield* Effect.callback<void>((resume) => {
            const check = () => output.includes("ready") && resume(Effect.void)
            swapper.stdout.on("data", check)
            check()
          })

          let readOk = 0
          let readRefused = 0
          let writeOk = 0
          let writeRefused = 0
          const started = Date.now()
          for (let i = 0; i < ITERATIONS; i++) {
            const read = yield* Effect.result(Read.run({ file_path: "d/f.txt" }))
            if (read._tag === "Success") {
              expect(textOf(read.success)).toBe("     1\tinside")
              readOk++
            } else readRefused++
            const write = yield* Effect.result(Write.run({ file_path: "d/out.txt", content: `write ${i}\n` }))
            if (write._tag === "Success") writeOk++
            else writeRefused++
            if (i % 10 !== 0) continue
            const edit = yield* Effect.result(Edit.run({ file_path: "d/e.txt", old_string: "A", new_string: "B" }))
            if (edit._tag === "Failure" && edit.failure.code === "NO_MATCH") {
              yield* Effect.result(Edit.run({ file_path: "d/e.txt", old_string: "B", new_string: "A" }))
            }
          }
          const elapsed = Date.now() - started
          yield* Effect.callback<void>((resume) => {
            swapper.once("exit", () => resume(Effect.void))
            swapper.kill("SIGTERM")
          })
          const swaps = Number(output.split("\n")[1])

          expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe("CANARY-READ\n")
          expect(readFileSync(join(outside, "out.txt"), "utf8")).toBe("CANARY-WRITE\n")
          expect(readFileSync(join(outside, "e.txt"), "utf8")).toBe("A CANARY-EDIT\n")
          expect(canaries.map((name) => statSync(join(outside, name)).mtimeMs)).toEqual(before)
          expect((yield* fs.readDirectory(outside)).sort()).toEqual(["e.txt", "f.txt", "out.txt"])
          // the race was really exercised: the swapper ran throughout and both outcomes occurred
          expect(swaps).toBeGreaterThan(ITERATIONS)
          expect(readOk + readRefused).toBe(ITERATIONS)
          expect(writeOk + writeRefused).toBe(ITERATIONS)
          expect(readOk).toBeGreaterThan(0)
          expect(readRefused).toBeGreaterThan(0)
          expect(elapsed).toBeLessThan(60_000)
        })
      ),
    90_000
  )

  it.live("names beginning with `..` are ordinary names; `..` and `../x` are refused", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* writeFiles(root, { "..foo": "a\n", "...": "b\n", "a..b": "c\n", "sub/..bar": "d\n" })
        expect(textOf(yield* Read.run({ file_path: "..foo" }))).toBe("     1\ta")
        expect(textOf(yield* Read.run({ file_path: "..." }))).toBe("     1\tb")
        expect(textOf(yield* Read.run({ file_path: "a..b" }))).toBe("     1\tc")
        expect(textOf(yield* Read.run({ file_path: "sub/..bar" }))).toBe("     1\td")
        expect(textOf(yield* Read.run({ file_path: `${root}/..foo` }))).toBe("     1\ta")
        yield* Write.run({ file_path: "..new", content: "x" })
        expect(readFileSync(join(root, "..new"), "utf8")).toBe("x")
        for (const bad of ["..", "../x", "sub/../../x"]) {
          const e = yield* Effect.flip(Read.run({ file_path: bad }))
          expect(e.code).toBe("OUTSIDE_WORKSPACE")
        }
      })
    ))
})

describe("SafeFs primitives", () => {
  it("uses /proc/self/fd magic links on Linux", () => {
    expect(SafeFs.procFd).toBe(process.platform === "linux")
  })
})
