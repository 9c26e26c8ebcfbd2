// vitest project: integration
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import { join } from "node:path"
import * as Bash from "../../src/Tools/Bash.js"
import * as ChildEnv from "../../src/Tools/internal/ChildEnv.js"
import * as Sandbox from "../../src/Tools/Sandbox.js"
import { repoRoot } from "../support/Cli.js"
import { textOf, withWorkspace } from "../support/TempWorkspace.js"

const available = Sandbox.availability().available
const sandboxed: Bash.Options = { ...Bash.defaultOptions, killGraceMs: 300, sandbox: { enabled: true, allowNetwork: false } }
const networked: Bash.Options = { ...sandboxed, sandbox: { enabled: true, allowNetwork: true } }

/** a directory outside both the workspace and the temp directory */
const outsideDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = join(repoRoot, ".tmp", `sandbox-outside-${process.pid}-${Math.random().toString(36).slice(2)}`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "canary.txt"), "CANARY\n")
    return dir
  }),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const listener = Effect.acquireRelease(
  Effect.callback<Net.Server & { port: number }>((resume) => {
    const server = Net.createServer((socket) => socket.end("hello\n"))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(Effect.succeed(Object.assign(server, { port: typeof address === "object" && address !== null ? address.port : 0 })))
    })
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
)

const gitOff = (from: number): Record<string, string> => ({
  [`GIT_CONFIG_KEY_${from}`]: "core.fsmonitor",
  [`GIT_CONFIG_VALUE_${from}`]: "false",
  [`GIT_CONFIG_KEY_${from + 1}`]: "core.hooksPath",
  [`GIT_CONFIG_VALUE_${from + 1}`]: "/dev/null",
  GIT_CONFIG_COUNT: String(from + 2)
})

describe("ChildEnv (issue 16)", () => {
  it("passes the allowlist and listed names only, never a provider key", () => {
    const env = ChildEnv.build({
      PATH: "/bin",
      HOME: "/h",
      LANG: "C",
      LC_ALL: "C",
      TERM: "xterm",
      AWS_SECRET_ACCESS_KEY: "aws",
      GITHUB_TOKEN: "gh",
      ANTHROPIC_API_KEY: "k",
      MY_VAR: "v",
      OTHER: "o"
    }, ["MY_VAR", "ANTHROPIC_API_KEY"])
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", LANG: "C", LC_ALL: "C", TERM: "xterm", MY_VAR: "v", ...gitOff(0) })
  })

  it("turns git's fsmonitor and hooks off after the user's own GIT_CONFIG_* entries, unless EFFECT_HARNESS_GIT_HOOKS=1", () => {
    const passed = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "user.name", GIT_CONFIG_VALUE_0: "me" }
    const env = ChildEnv.build({ PATH: "/bin", ...passed }, Object.keys(passed))
    expect(env).toEqual({ PATH: "/bin", ...passed, ...gitOff(1), GIT_CONFIG_COUNT: "3" })
    expect(ChildEnv.build({ PATH: "/bin", EFFECT_HARNESS_GIT_HOOKS: "1" }, [])).toEqual({ PATH: "/bin" })
  })
})

describe.skipIf(!available)("bash under bubblewrap (issue 16)", () => {
  it.live("workspace and temp are writable; elsewhere is read-only", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const outside = yield* outsideDir
        const out = yield* Bash.runWith(sandboxed)({
          command: `echo in > inside.txt && echo ok-ws; echo t > "\${TMPDIR:-/tmp}/harness-sbx-$$" && echo ok-tmp; ` +
            `cat ${outside}/canary.txt; echo x > ${outside}/canary.txt || echo denied-write; ` +
            `echo y > ${outside}/new.txt || echo denied-create; rm -f ${outside}/canary.txt || echo denied-rm`
        })
        const text = textOf(out)
        expect(text).toContain("ok-ws")
        expect(text).toContain("ok-tmp")
        expect(text).toContain("CANARY")
        expect(text).toContain("denied-write")
        expect(text).toContain("denied-create")
        expect(text).toContain("denied-rm")
        expect(out.meta).toMatchObject({ sandboxed: true })
        expect(readFileSync(join(root, "inside.txt"), "utf8")).toBe("in\n")
        expect(readFileSync(join(outside, "canary.txt"), "utf8")).toBe("CANARY\n")
        expect(existsSync(join(outside, "new.txt"))).toBe(false)
      })
    ))

  it.live("no network unless allowed: a local TCP listener is unreachable", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const server = yield* listener
        const command = `exec 3<>/dev/tcp/127.0.0.1/${server.port} && head -n1 <&3 || echo no-connection`
        const denied = textOf(yield* Bash.runWith(sandboxed)({ command }))
        expect(denied).toContain("no-connection")
        expect(denied).not.toContain("hello")
        const allowed = textOf(yield* Bash.runWith(networked)({ command }))
        expect(allowed).toContain("hello")
      })
    ))

  it.live("own /proc: no host process (the harness included) is visible", () =>
    withWorkspace(() =>
      Effect.gen(function*() {
        const text = textOf(yield* Bash.runWith(sandboxed)({ command: "ls /proc | grep -c '^[0-9]'; echo ppid=$PPID" }))
        const count = Number(text.split("\n")[0])
        // bwrap's init, bash, and the ls/grep pipeline
        expect(count).toBeLessThanOrEqual(5)
        expect(text).toContain("ppid=1")
      })
    ))

  it.live("a cancelled sandboxed command is stopped with everything it started", () =>
    withWorkspace((root) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(Bash.runWith(sandboxed)({
          command: "(sleep 1; echo late > late.txt) & echo started > started.txt; wait"
        }))
        while (!existsSync(join(root, "started.txt"))) yield* Effect.sleep(20)
        yield* Fiber.interrupt(fiber)
        yield* Effect.sleep(1500)
        expect(existsSync(join(root, "late.txt"))).toBe(false)
      })
    ))
})
