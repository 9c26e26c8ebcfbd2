/**
 * Attack (issue 26, item 8 "raw escape sequences"): a scripted model answers text carrying an OSC 52
 * clipboard write, an OSC 0 title, `ESC [2J` (clear screen) and a bidi override, and calls `bash`
 * with the same payload in its arguments (the command echoes it back as tool output). The bundled
 * CLI runs in a real pseudo-terminal (a private tmux server): `run` in text mode, then `chat` in
 * script mode (stdin a pipe, stdout and stderr the terminal), with the same script.
 *
 * The terminal must show every escape visibly (`\x1b]52;…`, `\u202e`), keep the text around it,
 * keep its title, and hold no clipboard buffer. Before the fix the title became the model's and
 * the screen was cleared. Skipped with one notice when tmux is absent.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"

const hasTmux = spawnSync("tmux", ["-V"]).status === 0
if (!hasTmux) console.warn("test/attack/Output.test.ts: tmux is not installed; the terminal attack test is skipped")

const PAYLOAD = "\u001b]52;c;cHduZWQ=\u0007 \u001b]0;PWNED-TITLE\u0007 \u001b[2J \u202eREVERSED\u202c"
const SHOWN = "\\x1b]52;c;cHduZWQ=\\x07 \\x1b]0;PWNED-TITLE\\x07 \\x1b[2J \\u202eREVERSED\\u202c"

describe("attack: clean terminal output (issue 26)", () => {
  it.live.skipIf(!hasTmux)(
    "[issue 26] run and chat on a terminal: OSC 52, OSC 0, clear screen and bidi override from the model and a tool are shown inert; title and clipboard unchanged",
    () =>
      Effect.gen(function*() {
        const cli = yield* Cli.bundle
        const root = yield* Cli.tempDir("attack-output-")
        const ws = join(root, "ws")
        const home = join(root, "home")
        mkdirSync(ws)
        mkdirSync(home)
        writeFileSync(
          join(ws, "script.json"),
          JSON.stringify({
            provider: "scripted",
            model: "demo",
            responses: [
              [
                { text: `MODEL-TEXT ${PAYLOAD} END-TEXT\n` },
                { toolCall: { id: "c1", name: "bash", arguments: JSON.stringify({ command: `printf '%s' 'TOOL-OUT ${PAYLOAD}'` }) } },
                { finish: { kind: "tool-calls" } }
              ],
              { text: `FINAL ${PAYLOAD} DONE` }
            ]
          })
        )
        const node = process.execPath
        writeFileSync(
          join(root, "run.sh"),
          [
            "#!/bin/sh",
            `cd '${ws}'`,
            `'${node}' '${cli}' run --yes --no-sandbox --script script.json go`,
            `printf 'second\\n' | '${node}' '${cli}' chat --script script.json`,
            `touch '${join(root, "done")}'`,
            "sleep 60"
          ].join("\n"),
          { mode: 0o755 }
        )
        const socket = join(root, "tmux.sock")
        const tmux = (...args: ReadonlyArray<string>) => {
          const r = spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], {
            env: { ...Cli.cleanEnv(home), TERM: "xterm-256color" },
            encoding: "utf8"
          })
          return { code: r.status, out: r.stdout }
        }
        yield* Effect.addFinalizer(() => Effect.sync(() => void tmux("kill-server")))
        expect(tmux("new-session", "-d", "-s", "t", "-x", "220", "-y", "60", "sh").code).toBe(0)
        tmux("set-option", "-g", "set-clipboard", "on")
        tmux("set-option", "-g", "history-limit", "5000")
        tmux("select-pane", "-t", "t", "-T", "BEFORE-TITLE")
        tmux("send-keys", "-t", "t", `exec '${join(root, "run.sh")}'`, "Enter")
        yield* Cli.waitForFile(join(root, "done")).pipe(Effect.timeout("40 seconds"), Effect.orDie)
        const screen = tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-1000").out
        const title = tmux("display-message", "-p", "-t", "t", "#{pane_title}").out.trim()
        const buffers = tmux("list-buffers").out.trim()
        // the terminal kept its title and got no clipboard write
        expect(title).toBe("BEFORE-TITLE")
        expect(buffers).toBe("")
        // nothing was cleared: the text before and after each payload is there, the escapes visible
        // (the call line shows the JSON arguments; the tool ran in `run`, chat was not interactive)
        const lines = screen.split("\n")
        expect(lines.filter((l) => l === `MODEL-TEXT ${SHOWN} END-TEXT`)).toHaveLength(2)
        expect(lines.filter((l) => l === `FINAL ${SHOWN} DONE`)).toHaveLength(2)
        expect(screen).toContain("✓ bash: TOOL-OUT \\x1b]52;c;cHduZWQ=\\x07 \\x1b]0;PWNED-TITLE\\x07")
        expect(screen).not.toMatch(/[\u001b\u0007\u202e]/)
        // the session log keeps the model's text as it was
        const [log] = Cli.sessionLogs(home)
        expect(readFileSync(log!, "utf8")).toContain(JSON.stringify(`FINAL ${PAYLOAD} DONE`).slice(1, -1))
      }),
    60_000
  )
})
