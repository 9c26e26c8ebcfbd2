/**
 * End-to-end (issue 26, item 8): `--script` from a pipe is read once. `harness run --script <(…)`
 * (bash process substitution: a `/dev/fd` pipe) and `--script <fifo>` (a real named pipe) answer
 * with the script's text and the model it names; before the fix the CLI read the file twice (once
 * for its `"model"`, once to load it) and the second read found nothing or blocked.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"

const script = JSON.stringify({ provider: "scripted", model: "piped-model", responses: [{ text: "FROM-THE-PIPE" }] })

/** Runs `sh -c line` with the CLI's clean environment; its output and exit code. */
const shell = (line: string, cwd: string, home: string) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn("bash", ["-c", line], { cwd, env: Cli.cleanEnv(home), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => void (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

describe("harness CLI end to end: --script from a pipe (issue 26)", () => {
  it.live("[issue 26] --script <(…) and --script <fifo> are read once: the answer and the script's model", () =>
    Effect.gen(function*() {
      const cli = yield* Cli.bundle
      const work = yield* Cli.tempDir("script-pipe-")
      const home = yield* Cli.tempDir("script-pipe-home-")
      writeFileSync(join(work, "script.json"), script)
      const node = `'${process.execPath}' '${cli}'`
      const substituted = yield* shell(`${node} run --json --script <(cat script.json) hi`, work, home)
      expect(substituted.code, substituted.stderr).toBe(0)
      expect(substituted.stdout).toContain("FROM-THE-PIPE")
      expect(substituted.stdout).toContain(`"model":"piped-model"`)
      expect(spawnSync("mkfifo", [join(work, "fifo")]).status).toBe(0)
      const fifo = yield* shell(`(cat script.json > fifo &) ; ${node} run --script fifo hi`, work, home)
      expect(fifo.code, fifo.stderr).toBe(0)
      expect(fifo.stdout).toBe("FROM-THE-PIPE\n")
    }), 60_000)
})
