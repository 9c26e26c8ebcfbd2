// vitest project: integration
/**
 * The approval prompt on a real pseudo-terminal (util-linux `script`): the spawned CLI asks about a
 * 1,000-character bash command that carries an ANSI payload and a hidden `touch`; a `y` typed
 * before the question appears must not answer it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { bundlePath, cleanEnv } from "../support/Cli.js"
import { tempRoot } from "../Hooks/BridgeKit.js"

const hasScript = spawnSync("script", ["--version"]).status === 0

describe("approval prompt on a terminal", () => {
  it.live.skipIf(!hasScript)("a 1,000-character command is fully visible, an ANSI payload is inert, type-ahead is discarded", () =>
    Effect.gen(function*() {
      const cli = yield* Effect.promise(() => bundlePath())
      const root = tempRoot()
      const ws = join(root, "ws")
      const home = join(root, "home")
      mkdirSync(ws)
      mkdirSync(home)
      const command = `echo ${"A".repeat(940)} \u001b[1A\u001b[2K\u001b]0;title\u0007; touch HIDDEN_PAYLOAD_RAN`
      expect(command.length).toBeGreaterThanOrEqual(980)
      writeFileSync(join(ws, "script.json"), JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [{ call: { id: "c1", name: "bash", arguments: JSON.stringify({ command }) } }, { text: "done" }]
      }))
      const line = `'${process.execPath}' '${cli}' run --provider scripted --script script.json go`
      const out = yield* Effect.callback<{ readonly text: string; readonly code: number | null }>((resume) => {
        const child = spawn("script", ["-qfec", line, "/dev/null"], { cwd: ws, env: { ...cleanEnv(home), COLUMNS: "80", LINES: "40" } })
        let text = ""
        let answered = false
        child.stdout.setEncoding("utf8")
        child.stdout.on("data", (d: string) => {
          text += d
          if (!answered && text.includes("/N] ")) {
            answered = true
            child.stdin.write("n\n")
          }
        })
        child.stdin.write("y\n") // typed ahead, before the question exists
        const timer = setTimeout(() => child.kill("SIGKILL"), 40_000)
        child.on("close", (code) => {
          clearTimeout(timer)
          resume(Effect.succeed({ text, code }))
        })
        return Effect.sync(() => void child.kill("SIGKILL"))
      })
      const text = out.text.replace(/\r\n/g, "\n")
      const question = text.indexOf("Allow bash")
      expect(question, text).toBeGreaterThan(0)
      // the early `y` was echoed by the terminal before the question, and did not answer it
      expect(text.lastIndexOf("y\n", question)).toBeGreaterThanOrEqual(0)
      expect(existsSync(join(ws, "HIDDEN_PAYLOAD_RAN"))).toBe(false)
      expect(text).toContain("the user rejected the tool call")
      // the whole command, wrapped, never cut; the payload shown as inert escapes
      const shown = text.slice(question).split("\n")
        .filter((l) => l.startsWith("  │ ") || l.startsWith("  ┊ "))
        .map((l) => l.slice(4))
        .join("")
      expect(shown).toBe(command.replace(/\u001b/g, "\\x1b").replace(/\u0007/g, "\\x07"))
      expect(shown).toContain("touch HIDDEN_PAYLOAD_RAN")
      expect(text.slice(question)).not.toMatch(/[\u001b\u0007]/)
      expect(out.code).toBe(0)
    }), 60_000)
})
