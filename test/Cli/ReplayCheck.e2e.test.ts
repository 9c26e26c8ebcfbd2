/**
 * End-to-end (spawned bundle): `harness sessions replay` and `harness sessions verify` on the
 * session the issue 21 report describes (a max-tokens step with a tool call), and on a copy of it
 * whose chunk text was changed on disk.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"

const TIMEOUT = 90_000

describe("harness sessions replay / verify", () => {
  it.live(
    "[issue 21, L-12.11] a max-tokens step with a tool call replays clean (exit 0); a changed chunk → rule and seqs, exit 5",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-replay-home-")
        const work = yield* Cli.tempDir("harness-replay-ws-")
        const script = join(work, "s.json")
        writeFileSync(
          script,
          JSON.stringify({
            responses: [[
              { text: "Let me look." },
              { toolCall: { id: "c1", name: "ls", arguments: "{}" } },
              { finish: { kind: "max-tokens" } }
            ]]
          })
        )
        const opts = { cwd: work, home }
        const run = yield* Cli.runCli(["run", "--provider", "scripted", "--script", script, "--yes", "--json", "hi"], opts)
        expect(run.code, run.stderr).toBe(0)
        const [file] = Cli.sessionLogs(home)
        const log = Cli.readLog(file!)
        const id = log.header.id

        const replay = yield* Cli.runCli(["sessions", "replay", id], opts)
        expect(replay.code, replay.stdout + replay.stderr).toBe(0)
        expect(replay.stdout).toBe("1 assistant message re-derived, 0 mismatches\n")
        const verify = yield* Cli.runCli(["sessions", "verify", "--json", id], opts)
        expect(verify.code, verify.stdout + verify.stderr).toBe(0)
        expect(JSON.parse(verify.stdout)).toMatchObject({
          session: id,
          ok: true,
          events: log.events.length,
          turns: 1,
          messages: 1,
          match: 1,
          mismatch: 0,
          findings: []
        })

        // change the text of the text block's block-end chunk on disk
        const lines = readFileSync(file!, "utf8").split("\n")
        const at = lines.findIndex((l) => l.includes("\"block-end\"") && l.includes("Let me look."))
        lines[at] = lines[at]!.replace("Let me look.", "Let me lie.")
        writeFileSync(file!, lines.join("\n"))
        const changedSeq = at - 1
        const message = log.events.find((e) => e.type === "assistant/message")!
        const textChunks = log.events.filter((e) =>
          e.type === "assistant/chunk" && "index" in e.data.chunk && e.data.chunk.index === 0
        ).map((e) => e.seq)
        expect(textChunks).toContain(changedSeq)

        const tampered = yield* Cli.runCli(["sessions", "replay", id], opts)
        expect(tampered.code, tampered.stderr).toBe(5)
        const [line, summary] = Cli.linesOf(tampered.stdout)
        expect(line).toContain(`turn 1 step 1: breaks "the recorded content is what the step's chunks assemble to, verbatim"`)
        expect(line).toContain("(content-is-assembled)")
        expect(line).not.toMatch(/\b[A-Z]-\d+\b/)
        expect(line).toContain(`events ${textChunks[0]}-${textChunks.at(-1)}, ${message.seq}:`)
        expect(line).toContain("Let me lie.")
        expect(summary).toBe("1 assistant message re-derived, 1 mismatch")
        expect(tampered.stderr).toBe("")

        const json = yield* Cli.runCli(["sessions", "replay", "--json", id], opts)
        expect(json.code).toBe(5)
        expect(Cli.linesOf(json.stdout)).toHaveLength(1)
        expect(JSON.parse(json.stdout)).toMatchObject({
          ok: false,
          mismatch: 1,
          verdicts: [{ seq: message.seq, turn: 1, step: 1, status: "mismatch" }],
          findings: [{ rule: "content-is-assembled", spec: "L-22", seqs: [...textChunks, message.seq], turn: 1, step: 1 }]
        })
      }),
    TIMEOUT
  )
})
