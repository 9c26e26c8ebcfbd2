/**
 * Attack tests (issue 26, items 5 and 7): `bash` commands run without the sandbox (`--no-sandbox`).
 *
 * - Core dumps stay off: `ulimit -c` is 0 and cannot be raised (not even by root: the capability is
 *   dropped), so a crash writes no core file into the workspace.
 * - The bundled CLI killed with SIGKILL while a command runs: the command's whole process group dies.
 * - SIGTERM while a command left a detached child holding the output pipe (`setsid sleep … &`):
 *   the CLI exits promptly (143) instead of waiting for the child.
 * - The CLI's own `/proc/self/coredump_filter` is 0 (a core dump of it carries no heap, no key).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Bash from "../../src/Tools/Bash.js"
import * as ProcessGroup from "../../src/Tools/internal/ProcessGroup.js"
import * as Cli from "../support/Cli.js"
import { textOf, withWorkspace } from "../support/TempWorkspace.js"

const TIMEOUT = 60_000

const unsandboxed: Bash.Options = { ...Bash.defaultOptions, killGraceMs: 300, sandbox: { enabled: false, allowNetwork: false } }

const bashScript = (dir: string, command: string): string =>
  Cli.toolCallScript(dir, [{ id: "c1", name: "bash", args: { command } }])

const killRecorded = (file: string, group: boolean) =>
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      if (!existsSync(file)) return
      const pid = Number(readFileSync(file, "utf8").trim())
      if (!Number.isSafeInteger(pid) || pid <= 1) return
      try {
        process.kill(group ? -pid : pid, "SIGKILL")
      } catch {
        // already gone: what the test wants
      }
    })
  )

describe("attack: unsandboxed commands (issue 26, items 5 and 7)", () => {
  it.live("core dumps are off and the command cannot turn them back on", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const text = textOf(
          yield* Bash.runWith(unsandboxed)({
            command: "echo soft=$(ulimit -c) hard=$(ulimit -Hc); ulimit -c unlimited 2>/dev/null && echo RAISED; " +
              "ulimit -Hc unlimited 2>/dev/null && echo RAISED-HARD; ulimit -c 1 2>/dev/null && echo RAISED-ONE; true"
          })
        )
        expect(text).toContain("soft=0 hard=0")
        expect(text).not.toContain("RAISED")
      })
    ))

  it.live("SIGKILL of the harness kills the running command and what it started", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-attack-home-")
      const work = yield* Cli.tempDir("harness-attack-ws-")
      const pidFile = join(work, "tool.pid")
      yield* killRecorded(pidFile, true)
      const script = bashScript(work, "echo $$ > tool.pid; sleep 300 & sleep 300; wait")
      const child = yield* Cli.spawnCli(["run", "--yes", "--no-sandbox", "--json", "--script", script, "go"], {
        cwd: work,
        home,
        timeoutMs: TIMEOUT - 10_000
      })
      yield* Cli.waitForFile(pidFile)
      const pgid = Number(readFileSync(pidFile, "utf8").trim())
      expect(yield* ProcessGroup.isAlive(pgid)).toBe(true)
      yield* child.kill("SIGKILL")
      const result = yield* child.result
      expect(result.signal).toBe("SIGKILL")
      // the group's own `sleep 300` would outlive any deadline; 10 s leaves room for a loaded machine
      expect(yield* ProcessGroup.awaitGone(pgid, 10_000)).toBe(true)
    }), TIMEOUT)

  it.live("SIGTERM does not wait for a detached child that keeps the output pipe open", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-attack-home-")
      const work = yield* Cli.tempDir("harness-attack-ws-")
      const detached = join(work, "detached.pid")
      yield* killRecorded(detached, false)
      const script = bashScript(
        work,
        "setsid sleep 1000 & echo $! > detached.pid; nohup sleep 1001 & echo started > started.txt; sleep 300"
      )
      const child = yield* Cli.spawnCli(["run", "--yes", "--no-sandbox", "--json", "--script", script, "go"], {
        cwd: work,
        home,
        timeoutMs: 20_000
      })
      yield* Cli.waitForFile(join(work, "started.txt"))
      const sent = Date.now()
      yield* child.kill("SIGTERM")
      const result = yield* child.result
      expect(result.timedOut).toBe(false)
      expect(result.code, result.stderr).toBe(143)
      // the kill grace (2 s) and the pipe drain (0.5 s), not the detached child's 1,000 s
      expect(Date.now() - sent).toBeLessThan(8_000)
    }), TIMEOUT)

  it.live("the harness keeps its memory out of core dumps (coredump_filter 0)", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-attack-home-")
      const work = yield* Cli.tempDir("harness-attack-ws-")
      const script = bashScript(work, "cat /proc/$PPID/coredump_filter > filter.txt")
      const result = yield* Cli.runCli(["run", "--yes", "--no-sandbox", "--json", "--script", script, "go"], {
        cwd: work,
        home,
        timeoutMs: TIMEOUT - 10_000
      })
      expect(result.code, result.stderr).toBe(0)
      expect(Number.parseInt(readFileSync(join(work, "filter.txt"), "utf8").trim(), 16)).toBe(0)
    }), TIMEOUT)
})
