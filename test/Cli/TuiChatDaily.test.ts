// vitest project: integration
/**
 * End-to-end: `harness chat` on a real pseudo-terminal (tmux), the bundled CLI and the scripted
 * model — issue 34, a terminal UI people keep open all day: rendering (tabs, Markdown, NO_COLOR),
 * input (completion, `!command`, history across chats, Ctrl-R, Esc, Ctrl-C twice), commands and
 * pickers, approval texts and the log of answers, and long sessions (no full-screen clears while
 * an answer streams, memory when a 10,000-event session is reopened, idle CPU). Every assertion
 * reads the screen, the terminal recording, `/proc` or the session log; waits poll (bounded).
 * Skipped, with a notice, when tmux is not installed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"
import type { Pane } from "../support/Tmux.js"
import { inputLines, startChat, TIMEOUT, tmuxAvailable, userMessages, writeScript } from "../support/Tmux.js"

if (!tmuxAvailable) console.warn("SKIP test/Cli/TuiChatDaily.test.ts: tmux is not installed (apt-get install -y tmux)")

/** every event of every session log of `home` */
const allEvents = (home: string): Array<{ readonly type: string; readonly data: Record<string, unknown> }> =>
  Cli.sessionLogs(home).flatMap((file) =>
    readFileSync(file, "utf8").split("\n").slice(1).filter((l) => l.trim() !== "").flatMap((line) => {
      try {
        return [JSON.parse(line) as { type: string; data: Record<string, unknown> }]
      } catch {
        return [] // a line still being written
      }
    })
  )

/** types `text`, waits until the input line shows it (a completion list settles), then presses Enter */
const submit = (pane: Pane, text: string) =>
  Effect.gen(function*() {
    pane.type(text)
    yield* pane.waitFor(`the input ${text}`, (s) => inputLines(s).some((l) => l.trim() === text))
    yield* Effect.sleep(200)
    pane.keys("Enter")
  })

const sessionIdOf = (screen: string): string => /session (harness-session-[0-9a-f-]+)/.exec(screen)?.[1] ?? ""

/** clock ticks (utime + stime) the process used so far */
const cpuTicks = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return Number(fields[11]) + Number(fields[12])
}

const rssMiB = (pid: number): number => {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return Number(kb) / 1024
}

describe.skipIf(!tmuxAvailable)("harness chat on a terminal, all day (issue 34)", () => {
  it.live(
    "[issue 34] tabs expanded in a read result and an answer; Markdown table, fenced block and emphasis rendered; NO_COLOR",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        writeFileSync(join(work, "main.go"), "package main\n\nfunc main() {\n\tif true {\n\t\tprintln(\"tabbed\")\n\t}\n}\n")
        const answer = [
          "## Result",
          "",
          "The file is **fine**, see `main.go`:",
          "",
          "| file | lines |",
          "|---|---|",
          "| main.go | 7 |",
          "",
          "```go",
          "func main() {",
          "\tprintln(\"in fence\")",
          "}",
          "```",
          "",
          "Done."
        ].join("\n")
        const script = writeScript(work, [
          { call: { id: "c1", name: "read", arguments: JSON.stringify({ file_path: "main.go" }) } },
          { text: answer }
        ])
        const pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home })
        yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo"))
        pane.type("look at main.go")
        pane.keys("Enter")
        const screen = yield* pane.waitFor("the rendered answer", (s) => s.includes("Done."))
        // no tab shows as \t; the tab stops are 4 columns
        expect(screen).not.toContain("\\t")
        // the read result `     5\t\t\tprintln`, indented 2: the number's tab stops at 8, then 4 + 4
        expect(screen).toMatch(/^ {7}5 {10}println\("tabbed"\)\s*$/m)
        // the fenced block, indented 2: one tab is 4 columns
        expect(screen).toMatch(/^ {6}println\("in fence"\)\s*$/m)
        // Markdown: the table is drawn, the emphasis markers and the heading marks are gone
        expect(screen).toMatch(/│ file\s+│ lines │/)
        expect(screen).toMatch(/│ main\.go\s+│ 7\s+│/)
        expect(screen).toMatch(/^```go\s*$/m)
        expect(screen).toContain("The file is fine, see main.go:")
        expect(screen).not.toContain("**fine**")
        expect(screen).not.toContain("## Result")
        expect(screen).toMatch(/^Result\s*$/m)
        // NO_COLOR: no colour sequence on the screen
        expect(pane.rawScreen()).not.toMatch(/\x1b\[(?:[0-9;]*;)?(?:3[0-8]|9[0-7])[;m]/)
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT
  )

  it.live(
    "[issue 34] Tab completes /commands and @paths; !ls runs and is logged; Esc interrupts; Ctrl-C twice exits; history and Ctrl-R in the next chat",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        mkdirSync(join(work, "src"))
        writeFileSync(join(work, "src", "main.go"), "package main\n")
        writeFileSync(join(work, "alpha.txt"), "a\n")
        const script = writeScript(work, [
          [{ text: "partial answer" }, { hang: true }],
          { text: "noted the milk" },
          { text: "second chat answer" }
        ])
        let pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home })
        yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo"))
        // slash-command completion
        pane.type("/cos")
        yield* pane.waitFor("the command list", (s) => /cost\s+tokens and cost of this session/.test(s))
        pane.keys("Tab")
        yield* pane.waitFor("the completed command", (s) => inputLines(s).some((l) => l.trim() === "/cost"))
        pane.keys("Enter")
        yield* pane.waitFor("the /cost answer", (s) => s.includes("no model requests yet in this session"))
        // @path completion, one directory level at a time
        pane.type("see @sr")
        yield* pane.waitFor("the path list", (s) => /^\s*→?\s*src\/\s*$/m.test(s))
        pane.keys("Tab")
        yield* pane.waitFor("the completed directory", (s) => inputLines(s).some((l) => l.trim() === "see @src/"))
        pane.type("ma")
        yield* pane.waitFor("the file in the list", (s) => /→ main\.go/.test(s))
        pane.keys("Tab")
        yield* pane.waitFor("the completed file", (s) => inputLines(s).some((l) => l.trim() === "see @src/main.go"))
        // Ctrl-C on a draft clears it (and does not exit)
        pane.keys("C-c")
        yield* pane.waitFor("the cleared draft", (s) => inputLines(s).every((l) => l.trim() === ""))
        // !ls: the output on the screen, and in the session for the model
        pane.type("!ls")
        pane.keys("Enter")
        yield* pane.waitFor("the ls output", (s) => s.includes("$ ls") && /^alpha\.txt\s*$/m.test(s) && s.includes("exit 0"))
        yield* Effect.gen(function*() {
          for (let i = 0; i < 100; i++) {
            const shell = allEvents(home).find((e) => e.type === "context/message")
            if (shell !== undefined) {
              expect(shell.data["meta"]).toEqual({ shell: { command: "ls", exitCode: 0 } })
              expect(JSON.stringify(shell.data["content"])).toContain("alpha.txt")
              return
            }
            yield* Effect.sleep(100)
          }
          throw new Error("no context/message logged for !ls")
        })
        // Esc interrupts the running turn
        pane.type("start something long")
        pane.keys("Enter")
        yield* pane.waitFor("the partial answer", (s) => s.includes("partial answer"))
        pane.keys("Escape")
        yield* pane.waitFor("the cancellation", (s) => s.includes("cancelled: cancelled by the user"))
        pane.type("remember the milk")
        pane.keys("Enter")
        yield* pane.waitFor("the answer", (s) => s.includes("noted the milk"))
        // Ctrl-C once on an empty input only warns; twice exits
        pane.keys("C-c")
        yield* pane.waitFor("the warning", (s) => s.includes("press Ctrl-C again to exit"))
        expect(pane.dead()).toBe(false)
        pane.keys("C-c")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
        // the next chat has the history: Up recalls, Ctrl-R searches
        pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home })
        yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo"))
        pane.keys("Up")
        yield* pane.waitFor("the last input", (s) => inputLines(s).some((l) => l.trim() === "remember the milk"))
        pane.keys("C-c")
        yield* pane.waitFor("the cleared draft", (s) => inputLines(s).every((l) => l.trim() === ""))
        pane.keys("C-r")
        yield* pane.waitFor("the history search", (s) => s.includes("input history"))
        pane.type("!l")
        yield* pane.waitFor("the match", (s) => /→ !ls/.test(s) && !/→ remember the milk/.test(s))
        pane.keys("Enter")
        yield* pane.waitFor("the picked entry", (s) => inputLines(s).some((l) => l.trim() === "!ls") && !s.includes("input history"))
        expect(readFileSync(join(home, "history.jsonl"), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)))
          .toEqual(["/cost", "!ls", "start something long", "remember the milk"])
        pane.keys("C-c")
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT * 2
  )

  it.live(
    "[issue 34] /status, /cost, /mcp; /resume by a unique id prefix and from the picker; the /model picker; /clear",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        const script = writeScript(work, [{ text: "first answer" }, { text: "second answer" }])
        const pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home })
        let screen = yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo") && sessionIdOf(s) !== "")
        const first = sessionIdOf(screen)
        pane.type("the first session")
        pane.keys("Enter")
        yield* pane.waitFor("the answer", (s) => s.includes("first answer"))
        yield* submit(pane, "/status")
        yield* pane.waitFor("the status", (s) => s.includes(`session:   ${first}`) && s.includes("model:     scripted/demo"))
        yield* submit(pane, "/mcp")
        yield* pane.waitFor("the MCP servers", (s) => s.includes("no MCP servers configured"))
        yield* submit(pane, "/clear")
        screen = yield* pane.waitFor("a new session", (s) => sessionIdOf(s) !== "" && sessionIdOf(s) !== first && !s.includes("first answer"))
        const second = sessionIdOf(screen)
        // a session is stored with its first prompt
        yield* submit(pane, "the second session")
        yield* pane.waitFor("the second answer", (s) => s.includes("second answer"))
        // a unique prefix of the uuid names the first session
        const prefix = first.replace("harness-session-", "").slice(0, 6)
        yield* submit(pane, `/resume ${prefix}`)
        yield* pane.waitFor("the first session resumed", (s) => sessionIdOf(s) === first && s.includes("› the first session"))
        // the picker lists the other session; Enter resumes it
        yield* submit(pane, "/resume")
        yield* pane.waitFor("the session picker", (s) => s.includes("resume a session") && s.includes(`→ ${second.replace("harness-session-", "").slice(0, 8)}`))
        pane.keys("Enter")
        yield* pane.waitFor("the second session resumed", (s) => sessionIdOf(s) === second && !s.includes("resume a session"))
        // the model picker: the catalog's models of the provider; Esc closes it
        yield* submit(pane, "/model")
        yield* pane.waitFor("the model picker", (s) => s.includes("model for scripted") && /→ demo/.test(s))
        pane.keys("Escape")
        yield* pane.waitFor("the closed picker", (s) => !s.includes("model for scripted"))
        yield* submit(pane, "/cost")
        yield* pane.waitFor("the cost", (s) => /^tokens: in \d+ · out \d+/m.test(s) && s.includes("cost: unknown (no pricing for this model"))
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT
  )

  it.live(
    "[issue 34] the approval panel names the rule a and p save; a saves Edit(./src/**) and the next edit under src/ is not asked; answers are logged",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        mkdirSync(join(work, "src"))
        writeFileSync(join(work, "src", "a.txt"), "one\n")
        writeFileSync(join(work, "src", "b.txt"), "two\n")
        const edit = (id: string, file: string, from: string, to: string) => ({
          call: { id, name: "edit", arguments: JSON.stringify({ file_path: file, old_string: from, new_string: to }) }
        })
        const script = writeScript(work, [edit("c1", "src/a.txt", "one", "ONE"), edit("c2", "src/b.txt", "two", "TWO"), {
          text: "edited both"
        }])
        const pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home })
        yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo"))
        pane.type("edit them")
        pane.keys("Enter")
        const screen = yield* pane.waitFor(
          "the armed approval panel",
          (s) => s.includes("Allow edit") && !s.includes("typing goes to your draft")
        )
        expect(screen).toContain("a always allow Edit(./src/**) for this chat (edits of every file under ./src/)")
        expect(screen).toContain("p always allow Edit(./src/**) in this project (saved to .effect-harness/settings.local.json)")
        pane.type("a")
        yield* pane.waitFor("the answer", (s) => s.includes("edited both"))
        expect(pane.screen().match(/Allow edit/g)?.length ?? 0).toBe(0)
        expect(readFileSync(join(work, "src", "a.txt"), "utf8")).toBe("ONE\n")
        expect(readFileSync(join(work, "src", "b.txt"), "utf8")).toBe("TWO\n")
        const answers = allEvents(home).filter((e) => e.type === "approval/answer").map((e) => e.data)
        expect(answers).toHaveLength(1)
        expect(answers[0]).toMatchObject({ callId: "c1", tool: "edit", answer: "always-session", by: "user", rule: "Edit(./src/**)" })
        expect(answers[0]!["waitMs"]).toBeGreaterThan(0)
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
        expect(userMessages(home).map((m) => m.text)).toEqual(["edit them"])
      }),
    TIMEOUT
  )

  it.live(
    "[issue 34] long sessions: a long streamed answer makes no full-screen clear; a 10,000-event session reopens under 300 MiB RSS; idle CPU < 1 % over 10 s",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        // ~10,000 events: one assistant/chunk per character of the answer
        const long = Array.from({ length: 200 }, (_, i) => `Paragraph ${i + 1} of a long answer, streamed in pieces.`)
        const stream = long.flatMap((p) => [{ text: `${p}\n\n` }, { delayMs: 2 }])
        const script = writeScript(work, [[...stream, { text: "END OF ANSWER" }, { finish: { kind: "stop" } }]])
        let pane = yield* startChat(["--provider", "scripted", "--script", script], { cwd: work, home, rows: 30 })
        const banner = yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo") && sessionIdOf(s) !== "")
        const id = sessionIdOf(banner)
        const before = pane.recording().length
        pane.type("write a lot")
        pane.keys("Enter")
        yield* pane.waitFor("the end of the answer", (s) => s.includes("END OF ANSWER") && !/working \d+\.\ds/.test(s))
        const recorded = pane.recording().slice(before)
        expect(recorded.length).toBeGreaterThan(9_000)
        expect(recorded.split("\x1b[2J").length - 1).toBe(0)
        expect(recorded.split("\x1b[3J").length - 1).toBe(0)
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
        const events = allEvents(home).length
        expect(events).toBeGreaterThan(10_000)
        // reopen it: memory bounded, then idle
        pane = yield* startChat(["--provider", "scripted", "--script", script, "--resume", id], { cwd: work, home, rows: 30 })
        yield* pane.waitFor("the reopened session", (s) => s.includes("END OF ANSWER"))
        yield* Effect.sleep(1_000)
        const pid = pane.pid()
        const rss = rssMiB(pid)
        const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
        const t0 = cpuTicks(pid)
        yield* Effect.sleep(10_000)
        const used = (cpuTicks(pid) - t0) / ticksPerSecond
        console.info(`[issue 34] ${events} events; reopened RSS ${rss.toFixed(1)} MiB; idle CPU ${(used * 10).toFixed(2)} % over 10 s`)
        expect(rss).toBeLessThan(300)
        expect(used / 10).toBeLessThan(0.01)
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT * 2
  )

  it.live(
    "[issue 34, 33] /rewind in the terminal UI: lists the turn's changes, then rewinds the files and continues in the fork",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-tui-home-")
        const work = yield* Cli.tempDir("harness-tui-ws-")
        const script = writeScript(work, [
          { call: { id: "w1", name: "write", arguments: JSON.stringify({ file_path: "notes.txt", content: "hello\n" }) } },
          { text: "wrote the notes" },
          { call: { id: "w2", name: "write", arguments: JSON.stringify({ file_path: "other.txt", content: "more\n" }) } },
          { text: "wrote the other file" }
        ])
        const pane = yield* startChat(["--provider", "scripted", "--script", script, "--yes"], { cwd: work, home })
        yield* pane.waitFor("the banner", (s) => s.includes("effect-harness · scripted/demo"))
        yield* submit(pane, "write the notes")
        yield* pane.waitFor("the first answer", (s) => s.includes("wrote the notes"))
        yield* submit(pane, "and the other file")
        yield* pane.waitFor("the second answer", (s) => s.includes("wrote the other file"))
        expect(existsSync(join(work, "other.txt"))).toBe(true)
        yield* submit(pane, "/rewind")
        yield* pane.waitFor("the list of changes", (s) => /turn 2: 1 path: other\.txt/.test(s))
        yield* submit(pane, "/rewind 1")
        const screen = yield* pane.waitFor("the rewind", (s) => /rewound the workspace to the end of turn 1.*continuing in/s.test(s))
        expect(existsSync(join(work, "other.txt"))).toBe(false)
        expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("hello\n")
        // the view switched to the fork after turn 1: its answer is there, turn 2's is not
        expect(screen).toContain("wrote the notes")
        expect(screen).not.toContain("wrote the other file")
        pane.keys("C-d")
        yield* pane.waitFor("the exit", (s) => s.includes("resume with: harness chat --resume"))
      }),
    TIMEOUT
  )
})
