// vitest project: integration
/**
 * End-to-end: `harness chat` on a real pseudo-terminal (tmux), the bundled CLI and the scripted
 * model (issue 15, "The terminal"). Every assertion reads the screen (`tmux capture-pane -p`) or
 * the session log; waits poll the screen until the expected content appears (bounded), never on
 * timing. Skipped, with a notice, when tmux is not installed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawnSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"

const TIMEOUT = 90_000
const WAIT_MS = 30_000

const tmuxAvailable = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0
if (!tmuxAvailable) console.warn("SKIP test/Cli/TuiChat.test.ts: tmux is not installed (apt-get install -y tmux)")

interface Pane {
  /** sends tmux key names (`Enter`, `C-c`) or literal text with `literal` */
  readonly keys: (...keys: ReadonlyArray<string>) => void
  readonly type: (text: string) => void
  /** pastes `text` as a bracketed paste (the application enabled bracketed paste mode) */
  readonly paste: (text: string) => void
  /** the screen and its scrollback, as plain text */
  readonly screen: () => string
  /** the screen with its escape sequences (colours) */
  readonly rawScreen: () => string
  /** polls the screen until `predicate` holds (bounded); fails with the last screen */
  readonly waitFor: (what: string, predicate: (screen: string) => boolean) => Effect.Effect<string>
  readonly dead: () => boolean
}

let sockets = 0

/** Starts `harness chat ...args` in a detached tmux session of its own server (killed with the Scope). */
const startChat = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly home: string }
): Effect.Effect<Pane, never, Scope.Scope> =>
  Effect.gen(function*() {
    const bundle = yield* Cli.bundle
    const socket = `harness-tui-${process.pid}-${sockets++}`
    const tmux = (...a: ReadonlyArray<string>) => spawnSync("tmux", ["-L", socket, "-f", "/dev/null", ...a], { encoding: "utf8" })
    const env = Cli.cleanEnv(options.home)
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
    const script = join(options.home, `chat-${socket}.sh`)
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        "unset TMUX",
        ...Object.entries(env).filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)).map(([k, v]) => `export ${k}=${quote(v)}`),
        `cd ${quote(options.cwd)}`,
        `exec ${quote(process.execPath)} ${quote(bundle)} chat ${args.map(quote).join(" ")}`
      ].join("\n")
    )
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const started = tmux("new-session", "-d", "-x", "100", "-y", "50", `sh ${quote(script)}`, ";", "set-option", "-g", "remain-on-exit", "on")
        if (started.status !== 0) throw new Error(`tmux new-session failed: ${started.stderr}`)
      }),
      () => Effect.sync(() => void tmux("kill-server"))
    )
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-500").stdout
    return {
      keys: (...keys) => void tmux("send-keys", ...keys),
      type: (text) => void tmux("send-keys", "-l", text),
      paste: (text) => {
        const file = join(options.home, `paste-${socket}.txt`)
        writeFileSync(file, text)
        tmux("load-buffer", file)
        tmux("paste-buffer", "-p", "-d")
      },
      screen,
      rawScreen: () => tmux("capture-pane", "-p", "-e", "-S", "-500").stdout,
      dead: () => tmux("display-message", "-p", "#{pane_dead}").stdout.trim() === "1",
      waitFor: (what, predicate) =>
        Effect.gen(function*() {
          const deadline = Date.now() + WAIT_MS
          for (;;) {
            const text = screen()
            if (predicate(text)) return text
            if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}; screen:\n${text}`))
            yield* Effect.sleep(100)
          }
        })
    }
  })

/** The input editor's lines: between the last two horizontal rules of the screen. */
const inputLines = (screen: string): Array<string> => {
  const lines = screen.split("\n")
  const rules = lines.flatMap((l, i) => (/^─{20,}$/.test(l.trim()) ? [i] : []))
  if (rules.length < 2) return []
  return lines.slice(rules[rules.length - 2]! + 1, rules[rules.length - 1]!).map((l) => l.trimEnd())
}

/** The user messages of the session log (text), in order. */
const userMessages = (home: string): Array<{ readonly type: string; readonly text: string }> =>
  Cli.sessionLogs(home).flatMap((file) =>
    readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").flatMap((line) => {
      let event: { type: string; data?: { content?: Array<{ type: string; text?: string }> } }
      try {
        event = JSON.parse(line)
      } catch {
        return [] // a line still being written
      }
      if (event.type !== "user/message" && event.type !== "steering/message") return []
      return [{ type: event.type, text: (event.data?.content ?? []).map((b) => b.text ?? "").join("") }]
    })
  )

const writeScript = (dir: string, responses: ReadonlyArray<unknown>): string => {
  const file = join(dir, "script.json")
  writeFileSync(file, JSON.stringify({ provider: "scripted", model: "demo", responses }))
  return file
}

describe.skipIf(!tmuxAvailable)("harness chat on a terminal (issue 15)", () => {
  it.live(
    "[issue 15] type-ahead stays in the input, an approval keeps the draft, tool call and diff render, Ctrl-C then a new prompt",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        writeFileSync(join(work, "notes.txt"), "alpha\nbeta\ngamma\n")
        // the first command waits for a file the test creates, and fails with exit code 4
        writeFileSync(join(work, "wait.sh"), "while [ ! -f go ]; do sleep 0.05; done\necho waited\nexit 4\n")
        writeFileSync(join(home, "settings.json"), JSON.stringify({ permissions: { allow: ["Bash(sh wait.sh)"] } }))
        const script = writeScript(work, [
          [
            { reasoning: "I should wait first." },
            { text: "Working on it." },
            { toolCall: { id: "c1", name: "bash", arguments: JSON.stringify({ command: "sh wait.sh" }) } },
            { finish: { kind: "tool-calls" } }
          ],
          [
            { text: "Now the edit." },
            {
              toolCall: {
                id: "c2",
                name: "edit",
                arguments: JSON.stringify({ file_path: "notes.txt", old_string: "beta", new_string: "BETA" })
              }
            },
            { usage: { inputTokens: 1200, outputTokens: 30 } },
            { finish: { kind: "tool-calls" } }
          ],
          { text: "All done." },
          [{ text: "partial answer" }, { hang: true }],
          { text: "second answer" }
        ])
        const pane = yield* startChat(["--provider", "scripted", "--script", script, "--no-sandbox"], { cwd: work, home })
        yield* pane.waitFor("the banner and status line", (s) => s.includes("effect-harness · scripted/demo") && s.includes("Ctrl-C cancels"))
        pane.type("start")
        pane.keys("Enter")
        // a spinner with the elapsed time while the tool runs
        yield* pane.waitFor("the running bash call", (s) => /bash\(sh wait\.sh\) running \d+\.\ds/.test(s))
        // type-ahead while the turn runs: kept in the input line, not sent
        pane.type("hello world")
        yield* pane.waitFor("the draft in the input line", (s) => inputLines(s).includes("hello world"))
        expect(userMessages(home).map((m) => m.text)).toEqual(["start"])
        writeFileSync(join(work, "go"), "")
        // the failing command shows its exit code; then the edit asks for approval
        let screen = yield* pane.waitFor("the approval panel", (s) => s.includes("Allow edit"))
        expect(screen).toMatch(/✗ bash\(sh wait\.sh\)/)
        expect(screen).toContain("waited")
        expect(screen).toContain("exit code 4")
        expect(screen).not.toContain("(no output)")
        expect(inputLines(screen)).toContain("hello world")
        // keys that are no answer go to the draft, not to the question
        pane.type(" more")
        yield* pane.waitFor("the longer draft", (s) => inputLines(s).includes("hello world more"))
        expect(pane.screen()).toContain("Allow edit")
        // the panel takes keys again after a pause in typing
        yield* pane.waitFor("the armed panel", (s) => s.includes("Allow edit") && !s.includes("typing goes to your draft"))
        pane.type("y")
        screen = yield* pane.waitFor("the diff and the final answer", (s) => s.includes("All done.") && !s.includes("Allow edit"))
        expect(screen).toMatch(/✓ edit\(notes\.txt\)/)
        expect(screen).toContain("@@ -1,3 +1,3 @@")
        expect(screen).toMatch(/^ {2}-beta\s*$/m)
        expect(screen).toMatch(/^ {2}\+BETA\s*$/m)
        expect(screen).toMatch(/^ {3}alpha\s*$/m)
        // reasoning shown, text of the two steps not glued together
        expect(screen).toContain("I should wait first.")
        expect(screen).not.toContain("Working on it.Now the edit.")
        // the status line: provider/model, usage and context use
        expect(screen).toMatch(/scripted\/demo · in \d+ · out \d+ · ctx \d+% of \d+k/)
        expect(inputLines(screen)).toContain("hello world more")
        expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("alpha\nBETA\ngamma\n")
        expect(userMessages(home).map((m) => m.text)).toEqual(["start"])
        // the draft is sent by Enter only; Ctrl-C cancels the turn; a new prompt works after it
        pane.keys("Enter")
        yield* pane.waitFor("the partial answer", (s) => s.includes("partial answer"))
        pane.keys("C-c")
        yield* pane.waitFor("the cancellation", (s) => s.includes("cancelled: cancelled by the user"))
        pane.type("again")
        pane.keys("Enter")
        screen = yield* pane.waitFor("the next answer", (s) => s.includes("second answer"))
        expect(userMessages(home)).toEqual([
          { type: "user/message", text: "start" },
          { type: "user/message", text: "hello world more" },
          { type: "user/message", text: "again" }
        ])
        // exit: the shell's next output starts on a fresh line
        pane.type("/exit")
        pane.keys("Enter")
        screen = yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
        expect(screen).toMatch(/^resume with: harness chat --resume harness-session-\S+$/m)
      }),
    TIMEOUT
  )

  it.live(
    "[issue 15] a 20-line bracketed paste is one user message; /model, /sessions, /help; NO_COLOR",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        const script = writeScript(work, [{ text: "got the paste" }])
        const pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home })
        yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo"))
        const lines = Array.from({ length: 20 }, (_, i) => `pasted line ${i + 1}`)
        pane.paste(lines.join("\n"))
        yield* pane.waitFor("the paste in the input", (s) => inputLines(s).some((l) => l.includes("[paste #1 +20 lines]")))
        expect(userMessages(home)).toEqual([])
        pane.keys("Enter")
        yield* pane.waitFor("the answer", (s) => s.includes("got the paste"))
        expect(userMessages(home)).toEqual([{ type: "user/message", text: lines.join("\n") }])
        // slash commands
        pane.type("/model other-model")
        pane.keys("Enter")
        yield* pane.waitFor("the model switch", (s) => s.includes("model: scripted/other-model") && /^scripted\/other-model/m.test(s))
        pane.type("/sessions")
        pane.keys("Enter")
        yield* pane.waitFor("the session list", (s) => /harness-session-\S+ {2}\S+ {2}1 turn {2}pasted line 1/.test(s))
        pane.type("/help")
        pane.keys("Enter")
        yield* pane.waitFor("the help", (s) => s.includes("/resume <id>") && s.includes("/compact [instructions]"))
        // NO_COLOR: no colour sequence on the screen
        expect(pane.rawScreen()).not.toMatch(/\x1b\[(?:[0-9;]*;)?(?:3[0-8]|9[0-7])[;m]/)
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT
  )
})
