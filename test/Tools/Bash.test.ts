// vitest project: integration
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Bash from "../../src/Tools/Bash.js"
import * as ProcessGroup from "../../src/Tools/internal/ProcessGroup.js"
import { textOf, withWorkspace } from "../support/TempWorkspace.js"

// process-group semantics are observed through host PIDs: unsandboxed here (the sandbox has its
// own PID namespace; see Sandbox.test.ts for the sandboxed behaviour)
const fast: Bash.Options = { ...Bash.defaultOptions, killGraceMs: 300, sandbox: { enabled: false, allowNetwork: false } }
const run = Bash.runWith(fast)

const pidsIn = (text: string): Array<number> =>
  [...text.matchAll(/PID=(\d+)/g)].map((m) => Number(m[1]))

/** Polls (bounded) until `path` holds `count` PIDs. */
const awaitPids = (path: string, count: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    for (let i = 0; i < 400; i++) {
      const text = yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => ""))
      const pids = pidsIn(text)
      if (pids.length >= count) return pids
      yield* Effect.sleep(25)
    }
    return yield* Effect.die(new Error(`no ${count} pids in ${path}`))
  })

describe("bash", () => {
  it.live("runs in the workspace root with interleaved stdout/stderr and the exit code", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const out = yield* run({ command: "pwd; echo out; echo err >&2; echo out2; exit 3" })
        expect(textOf(out)).toBe(`${root}\nout\nerr\nout2\n[exit code: 3]`)
        expect(out.meta).toMatchObject({ exitCode: 3, signal: null, truncated: false })
        const empty = yield* run({ command: "true" })
        expect(textOf(empty)).toBe("(no output)\n[exit code: 0]")
        const stdin = yield* run({ command: "cat; echo done" })
        expect(textOf(stdin)).toBe("done\n[exit code: 0]")
      })
    ))

  it.live("the call's idempotency key is HARNESS_IDEMPOTENCY_KEY in the command's environment (DEC-16), and only then", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const keyed = yield* run({ command: "echo \"key=$HARNESS_IDEMPOTENCY_KEY\"" }, "s-1:2:3:call_7")
        expect(textOf(keyed)).toBe("key=s-1:2:3:call_7\n[exit code: 0]")
        const plain = yield* run({ command: "echo \"key=${HARNESS_IDEMPOTENCY_KEY-unset}\"" })
        expect(textOf(plain)).toBe("key=unset\n[exit code: 0]")
      })
    ))

  it.live("a missing shell is a SPAWN_FAILED error", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const missing = yield* Effect.flip(Bash.runWith({ ...fast, shell: "/nonexistent/bash" })({ command: "true" }))
        expect(missing.code).toBe("SPAWN_FAILED")
      })
    ))

  it.live("caps output keeping head and tail with a truncation notice", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const out = yield* Bash.runWith({ ...fast, maxOutputBytes: 1000 })({
          command: "echo FIRST; for i in $(seq 1 5000); do echo line-$i; done; echo LAST"
        })
        const text = textOf(out)
        expect(text.startsWith("FIRST\n")).toBe(true)
        expect(text).toContain("LAST\n[exit code: 0]")
        expect(text).toMatch(/\[\.\.\. \d+ bytes of output omitted \.\.\.\]/)
        expect(Buffer.byteLength(text)).toBeLessThan(1200)
        expect(out.meta).toMatchObject({ truncated: true })
      })
    ))

  it.live("timeout kills the whole process group including sleep grandchildren", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(run({
          command: "sleep 1000 & echo PID=$!; (sleep 1000 & echo PID=$!; wait) & echo PID=$!; trap '' TERM; wait",
          timeout_ms: 400
        }))
        expect(error.code).toBe("COMMAND_TIMEOUT")
        expect(error.message).toContain("timed out after 400ms")
        const pids = pidsIn(error.message)
        expect(pids).toHaveLength(3)
        for (const pid of pids) expect(ProcessGroup.isProcessAlive(pid)).toBe(false)
      })
    ))

  it.live("interrupting the call (cancellation) kills the group before it completes", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run({
          command: "echo PID=$$ > pids; sleep 1000 & echo PID=$! >> pids; (sleep 1000 & echo PID=$! >> pids; wait) & wait"
        }))
        const pids = yield* awaitPids(`${root}/pids`, 3)
        for (const pid of pids) expect(ProcessGroup.isProcessAlive(pid)).toBe(true)
        yield* Fiber.interrupt(fiber)
        for (const pid of pids) expect(ProcessGroup.isProcessAlive(pid)).toBe(false)
      })
    ))

  it.live("background jobs left by a finished command are stopped", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const out = yield* run({ command: "sleep 1000 >/dev/null 2>&1 & echo PID=$!" })
        const pids = pidsIn(textOf(out))
        expect(pids).toHaveLength(1)
        expect(ProcessGroup.isProcessAlive(pids[0]!)).toBe(false)
      })
    ))
})
