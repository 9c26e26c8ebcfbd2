// vitest project: integration
/**
 * End-to-end: `harness chat` on a real pseudo-terminal (tmux), the bundled CLI and the scripted
 * model (issue 15, "The terminal"). Every assertion reads the screen (`tmux capture-pane -p`) or
 * the session log; waits poll the screen until the expected content appears (bounded), never on
 * timing. Skipped, with a notice, when tmux is not installed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"
import { inputLines, startChat, TIMEOUT, tmuxAvailable, userMessages, writeScript } from "../support/Tmux.js"

if (!tmuxAvailable) console.warn("SKIP test/Cli/TuiChat.test.ts: tmux is not installed (apt-get install -y tmux)")

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
        yield* pane.waitFor("the banner and status line", (s) => s.includes("effect-harness · scripted/demo") && s.includes("Esc interrupts"))
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
        yield* pane.waitFor("the help", (s) => s.includes("/resume [id prefix]") && s.includes("/compact [instructions]"))
        // NO_COLOR: no colour sequence on the screen
        expect(pane.rawScreen()).not.toMatch(/\x1b\[(?:[0-9;]*;)?(?:3[0-8]|9[0-7])[;m]/)
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT
  )
})
