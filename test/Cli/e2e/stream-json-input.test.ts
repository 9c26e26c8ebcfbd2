/**
 * End-to-end (issue 35): `harness run --input-format stream-json` reads Claude Code's stream-json user
 * messages from stdin: two messages are two turns, a line sent while a turn runs steers it, and the
 * log holds all three verbatim; a line that is not a user message is reported by number after the
 * running turn is saved (exit 2).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 90_000

const user = (content: unknown) => `${JSON.stringify({ type: "user", message: { role: "user", content }, session_id: "default", parent_tool_use_id: null })}\n`

const count = (text: string, needle: string) => text.split(needle).length - 1

const texts = (events: ReadonlyArray<{ readonly type: string; readonly data: unknown }>, type: string) =>
  events.flatMap((e) =>
    e.type === type ? [(e.data as { content: ReadonlyArray<{ type: string; text?: string }> }).content.map((b) => b.text ?? "")] : []
  )

describe("harness run --input-format stream-json", () => {
  it.live("[issue 35] two messages and a steering line: two turns, the log shows all three verbatim", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-sji-home-")
      const work = yield* Cli.tempDir("harness-sji-ws-")
      const script = join(home, "script.json")
      writeFileSync(script, JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [
          { text: "first answer" },
          [{ text: "looking" }, { delayMs: 1500 }, { toolCall: { id: "c1", name: "ls", arguments: "{}" } }, { finish: { kind: "tool-calls" } }],
          { text: "brief final answer" }
        ]
      }))
      const child = yield* Cli.spawnCli(
        ["run", "--input-format", "stream-json", "--output-format", "stream-json", "--script", script],
        { cwd: work, home, stdinOpen: true }
      )
      yield* child.write(user([{ type: "text", text: "first message" }, { type: "text", text: "with a second part" }]))
      yield* child.waitFor("stdout", (t) => count(t, `"type":"turn/end"`) === 1)
      yield* child.write(user("second message: list the files"))
      yield* child.waitFor("stdout", (t) => count(t, `"type":"turn/start"`) === 2)
      // the second turn is streaming (its first step waits 1.5 s before the tool call): steer it
      yield* child.write(user("steer: be brief"))
      yield* child.waitFor("stdout", (t) => count(t, `"type":"turn/end"`) === 2)
      yield* child.endInput
      const result = yield* child.result
      expect(result.code, result.stderr).toBe(0)
      const lines = Cli.linesOf(result.stdout).map((l) => JSON.parse(l) as { type: string })
      expect(lines[0]!.type).toBe("init")
      expect(lines.at(-1)).toMatchObject({ type: "result" })

      const logs = Cli.sessionLogs(home)
      expect(logs).toHaveLength(1)
      const log = Cli.readLog(logs[0]!)
      expect(Cli.enclosureProblems(log.events)).toEqual([])
      expect(texts(log.events, "user/message")).toEqual([["first message", "with a second part"], ["second message: list the files"]])
      expect(texts(log.events, "steering/message")).toEqual([["steer: be brief"]])
      const steering = log.events.find((e) => e.type === "steering/message")!
      expect(steering.data).toMatchObject({ turn: 2 })
      expect(log.events.filter((e) => e.type === "turn/end").map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(["completed", "completed"])
    }), TIMEOUT)

  it.live("[issue 35] a line that is not a user message: the running turn is saved, the line is named, exit 2; no message at all is exit 2", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-sji-home-")
      const work = yield* Cli.tempDir("harness-sji-ws-")
      const script = join(home, "script.json")
      writeFileSync(script, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "answered" }] }))
      const result = yield* Cli.runCli(["run", "--input-format", "stream-json", "--script", script], {
        cwd: work,
        home,
        stdin: `${user("hello")}\n{"type":"control_request","request":{"subtype":"interrupt"}}\n${user("never read")}`
      })
      expect(result.code).toBe(2)
      expect(result.stdout.trim()).toBe("answered")
      expect(result.stderr).toContain(`stdin line 3 is not a stream-json user message: its type is "control_request"`)
      const log = Cli.readLog(Cli.sessionLogs(home)[0]!)
      expect(texts(log.events, "user/message")).toEqual([["hello"]])
      expect(Cli.enclosureProblems(log.events)).toEqual([])
      const none = yield* Cli.runCli(["run", "--input-format", "stream-json", "--script", script], { cwd: work, home, stdin: "\n" })
      expect(none.code).toBe(2)
      expect(none.stderr).toContain("stdin ended before any stream-json user message")
      const both = yield* Cli.runCli(["run", "--input-format", "stream-json", "a prompt"], { cwd: work, home })
      expect(both.code).toBe(2)
      expect(both.stderr).toContain("--input-format stream-json reads the prompts from stdin")
    }), TIMEOUT)
})
