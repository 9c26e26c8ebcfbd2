/**
 * Red-team finding (issue 26): the credential files of the agents the harness works beside
 * (Claude Code's `~/.claude/.credentials.json`, Codex's `~/.codex/auth.json`) and other common
 * token stores were readable from the `bash` sandbox. Skipped where bubblewrap cannot run.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { userInfo } from "node:os"
import { dirname, join } from "node:path"
import * as Bash from "../../src/Tools/Bash.js"
import * as Sandbox from "../../src/Tools/Sandbox.js"
import { repoRoot } from "../support/Cli.js"
import { textOf, withWorkspace } from "../support/TempWorkspace.js"

const available = Sandbox.availability().available
if (!available) console.warn("test/attack/CredentialFiles.test.ts skipped: bubblewrap cannot run here")

const SECRET = "sk-redteam-credential-0123456789"

const FILES = [
  ".claude/.credentials.json",
  ".codex/auth.json",
  ".config/configstore/update-notifier-npm.json",
  ".cache/huggingface/token",
  ".huggingface/token",
  ".kaggle/kaggle.json",
  ".pulumi/credentials.json"
]

describe.skipIf(!available)("attack: agent and tool credential files from the sandbox", () => {
  it.live("~/.claude/.credentials.json, ~/.codex/auth.json and other token files are unreadable", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const home = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const dir = join(repoRoot, ".tmp", `attack-creds-${process.pid}-${Math.random().toString(36).slice(2, 10)}`)
            mkdirSync(dir, { recursive: true })
            return dir
          }),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        for (const file of FILES) {
          mkdirSync(dirname(join(home, file)), { recursive: true })
          writeFileSync(join(home, file), `${SECRET} ${file}\n`)
        }
        const text = textOf(
          yield* Bash.runWith({
            ...Bash.defaultOptions,
            killGraceMs: 300,
            sandbox: { enabled: true, allowNetwork: false },
            environment: { env: { ...process.env, HOME: home }, passwdHome: userInfo().homedir }
          })({ command: FILES.map((f) => `cat ~/${f} 2>/dev/null | base64`).join("; ") + "; echo done" })
        )
        expect(text).toContain("done")
        expect(text).not.toContain(Buffer.from(SECRET).toString("base64").slice(0, 20))
      })
    ))
})
