/**
 * Attack test (issue 26, item 6): a workspace whose `.git/config` sets `core.fsmonitor` to a
 * script and whose `.git/hooks/pre-commit` is a script; `git status` and `git commit` through the
 * `bash` tool, sandboxed and not, never run them. With `EFFECT_HARNESS_GIT_HOOKS=1` they do (the
 * control that proves the repository is armed).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs"
import { userInfo } from "node:os"
import { join } from "node:path"
import * as Bash from "../../src/Tools/Bash.js"
import * as ProtectedPaths from "../../src/Tools/ProtectedPaths.js"
import * as Sandbox from "../../src/Tools/Sandbox.js"
import { withWorkspace } from "../support/TempWorkspace.js"

const available = Sandbox.availability().available
if (!available) console.warn("test/attack/Git.test.ts: the sandboxed case is skipped: bubblewrap cannot run here")

const options = (sandboxed: boolean, env: Readonly<Record<string, string>> = {}): Bash.Options => ({
  ...Bash.defaultOptions,
  killGraceMs: 300,
  sandbox: { enabled: sandboxed, allowNetwork: false },
  environment: { env: { ...process.env, ...env }, passwdHome: userInfo().homedir }
})

/** an armed repository: fsmonitor and pre-commit hook each create a marker in the workspace */
const arm = (root: string) => {
  execFileSync("git", ["init", "-q", root])
  const fsmonitor = join(root, "fsmonitor.sh")
  writeFileSync(fsmonitor, `#!/bin/sh\ntouch ${join(root, "FSMONITOR-RAN")}\n`)
  chmodSync(fsmonitor, 0o755)
  execFileSync("git", ["-C", root, "config", "core.fsmonitor", fsmonitor])
  const hook = join(root, ".git/hooks/pre-commit")
  writeFileSync(hook, `#!/bin/sh\ntouch ${join(root, "HOOK-RAN")}\n`)
  chmodSync(hook, 0o755)
}

const command = "git status --short >/dev/null 2>&1; git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x 2>&1; true"

const cases = [
  { name: "unsandboxed", sandboxed: false, skip: false },
  { name: "sandboxed", sandboxed: true, skip: !available }
] as const

describe("attack: git fsmonitor and hooks under an allowed git command (issue 26, item 6)", () => {
  for (const c of cases) {
    it.live.skipIf(c.skip)(`${c.name}: git status / commit never run .git/config's fsmonitor or .git/hooks`, () =>
      withWorkspace((root) =>
        Effect.gen(function*() {
          arm(root)
          yield* Bash.runWith(options(c.sandboxed))({ command })
          expect(existsSync(join(root, "FSMONITOR-RAN"))).toBe(false)
          expect(existsSync(join(root, "HOOK-RAN"))).toBe(false)
          // control: opted in, the same repository runs both
          yield* Bash.runWith(options(c.sandboxed, { EFFECT_HARNESS_GIT_HOOKS: "1" }))({ command })
          expect(existsSync(join(root, "FSMONITOR-RAN"))).toBe(true)
          expect(existsSync(join(root, "HOOK-RAN"))).toBe(true)
        })
      ))
  }
})

/** what git, run by the user outside the sandbox later, would execute from the repository */
const userGitRuns = (root: string): boolean => {
  rmSync(join(root, "PLANTED-RAN"), { force: true })
  try {
    execFileSync("git", ["-C", root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "u"], {
      stdio: "ignore"
    })
  } catch {
    // a broken repository runs nothing either
  }
  execFileSync("git", ["-C", root, "status", "--short"], { stdio: "ignore" })
  return existsSync(join(root, "PLANTED-RAN"))
}

describe("attack: persistence through git's own files from the sandbox (issue 26, red team)", () => {
  const plant = (root: string) =>
    `printf '#!/bin/sh\\ntouch ${join(root, "PLANTED-RAN")}\\n' > planted.sh; chmod +x planted.sh; `
  it.live.skipIf(!available)("a command cannot point .git/commondir at a planted git directory", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        execFileSync("git", ["init", "-q", root])
        yield* Bash.runWith(options(true))({
          command: `${plant(root)}cp -r .git .evil && printf '[core]\\n\\tfsmonitor = ${join(root, "planted.sh")}\\n' >> .evil/config; ` +
            `echo ../.evil > .git/commondir; printf '[core]\\n\\tfsmonitor = ${join(root, "planted.sh")}\\n' > .git/config.worktree; true`
        })
        expect(existsSync(join(root, ".git/commondir"))).toBe(false)
        expect(existsSync(join(root, ".git/config.worktree"))).toBe(false)
        expect(userGitRuns(root)).toBe(false)
      })
    ))
  it.live.skipIf(!available)("a command cannot rename .git and put a fresh one with hooks in its place", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        execFileSync("git", ["init", "-q", root])
        yield* Bash.runWith(options(true))({
          command: `${plant(root)}mv .git .git2 && mkdir .git && cp -r .git2/HEAD .git2/objects .git2/refs .git/ && ` +
            `mkdir .git/hooks && cp planted.sh .git/hooks/pre-commit && printf '[core]\\n\\trepositoryformatversion = 0\\n' > .git/config; true`
        })
        expect(existsSync(join(root, ".git2"))).toBe(false)
        expect(userGitRuns(root)).toBe(false)
      })
    ))
  it.live.skipIf(!available)("a core.hooksPath inside the workspace (husky) is read-only to commands", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        execFileSync("git", ["init", "-q", root])
        execFileSync("git", ["-C", root, "config", "core.hooksPath", ".husky"])
        execFileSync("mkdir", ["-p", join(root, ".husky")])
        writeFileSync(join(root, ".husky/pre-commit"), "#!/bin/sh\ntrue\n")
        chmodSync(join(root, ".husky/pre-commit"), 0o755)
        yield* Bash.runWith(options(true))({
          command: `${plant(root)}cp planted.sh .husky/pre-commit; cp planted.sh .husky/post-commit; true`
        })
        expect(userGitRuns(root)).toBe(false)
        expect(ProtectedPaths.gitHooksPaths(root)).toEqual([".husky"])
      })
    ))
})
