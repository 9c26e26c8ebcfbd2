/**
 * Attack tests (issue 26, items 1, 2, 4, 5): a hostile command in the bubblewrap sandbox, real
 * processes and real files. Host path sockets (a listener in `/tmp`, one in `$XDG_RUNTIME_DIR`, a
 * real tmux server), planting the harness's configuration from bash (each protected path, existing
 * and absent), credential hiding (the workspace at a fake `$HOME`, `$HOME` inside the temp
 * directory, a symlinked `~/.gnupg`, the passwd home, every hidden path), and the harness's memory.
 * Skipped with one notice where bubblewrap cannot run.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import { userInfo } from "node:os"
import { dirname, join } from "node:path"
import * as Bash from "../../src/Tools/Bash.js"
import * as Sandbox from "../../src/Tools/Sandbox.js"
import * as Workspace from "../../src/Tools/Workspace.js"
import { repoRoot } from "../support/Cli.js"
import { textOf, withWorkspace } from "../support/TempWorkspace.js"

const available = Sandbox.availability().available
if (!available) console.warn("test/attack/Sandbox.test.ts skipped: bubblewrap cannot run here")

const options = (env: Readonly<Record<string, string | undefined>> = {}, passwdHome = userInfo().homedir) =>
  ({
    ...Bash.defaultOptions,
    killGraceMs: 300,
    sandbox: { enabled: true, allowNetwork: false },
    environment: { env: { ...process.env, ...env }, passwdHome }
  }) satisfies Bash.Options
const unsandboxed = (env: Readonly<Record<string, string | undefined>> = {}) =>
  ({ ...options(env), sandbox: { enabled: false, allowNetwork: false } }) satisfies Bash.Options

const rand = () => Math.random().toString(36).slice(2, 10)

/** a directory outside the temp directory (the sandbox's `/tmp` is private) */
const outsideDir = (label: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = join(repoRoot, ".tmp", `attack-${label}-${process.pid}-${rand()}`)
      mkdirSync(dir, { recursive: true })
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** a directory in the host temp directory */
const tmpDir = (label: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = join("/tmp", `attack-${label}-${process.pid}-${rand()}`)
      mkdirSync(dir, { recursive: true })
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** a path-socket listener counting connections */
const socketListener = (path: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Net.Server; connections: number }>((resume) => {
      const state = { server: Net.createServer((socket) => {
        state.connections += 1
        socket.on("error", () => socket.destroy())
        socket.end("hello\n")
      }), connections: 0 }
      state.server.listen(path, () => resume(Effect.succeed(state)))
    }),
    (state) => Effect.callback<void>((resume) => void state.server.close(() => resume(Effect.void)))
  )

const write = (path: string, content: string) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, content)
}

const connectWithPython = (path: string) =>
  `/usr/bin/python3 -c "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n  s.connect('${path}'); print('CONNECTED')\nexcept OSError as e:\n  print('refused', e)"`

describe.skipIf(!available)("attack: host Unix sockets from the sandbox (issue 26, item 1)", () => {
  it.live("a listener in the host /tmp and one in $XDG_RUNTIME_DIR see no connection; TMPDIR is private", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const tmp = yield* tmpDir("sock")
        const runtime = yield* outsideDir("xdg")
        const inTmp = yield* socketListener(join(tmp, "s.sock"))
        const inRuntime = yield* socketListener(join(runtime, "bus"))
        const env = { XDG_RUNTIME_DIR: runtime }
        const command = `${connectWithPython(join(tmp, "s.sock"))}; ${connectWithPython(join(runtime, "bus"))}; ` +
          `echo tmpdir=$TMPDIR; ls ${tmp} 2>/dev/null | wc -l`
        const text = textOf(yield* Bash.runWith(options(env))({ command }))
        expect(text).not.toContain("CONNECTED")
        expect(text).toContain("tmpdir=/tmp")
        expect(inTmp.connections).toBe(0)
        expect(inRuntime.connections).toBe(0)
        // control: the same client outside the sandbox connects
        const control = textOf(yield* Bash.runWith(unsandboxed(env))({ command }))
        expect(control.match(/CONNECTED/g)).toHaveLength(2)
      })
    ))

  it.live.skipIf(spawnSync("tmux", ["-V"]).status !== 0)(
    "the user's tmux server in /tmp cannot be told to type a command",
    () =>
      withWorkspace((root) =>
        Effect.gen(function*() {
          const tmp = yield* tmpDir("tmux")
          const socket = join(tmp, "default")
          const marker = join(root, "typed-by-tmux")
          yield* Effect.acquireRelease(
            Effect.sync(() => execFileSync("tmux", ["-S", socket, "new-session", "-d", "sh"])),
            () => Effect.sync(() => spawnSync("tmux", ["-S", socket, "kill-server"]))
          )
          const text = textOf(
            yield* Bash.runWith(options())({
              command: `tmux -S ${socket} send-keys 'touch ${marker}' Enter && echo SENT || echo refused`
            })
          )
          yield* Effect.sleep(300)
          expect(text).not.toContain("SENT")
          expect(existsSync(marker)).toBe(false)
        })
      )
  )
})

/** each protected path and a command that tries to plant into it */
const plantings: ReadonlyArray<{ readonly path: string; readonly plant: string }> = [
  { path: ".claude/settings.json", plant: "mkdir -p .claude; echo PLANTED > .claude/settings.json" },
  { path: ".claude/settings.local.json", plant: "echo PLANTED > .claude/settings.local.json" },
  { path: ".codex/hooks.json", plant: "mkdir -p .codex; echo PLANTED > .codex/hooks.json" },
  { path: ".effect-harness/settings.json", plant: "mkdir -p .effect-harness; echo PLANTED > .effect-harness/settings.json" },
  { path: ".mcp.json", plant: "echo PLANTED > .mcp.json" },
  { path: ".git/hooks/pre-commit", plant: "mkdir -p .git/hooks; echo PLANTED > .git/hooks/pre-commit" },
  { path: ".git/config", plant: "echo PLANTED >> .git/config" },
  { path: ".git/modules/sub/config", plant: "mkdir -p .git/modules/sub; echo PLANTED > .git/modules/sub/config" }
]
const evasions = "mv .claude .claude-old; rm -rf .codex; mv .mcp.json x.json; rm -rf .git/hooks; ln -sf /tmp .effect-harness/x"

describe.skipIf(!available)("attack: planting the harness's configuration from bash (issue 26, item 2)", () => {
  it.live("existing protected paths stay unchanged", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        for (const { path } of plantings) write(join(root, path), "ORIGINAL\n")
        const out = yield* Bash.runWith(options())({ command: `${plantings.map((p) => p.plant).join("; ")}; ${evasions}; true` })
        expect(out.meta).toMatchObject({ sandboxed: true })
        for (const { path } of plantings) expect(readFileSync(join(root, path), "utf8"), path).toBe("ORIGINAL\n")
        expect(existsSync(join(root, ".claude-old"))).toBe(false)
        expect(existsSync(join(root, "x.json"))).toBe(false)
        expect(existsSync(join(root, ".effect-harness/x"))).toBe(false)
      })
    ))

  it.live("absent protected paths cannot be created, and the tree is left as it was", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        mkdirSync(join(root, ".git"))
        const out = yield* Bash.runWith(options())({
          command: `${plantings.map((p) => p.plant).join("; ")}; ls -A; true`
        })
        expect(out.meta).toMatchObject({ sandboxed: true })
        for (const { path } of plantings) expect(existsSync(join(root, path)), path).toBe(false)
        for (const top of [".claude", ".codex", ".effect-harness", ".mcp.json", ".git/hooks", ".git/modules", ".git/config"]) {
          expect(existsSync(join(root, top)), top).toBe(false)
        }
      })
    ))

  it.live("an ordinary workspace write still works next to them", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        yield* Bash.runWith(options())({ command: "mkdir -p src && echo ok > src/a.txt && echo ok > .claude.txt" })
        expect(readFileSync(join(root, "src/a.txt"), "utf8")).toBe("ok\n")
        expect(readFileSync(join(root, ".claude.txt"), "utf8")).toBe("ok\n")
      })
    ))
})

const SECRET = `SECRET-${rand()}`

describe.skipIf(!available)("attack: credential hiding that holds (issue 26, item 4)", () => {
  it.live("workspace at a fake $HOME: ~/.ssh/id_rsa unreadable; start-up files and authorized_keys not writable", () =>
    Effect.gen(function*() {
      const home = yield* outsideDir("home")
      write(join(home, ".ssh/id_rsa"), `${SECRET}\n`)
      write(join(home, ".bashrc"), "# mine\n")
      const out = yield* withWorkspaceAt(home, options({ HOME: home }))({
        command: `cat ~/.ssh/id_rsa; cat ${home}/.ssh/id_rsa; echo evil >> ~/.bashrc; echo evil > ~/.bash_profile; ` +
          `echo evil > ~/.profile; mkdir -p ~/.ssh; echo key >> ~/.ssh/authorized_keys; mkdir -p ~/.config/fish; ` +
          `echo evil > ~/.config/fish/config.fish; echo ok > work.txt; true`
      })
      expect(textOf(out)).not.toContain(SECRET)
      expect(readFileSync(join(home, ".bashrc"), "utf8")).toBe("# mine\n")
      for (const file of [".bash_profile", ".profile", ".ssh/authorized_keys", ".config"]) {
        expect(existsSync(join(home, file)), file).toBe(false)
      }
      expect(readFileSync(join(home, "work.txt"), "utf8")).toBe("ok\n")
    }))

  it.live("$HOME inside the temp directory: its credentials are unreadable", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const home = yield* tmpDir("home")
        write(join(home, ".ssh/id_rsa"), `${SECRET}\n`)
        write(join(home, ".aws/credentials"), `${SECRET}\n`)
        const text = textOf(
          yield* Bash.runWith(options({ HOME: home }))({ command: `cat ~/.ssh/id_rsa ~/.aws/credentials ${home}/.ssh/id_rsa` })
        )
        expect(text).not.toContain(SECRET)
      })
    ))

  it.live("a symlinked ~/.gnupg and ~/.kube: the link targets are hidden too", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const home = yield* outsideDir("home")
        const data = yield* outsideDir("data")
        write(join(data, "gnupg/private-keys"), `${SECRET}\n`)
        write(join(data, "kube/config"), `${SECRET}\n`)
        symlinkSync(join(data, "gnupg"), join(home, ".gnupg"))
        symlinkSync(join(data, "kube"), join(home, ".kube"))
        const text = textOf(
          yield* Bash.runWith(options({ HOME: home }))({
            command: `cat ~/.gnupg/private-keys ~/.kube/config ${data}/gnupg/private-keys ${data}/kube/config`
          })
        )
        expect(text).not.toContain(SECRET)
      })
    ))

  it.live("the passwd home is hidden too when $HOME differs", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const home = yield* outsideDir("home")
        const passwd = yield* outsideDir("passwd")
        write(join(passwd, ".ssh/id_ed25519"), `${SECRET}\n`)
        write(join(passwd, ".netrc"), `${SECRET}\n`)
        const text = textOf(
          yield* Bash.runWith(options({ HOME: home }, passwd))({ command: `cat ${passwd}/.ssh/id_ed25519 ${passwd}/.netrc` })
        )
        expect(text).not.toContain(SECRET)
      })
    ))

  it.live("every hidden credential path is unreadable", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const home = yield* outsideDir("home")
        const files = Sandbox.HIDDEN_HOME_PATHS.map((rel) =>
          // directories get a file inside; files are the path itself
          /\.(json|toml|xml|properties|Config|gpg)$|credentials$|rc$|token$|pgpass$|cnf$|cfg$|boto$|netrc$|authinfo$/.test(rel)
            ? rel
            : `${rel}/secret`
        )
        for (const file of files) write(join(home, file), `${SECRET} ${file}\n`)
        const text = textOf(
          yield* Bash.runWith(options({ HOME: home }))({
            command: files.map((f) => `cat ~/${f} ${home}/${f} 2>/dev/null`).join("; ") + "; echo done"
          })
        )
        expect(text).toContain("done")
        expect(text).not.toContain(SECRET)
      })
    ))
})

describe.skipIf(!available)("attack: the harness's memory from the sandbox (issue 26, item 5)", () => {
  it.live("the harness process is not visible: no /proc/<pid>/mem or maps to read", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const text = textOf(
          yield* Bash.runWith(options())({
            command: `head -c 16 /proc/${process.pid}/maps >/dev/null 2>&1 && echo VISIBLE || echo hidden; ` +
              `head -c 1 /proc/$PPID/mem >/dev/null 2>&1 && echo PARENT-MEM || echo no-parent-mem`
          })
        )
        expect(text).toContain("no-parent-mem")
        if (process.pid > 3) expect(text).toContain("hidden")
      })
    ))
})

/** runs one command with the workspace at `root` (an existing directory) */
const withWorkspaceAt = (root: string, opts: Bash.Options) => (params: Bash.Params) =>
  Effect.gen(function*() {
    const ws = yield* Workspace.make(root)
    return yield* Bash.runWith(opts)(params).pipe(Effect.provideService(Workspace.Workspace, ws))
  }).pipe(Effect.provide(NodeServices.layer))
