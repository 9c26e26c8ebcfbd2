import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Scrub from "../../../src/Tools/internal/Scrub.js"
import * as Shell from "../../../src/Cli/tui/Shell.js"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

describe("tui/Shell (issue 34: !command)", () => {
  it.live("runs in the directory, interleaves stdout and stderr, reports the exit code, redacts secrets", () =>
    Effect.gen(function*() {
      const result = yield* Shell.run("pwd; echo s3cr3t-value-123 >&2; exit 3", "/tmp").pipe(
        Effect.provideService(Scrub.Secrets, { values: () => [Redacted.make("s3cr3t-value-123")] })
      )
      expect(result.output).toBe("/tmp\n<redacted>\n")
      expect(result.exitCode).toBe(3)
      expect(Shell.status(result)).toBe("exit code 3")
      expect(Shell.contextText(result)).toContain("The user ran a shell command in the workspace: pwd;")
    }))

  it.live("interruption kills the command's process group", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "harness-shell-"))
      const fiber = yield* Effect.forkChild(Shell.run("sleep 30 & echo $! > child.pid; wait", dir))
      const pidFile = join(dir, "child.pid")
      for (let i = 0; i < 100 && !existsSync(pidFile); i++) yield* Effect.sleep(50)
      const pid = Number(readFileSync(pidFile, "utf8").trim())
      yield* Fiber.interrupt(fiber)
      const alive = () => {
        try {
          process.kill(pid, 0)
          return true
        } catch {
          return false
        }
      }
      for (let i = 0; i < 100 && alive(); i++) yield* Effect.sleep(50)
      expect(alive()).toBe(false)
    }))
})
