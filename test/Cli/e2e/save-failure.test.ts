/**
 * End-to-end (issue 10, DEC-11): a session log that cannot be written fails the run loudly. The
 * session's directory is made read-only: a read-only tmpfs mounted over it when the test runs as
 * root (root ignores file modes), else mode 0500. stdout carries nothing but the answer, stderr carries ONE line naming the file and the operating system's error, the exit
 * code is 4 (never 0), and the lock is released.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 90_000

const isRoot = process.getuid?.() === 0

/** Makes `dir` read-only for the scope: a read-only tmpfs over it as root, else mode 0500. */
const readOnly = (dir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      if (!isRoot) {
        chmodSync(dir, 0o500)
        return "chmod" as const
      }
      const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", dir], { stdio: "ignore" })
      return mounted.status === 0 ? "mount" as const : "none" as const
    }),
    (how) =>
      Effect.sync(() => {
        if (how === "mount") spawnSync("umount", [dir], { stdio: "ignore" })
        if (how === "chmod") chmodSync(dir, 0o700)
      })
  )

describe("harness CLI end to end: save failures (issue 10, DEC-11)", () => {
  it.live(
    "[issue 10, DEC-11, DEC-12] read-only session directory → the answer on stdout only, one stderr line naming the file and the OS error, exit 4, lock released",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        writeFileSync(
          join(work, "script.json"),
          JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "THE-ANSWER" }] })
        )
        // the JSONL store keeps a workspace's sessions in <root>/cwd-<12 hex of sha256(cwd)>/
        const bucket = join(home, "sessions", `cwd-${createHash("sha256").update(work).digest("hex").slice(0, 12)}`)
        const how = yield* readOnly(bucket)
        if (how === "none") {
          console.warn("save-failure: cannot make a read-only directory here (mount failed); skipped")
          return
        }
        const result = yield* Cli.runCli(["run", "--script", "script.json", "answer me"], { cwd: work, home })
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(4)
        // nothing but the answer (or, with write-through persistence, none of it: nothing unsaved is printed)
        expect("THE-ANSWER\n".startsWith(result.stdout), result.stdout).toBe(true)
        const lines = Cli.linesOf(result.stderr)
        const errors = lines.filter((l) => /error|could not|fail/i.test(l))
        expect(errors, result.stderr).toHaveLength(1)
        expect(errors[0]).toMatch(/^error: the session could not be saved: /)
        expect(errors[0]).toContain(bucket)
        expect(errors[0]).toMatch(how === "mount" ? /EROFS/ : /EACCES/)
        expect(result.stderr).not.toMatch(Cli.stackFrame)
        for (const line of lines) expect(line, result.stderr).not.toMatch(/^\s|^[{}"]/)
        expect(Cli.filesUnder(join(home, "sessions", "locks"))).toEqual([])
      }),
    TIMEOUT
  )
})
