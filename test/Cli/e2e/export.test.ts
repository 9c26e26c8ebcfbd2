/**
 * End-to-end (issue 35): `harness sessions export` of a real session (a scripted run with reasoning,
 * a `write` call and its result) in the three formats, to stdout and to `--output FILE`, and of a
 * fork (its lineage names the parent; the copied steps are marked).
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv } from "ajv"
import * as Effect from "effect/Effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Atif from "../../../src/Export/Atif.js"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 90_000

const schema = JSON.parse(readFileSync(new URL("../../../docs/reference/atif/ATIF-v1.6.schema.json", import.meta.url), "utf8")) as object
const ajv = new Ajv({ strict: false, allErrors: true })
ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)))
const validate = ajv.compile(schema)

describe("harness sessions export", () => {
  it.live("[issue 35] html, atif and jsonl of a real session and of its fork", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-export-home-")
      const work = yield* Cli.tempDir("harness-export-ws-")
      const script = join(home, "script.json")
      writeFileSync(script, JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [
          [{ reasoning: "a file is needed" }, { text: "Writing <notes>." }, { toolCall: { id: "w1", name: "write", arguments: JSON.stringify({ file_path: "notes.md", content: "# notes\n<b>bold</b>\n" }) } }, { usage: { inputTokens: 40, outputTokens: 12 } }, { finish: { kind: "tool-calls" } }],
          { text: "done" }
        ]
      }))
      const opts = { cwd: work, home }
      const ran = yield* Cli.runCli(["run", "--yes", "--script", script, "write the notes"], opts)
      expect(ran.code, ran.stderr).toBe(0)
      const id = /resume with: harness run --resume (\S+)/.exec(ran.stderr)![1]!

      const html = yield* Cli.runCli(["sessions", "export", id], opts)
      expect(html.code, html.stderr).toBe(0)
      expect(html.stdout).toMatch(/^<!DOCTYPE html>/)
      expect(html.stdout).toContain("Writing &lt;notes&gt;.")
      expect(html.stdout).toContain(`<span class="add">+ &lt;b&gt;bold&lt;/b&gt;</span>`)
      expect(html.stdout).toContain("<summary>thinking</summary>")

      const atif = yield* Cli.runCli(["sessions", "export", id.slice(0, 24), "--format", "atif"], opts)
      expect(atif.code, atif.stderr).toBe(0)
      const trajectory = JSON.parse(atif.stdout) as { steps: ReadonlyArray<Record<string, unknown>>; session_id: string }
      expect(validate(trajectory), JSON.stringify(validate.errors)).toBe(true)
      expect(Atif.check(trajectory)).toEqual([])
      expect(trajectory.session_id).toBe(id)
      expect(trajectory.steps.filter((s) => s["source"] === "agent")).toHaveLength(2)
      // each step's seqs point at events of the stored log
      const log = Cli.readLog(Cli.sessionLogs(home)[0]!)
      for (const step of trajectory.steps) {
        for (const seq of (step["extra"] as { seqs: ReadonlyArray<number> }).seqs) expect(log.events[seq]?.seq).toBe(seq)
      }

      const out = join(work, "session.jsonl")
      const jsonl = yield* Cli.runCli(["sessions", "export", id, "--format", "jsonl", "-o", out], opts)
      expect(jsonl.code, jsonl.stderr).toBe(0)
      expect(jsonl.stdout).toBe("")
      const lines = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string })
      expect(lines.map((l) => l.type)).toEqual(expect.arrayContaining(["session", "user", "assistant", "tool_result", "turn_end"]))

      // a fork: the lineage names the parent, the copied steps are context copied from it
      const fork = yield* Cli.runCli(["sessions", "fork", id], opts)
      expect(fork.code, fork.stderr).toBe(0)
      const child = fork.stdout.trim().split(/\s+/).find((w) => w.startsWith("harness-session-") && w !== id)!
      const childHtml = yield* Cli.runCli(["sessions", "export", child], opts)
      expect(childHtml.stdout).toContain(`fork lineage: <code>${child}</code> ← <code>${id}</code>`)
      const childAtif = JSON.parse((yield* Cli.runCli(["sessions", "export", child, "--format", "atif"], opts)).stdout) as {
        steps: ReadonlyArray<{ is_copied_context?: boolean }>
      }
      expect(childAtif.steps.every((s) => s.is_copied_context === true)).toBe(true)

      const missing = yield* Cli.runCli(["sessions", "export", "nope"], opts)
      expect(missing.code).toBe(4)
      expect(Cli.linesOf(missing.stderr)).toHaveLength(1)
    }), TIMEOUT)
})
