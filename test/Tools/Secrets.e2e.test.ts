/**
 * End-to-end (issue 16): the bundled CLI with provider keys and other secrets in its environment,
 * a scripted model asking bash to hunt for them. No key reaches bash (environment, its parent's
 * `/proc/PID/environ`, any ancestor); a secret value printed by a tool is `<redacted>` in the
 * `--json` stream and in the session log (from which the model's next input is built), with the
 * count recorded in the result's meta.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { execFileSync } from "node:child_process"
import * as Sandbox from "../../src/Tools/Sandbox.js"
import * as Cli from "../support/Cli.js"

const TIMEOUT = 120_000
const tag = Math.random().toString(36).slice(2, 10)
const PROVIDER_KEY = `sk-ant-PROVKEY-${tag}`
const GITHUB_TOKEN = `ghp_GHTOKEN${tag}`

// the command never contains a secret literally: the tool call itself is logged
const HUNT = [
  "echo env=$(env | grep -c -e PROVKEY -e GHTOKEN)",
  "echo ppid-provider=$(tr '\\0' '\\n' </proc/$PPID/environ | grep -c PROVKEY)",
  "p=$$; n=0; while [ \"$p\" -gt 1 ]; do p=$(cut -d' ' -f4 /proc/$p/stat); " +
  "n=$((n + $(tr '\\0' '\\n' </proc/$p/environ 2>/dev/null | grep -c PROVKEY))); done; echo ancestors-provider=$n",
  "echo any-process=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e PROVKEY -e GHTOKEN)",
  `echo printed=sk-ant-$(echo PROVKEY)-${tag} ghp_$(echo GHTOKEN)${tag}`
].join("\n")

interface ToolResultEvent {
  readonly type: "tool/result"
  readonly data: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>; readonly meta?: Record<string, unknown> }
}

const huntIn = (extraArgs: ReadonlyArray<string>, extraEnv: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const home = yield* Cli.tempDir("harness-secrets-home-")
    const work = yield* Cli.tempDir("harness-secrets-ws-")
    const script = join(home, "script.json")
    writeFileSync(
      script,
      JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [{ call: { id: "c1", name: "bash", arguments: JSON.stringify({ command: HUNT }) } }, { text: "done" }]
      })
    )
    const result = yield* Cli.runCli(
      ["run", "--json", "--yes", "--provider", "scripted", "--script", script, ...extraArgs, "hunt"],
      { cwd: work, home, env: { ANTHROPIC_API_KEY: PROVIDER_KEY, GITHUB_TOKEN, ...extraEnv }, timeoutMs: TIMEOUT - 10_000 }
    )
    expect(result.code, result.stderr).toBe(0)
    const events = Cli.linesOf(result.stdout).map((l) => JSON.parse(l) as { readonly type: string })
    const toolResult = events.find((e): e is ToolResultEvent => e.type === "tool/result")
    expect(toolResult).toBeDefined()
    const text = toolResult!.data.content.map((b) => b.text ?? "").join("")
    const logs = Cli.sessionLogs(home)
    expect(logs).toHaveLength(1)
    return { result, text, meta: toolResult!.data.meta, log: readFileSync(logs[0]!, "utf8") }
  })

const value = (text: string, key: string): string | undefined => new RegExp(`^${key}=(.*)$`, "m").exec(text)?.[1]

describe("secrets kept out of tools (issue 16)", () => {
  it.live.skipIf(!Sandbox.availability().available)(
    "sandboxed bash: no secret in env, /proc/$PPID, any ancestor or any visible process; printed secrets are <redacted>",
    () =>
      Effect.gen(function*() {
        const { log, meta, result, text } = yield* huntIn([])
        expect(value(text, "env")).toBe("0")
        expect(value(text, "ppid-provider")).toBe("0")
        expect(value(text, "ancestors-provider")).toBe("0")
        expect(value(text, "any-process")).toBe("0")
        expect(value(text, "printed")).toBe("<redacted> <redacted>")
        expect(meta).toMatchObject({ sandboxed: true, redactions: 2 })
        for (const secret of [PROVIDER_KEY, GITHUB_TOKEN]) {
          expect(result.stdout).not.toContain(secret)
          expect(result.stderr).not.toContain(secret)
          expect(log).not.toContain(secret)
        }
      }),
    TIMEOUT
  )

  it.live(
    "--no-sandbox: the provider key is still unreadable through /proc/$PPID/environ and ancestors; output still scrubbed",
    () =>
      Effect.gen(function*() {
        const { log, meta, result, text } = yield* huntIn(["--no-sandbox"])
        expect(value(text, "env")).toBe("0")
        expect(value(text, "ppid-provider")).toBe("0")
        expect(value(text, "ancestors-provider")).toBe("0")
        expect(value(text, "printed")).toBe("<redacted> <redacted>")
        expect(meta).toMatchObject({ sandboxed: false })
        for (const secret of [PROVIDER_KEY, GITHUB_TOKEN]) {
          expect(result.stdout).not.toContain(secret)
          expect(log).not.toContain(secret)
        }
      }),
    TIMEOUT
  )

  it.live(
    "bwrap missing: said once on stderr, bash runs unsandboxed with the allowlisted environment",
    () =>
      Effect.gen(function*() {
        // a PATH with the shell tools but no bwrap
        const bin = yield* Cli.tempDir("harness-secrets-bin-")
        for (const tool of ["bash", "env", "grep", "tr", "cut", "cat"]) {
          const target = execFileSync("bash", ["-c", `command -v ${tool}`]).toString().trim()
          symlinkSync(target, join(bin, tool))
        }
        const { meta, result, text } = yield* huntIn([], { PATH: bin })
        const notices = Cli.linesOf(result.stderr).filter((l) => l.includes("bash runs unsandboxed"))
        expect(notices).toHaveLength(1)
        expect(notices[0]).toContain("bubblewrap (bwrap) is not installed")
        expect(meta).toMatchObject({ sandboxed: false })
        expect(value(text, "env")).toBe("0")
        expect(value(text, "ppid-provider")).toBe("0")
        expect(value(text, "printed")).toBe("<redacted> <redacted>")
      }),
    TIMEOUT
  )
})
