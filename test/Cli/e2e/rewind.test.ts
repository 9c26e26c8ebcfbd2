/**
 * End-to-end (issue 33): rewind every workspace effect through the spawned CLI, with the scripted
 * model, in a temp git repository. Three turns change the workspace by `write`, `edit` and `bash`
 * (sandboxed): new files, parent directories created, edits, deletions, a `mv` rename, `chmod`,
 * a symlink, a binary file, a generated directory of 300 files, `sed -i`, `rm -r`. Then:
 *
 * - `sessions rewind --code` to each turn (3, 2, 1, 0, and forward again to 3) restores bytes,
 *   modes, link targets and absence exactly (compared with the snapshot taken at that turn);
 * - `.git` is byte-identical before and after every rewind;
 * - a file changed by hand after the checkpoint is reported and nothing is overwritten (exit 4),
 *   then `--force` restores it;
 * - `sessions show` names which turn changed which files; `sessions verify` accepts the log;
 * - the default mode (code and conversation) prints a fork id whose log ends at that turn;
 * - SIGKILL while a restore runs (its marker on disk), then a rerun: the target state.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"

// about twenty CLI processes: generous for a loaded shared machine
const TIMEOUT = 480_000

const call = (id: string, name: string, args: Record<string, unknown>): Cli.ScriptedCall => ({ id, name, args })

/** Every path under `root` (`.git` apart unless `git`): kind, mode, bytes or link target. */
const snapshot = (root: string, git = false): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel === "" ? name : `${rel}/${name}`
      if (!git && path === ".git") continue
      const abs = join(root, path)
      const s = lstatSync(abs)
      const mode = (s.mode & 0o7777).toString(8)
      if (s.isSymbolicLink()) out[path] = `link ${readlinkSync(abs)}`
      else if (s.isDirectory()) {
        out[path] = `dir ${mode}`
        walk(path)
      } else out[path] = `file ${mode} ${readFileSync(abs).toString("hex")}`
    }
  }
  walk(git ? ".git" : "")
  return out
}

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }
  })

const script = (dir: string, name: string, calls: ReadonlyArray<Cli.ScriptedCall>): string => {
  mkdirSync(join(dir, name))
  return Cli.toolCallScript(join(dir, name), calls)
}

describe("harness CLI end to end: rewind (issue 33)", () => {
  it.live("[issue 33] rewind matrix: write, edit and bash changes restored exactly per turn; .git untouched; hand changes refused; SIGKILL resumed", () =>
    Effect.gen(function*() {
      const tmp = yield* Cli.tempDir("rewind-e2e-")
      const home = yield* Cli.tempDir("rewind-e2e-home-")
      const work = join(tmp, "repo")
      const scripts = join(tmp, "scripts")
      yield* Effect.sync(() => {
        mkdirSync(work)
        mkdirSync(scripts)
        mkdirSync(join(work, "src"))
        writeFileSync(join(work, "README.md"), "hello alpha\n")
        writeFileSync(join(work, "old.txt"), "to be renamed\n")
        writeFileSync(join(work, "gone.txt"), "to be deleted\n")
        writeFileSync(join(work, "script.sh"), "#!/bin/sh\necho hi\n", { mode: 0o644 })
        writeFileSync(join(work, "src", "keep.txt"), "kept\n")
        git(work, "init", "-q")
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", "initial")
      })
      const turns = [
        script(scripts, "t1", [
          call("a1", "write", { file_path: "src/new.txt", content: "new file\n" }),
          call("a2", "write", { file_path: "deep/a/b/c.txt", content: "deep\n" }),
          call("a3", "edit", { file_path: "README.md", old_string: "hello", new_string: "hello world" })
        ]),
        script(scripts, "t2", [
          call("b1", "bash", {
            command: "mv old.txt renamed.txt && chmod 755 script.sh && rm gone.txt && mkdir -p build/sub && " +
              "for i in $(seq 1 300); do echo \"out $i\" > build/sub/f$i.txt; done && sed -i 's/alpha/beta/' README.md && " +
              "ln -s README.md link.md"
          })
        ]),
        script(scripts, "t3", [
          call("c1", "write", { file_path: "README.md", content: "replaced\n" }),
          call("c2", "bash", {
            command: "rm build/sub/f1*.txt && chmod 600 renamed.txt && mkdir empty-dir && printf '\\000\\001bin' > bin.dat && rm -r deep"
          }),
          call("c3", "edit", { file_path: "src/new.txt", old_string: "new", new_string: "NEW" })
        ])
      ]
      const opts = { cwd: work, home }
      const gitBefore = snapshot(work, true)
      const snaps: Array<Record<string, string>> = [snapshot(work)]
      let id = ""
      for (const [i, file] of turns.entries()) {
        const r = yield* Cli.runCli(
          ["run", "--yes", "--output-format", "json", "--script", file, ...(i === 0 ? [] : ["--resume", id]), `turn ${i + 1}`],
          opts
        )
        expect(r.code, r.stderr).toBe(0)
        id = (JSON.parse(r.stdout) as { readonly session_id: string }).session_id
        snaps.push(snapshot(work))
      }
      // every turn changed something
      expect(snaps[1]).not.toEqual(snaps[0])
      expect(snaps[2]).not.toEqual(snaps[1])
      expect(snaps[3]).not.toEqual(snaps[2])
      expect(Object.keys(snaps[2]!).filter((p) => p.startsWith("build/sub/"))).toHaveLength(300)

      const show = yield* Cli.runCli(["sessions", "show", id], opts)
      expect(show.code, show.stderr).toBe(0)
      expect(show.stdout).toContain("turn 1: ")
      expect(show.stdout).toMatch(/turn 1: .*deep\/a\/b\/c\.txt \(created by write\)/)
      expect(show.stdout).toMatch(/turn 2: .*old\.txt \(deleted by bash\)/)
      expect(show.stdout).toMatch(/turn 3: .*README\.md \(changed by write\)/)

      const rewind = (turn: number, ...flags: ReadonlyArray<string>) =>
        Cli.runCli(["sessions", "rewind", id, "--turn", String(turn), "--code", ...flags], opts)
      for (const turn of [2, 0, 3, 1]) {
        const r = yield* rewind(turn)
        expect(r.code, r.stderr).toBe(0)
        expect(r.stderr).toContain(`rewound the workspace to the end of turn ${turn}`)
        expect(snapshot(work), `after rewinding to turn ${turn}`).toEqual(snaps[turn])
        expect(snapshot(work, true), ".git is byte-identical").toEqual(gitBefore)
      }

      // a file changed by hand after the checkpoint is reported, nothing is overwritten
      yield* Effect.sync(() => writeFileSync(join(work, "src", "new.txt"), "changed by hand\n"))
      const handmade = snapshot(work)
      const refused = yield* rewind(0)
      expect(refused.code).toBe(4)
      expect(refused.stderr).toContain("changed outside the agent since the checkpoint: src/new.txt")
      expect(snapshot(work)).toEqual(handmade)
      const forced = yield* rewind(0, "--force")
      expect(forced.code, forced.stderr).toBe(0)
      expect(snapshot(work)).toEqual(snaps[0])
      expect(snapshot(work, true)).toEqual(gitBefore)

      // the log stays valid
      const verify = yield* Cli.runCli(["sessions", "verify", id], opts)
      expect(verify.code, verify.stdout + verify.stderr).toBe(0)

      // both (default): the workspace at turn 2 and a fork whose conversation ends at turn 2
      const both = yield* Cli.runCli(["sessions", "rewind", id, "--turn", "2"], opts)
      expect(both.code, both.stderr).toBe(0)
      const child = both.stdout.trim()
      expect(child).toMatch(/^harness-session-/)
      expect(snapshot(work)).toEqual(snaps[2])
      const childShow = yield* Cli.runCli(["sessions", "show", child], opts)
      expect(childShow.stdout).toContain("turn 2")
      expect(childShow.stdout).not.toContain("turn 3:")
      // the fork continues from the restored workspace: rewinding it to turn 1 works without --force
      const childRewind = yield* Cli.runCli(["sessions", "rewind", child, "--turn", "1", "--code"], opts)
      expect(childRewind.code, childRewind.stderr).toBe(0)
      expect(snapshot(work)).toEqual(snaps[1])

      // SIGKILL while a restore runs, then rerun: the target state
      const marker = join(home, "checkpoints", id, "rewind.json")
      const proc = yield* Cli.spawnCli(["sessions", "rewind", id, "--turn", "3", "--code", "--force"], opts)
      yield* Cli.waitForFile(marker)
      yield* proc.kill("SIGKILL")
      const killed = yield* proc.result
      // killed after the marker was written and before the rewind was recorded (the restore itself
      // writes and fsyncs about 200 files, so the kill lands inside it)
      expect(killed.signal).toBe("SIGKILL")
      expect(existsSync(marker)).toBe(true)
      expect(snapshot(work)).not.toEqual(snaps[3])
      const rerun = yield* rewind(3, "--force")
      expect(rerun.code, rerun.stderr).toBe(0)
      expect(rerun.stderr).toContain("finished the interrupted rewind")
      expect(existsSync(marker)).toBe(false)
      expect(snapshot(work)).toEqual(snaps[3])
      expect(snapshot(work, true)).toEqual(gitBefore)
    }), TIMEOUT)

  it.live("[issue 33] /rewind in chat: lists the changes, restores the files, and continues in a fork", () =>
    Effect.gen(function*() {
      const tmp = yield* Cli.tempDir("rewind-chat-")
      const home = yield* Cli.tempDir("rewind-chat-home-")
      const work = join(tmp, "ws")
      yield* Effect.sync(() => {
        mkdirSync(work)
        writeFileSync(join(work, "a.txt"), "before\n")
      })
      const file = script(tmp, "s", [
        call("w1", "write", { file_path: "a.txt", content: "after\n" }),
        call("w2", "bash", { command: "mkdir gen && echo g > gen/g.txt" })
      ])
      const r = yield* Cli.runCli(["chat", "--yes", "--script", file], {
        cwd: work,
        home,
        stdin: "change things\n/rewind\n/rewind 0 code\n/rewind 1 conversation\n"
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(/turn 1: 3 paths: a\.txt \(changed by write\), gen \(created by bash\), gen\/g\.txt \(created by bash\)/)
      expect(r.stderr).toContain("rewound the workspace to the end of turn 0: 3 paths restored")
      expect(r.stderr).toMatch(/continuing in harness-session-\S+, forked after turn 1/)
      expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("before\n")
      expect(existsSync(join(work, "gen"))).toBe(false)
    }), TIMEOUT)
})
