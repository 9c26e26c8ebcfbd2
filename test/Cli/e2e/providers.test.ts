/**
 * End-to-end: the bundled CLI as a separate process against the fake provider server, for each
 * wire format (DeepSeek, a generic OpenAI-compatible server, Anthropic Messages): a tool round trip
 * editing a real file, attribution, key hygiene, and the provider/config error paths.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../../support/Cli.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 90_000

interface Case {
  readonly wire: Wire.Wire
  readonly keyVar: string
  readonly path: string
  readonly flags: ReadonlyArray<string>
}

const cases: ReadonlyArray<Case> = [
  { wire: "deepseek", keyVar: "DEEPSEEK_API_KEY", path: "/chat/completions", flags: ["--provider", "deepseek"] },
  {
    wire: "openai-compatible",
    keyVar: "OPENAI_COMPATIBLE_API_KEY",
    path: "/v1/chat/completions",
    flags: ["--provider", "openai-compatible", "--model", "m"]
  },
  { wire: "anthropic", keyVar: "ANTHROPIC_API_KEY", path: "/v1/messages", flags: ["--provider", "anthropic"] }
]

interface RequestBody {
  readonly messages: ReadonlyArray<{
    readonly role: string
    readonly content: unknown
    readonly tool_call_id?: string
  }>
}

/** The tool result for `callId` carried by a request body, as text (`undefined` when absent). */
const toolResultIn = (wire: Wire.Wire, body: unknown, callId: string): string | undefined => {
  const { messages } = body as RequestBody
  if (wire === "anthropic") {
    for (const m of messages) {
      if (m.role !== "user" || !Array.isArray(m.content)) continue
      for (const block of m.content as ReadonlyArray<Record<string, unknown>>) {
        if (block["type"] === "tool_result" && block["tool_use_id"] === callId) return JSON.stringify(block["content"])
      }
    }
    return undefined
  }
  const m = messages.find((m) => m.role === "tool" && m.tool_call_id === callId)
  return m === undefined ? undefined : typeof m.content === "string" ? m.content : JSON.stringify(m.content)
}

describe("harness CLI end to end against a provider server", () => {
  for (const c of cases) {
    it.live(
      `[issue 7, DEC-5, DEC-8, C-6] ${c.wire}: a streamed edit tool call changes a real file, the result goes back, usage with cache reads, no key anywhere`,
      () =>
        Effect.gen(function*() {
          const home = yield* Cli.tempDir("harness-e2e-home-")
          const work = yield* Cli.tempDir("harness-e2e-ws-")
          writeFileSync(join(work, "notes.txt"), "alpha\nhello world\nomega\n")
          const key = `sk-e2e-${c.wire}-5ecret-${Math.random().toString(36).slice(2)}`
          const callId = c.wire === "anthropic" ? "toolu_e2e_01" : "call_e2e_01"
          const args = JSON.stringify({ file_path: "notes.txt", old_string: "hello world", new_string: "goodbye world" })
          const fake = yield* FakeProvider.make({
            replies: [
              FakeProvider.sse(
                Wire.toolCall(c.wire, { id: callId, name: "edit", args, text: "I will edit notes.txt." }, {
                  input: 19,
                  output: 30,
                  cacheRead: 320
                }),
                { maxPiece: 48 }
              ),
              FakeProvider.sse(
                Wire.text(c.wire, "Done: notes.txt now says goodbye.", { input: 7, output: 12, cacheRead: 480 }),
                { maxPiece: 48 }
              )
            ]
          })
          const result = yield* Cli.runCli(
            ["run", "--yes", "--cwd", work, ...c.flags, "--base-url", c.wire === "openai-compatible" ? `${fake.url}/v1` : fake.url, "Change hello to goodbye in notes.txt"],
            { cwd: work, home, env: { [c.keyVar]: key } }
          )
          const requests = yield* fake.requests
          expect(result.timedOut).toBe(false)
          expect(result.stderr).not.toMatch(Cli.stackFrame)
          expect(result.code, result.stderr).toBe(0)

          // the edit happened on disk
          expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("alpha\ngoodbye world\nomega\n")

          // two requests, both attributed; the second carries the tool result
          expect(requests).toHaveLength(2)
          for (const r of requests) {
            expect(r.method).toBe("POST")
            expect(r.path).toBe(c.path)
            expect(r.headers["user-agent"]).toBe(Cli.expectedUserAgent)
          }
          expect(toolResultIn(c.wire, requests[0]?.body, callId)).toBeUndefined()
          const toolResult = toolResultIn(c.wire, requests[1]?.body, callId)
          expect(toolResult).toBeDefined()
          expect(toolResult).toContain("notes.txt")

          // stdout: the streamed text only; stderr: tool activity and the usage line incl. cache reads
          expect(result.stdout).toContain("I will edit notes.txt.")
          expect(result.stdout).toContain("Done: notes.txt now says goodbye.")
          expect(result.stdout).not.toContain("→")
          expect(result.stderr).toContain("→ edit(")
          expect(result.stderr).toMatch(/✓ edit/)
          // Anthropic reports cache writes too (0 here); the OpenAI-compatible wires do not
          expect(Cli.linesOf(result.stderr).filter((l) => l.startsWith("usage:"))).toEqual([
            c.wire === "anthropic"
              ? "usage: in 26 (+800 cache read, +0 cache write) · out 42"
              : "usage: in 26 (+800 cache read) · out 42"
          ])
          expect(result.stderr).not.toContain("offline demo")

          // the API key never leaves the request headers
          expect(result.stdout).not.toContain(key)
          expect(result.stderr).not.toContain(key)
          const files = [...Cli.filesUnder(home), ...Cli.filesUnder(work)]
          expect(Cli.sessionLogs(home)).toHaveLength(1)
          for (const file of files) expect(readFileSync(file, "latin1"), file).not.toContain(key)
          const authorization = c.wire === "anthropic" ? requests[0]?.headers["x-api-key"] : requests[0]?.headers["authorization"]
          expect(authorization).toContain(key)

          // the log is valid and balanced
          const [logFile] = Cli.sessionLogs(home)
          const log = Cli.readLog(logFile!)
          expect(Cli.enclosureProblems(log.events)).toEqual([])
          expect(log.events.filter((e) => e.type === "tool/result")).toHaveLength(1)
          expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "completed" } } })
        }),
      TIMEOUT
    )
  }

  it.live(
    "[issue 7, P-9, E-2] a provider 401 → exactly one error line naming AUTH, exit 3, no stack trace, key not echoed",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const key = `sk-e2e-401-${Math.random().toString(36).slice(2)}`
        const fake = yield* FakeProvider.make({
          // the repository's own reply (this test must not need ../shared): DeepSeek's error shape
          replies: [FakeProvider.status(401, {
            body: JSON.stringify({
              error: { message: "the api key is invalid", type: "authentication_error", param: null, code: "invalid_request_error" }
            })
          })]
        })
        const result = yield* Cli.runCli(
          ["run", "--provider", "deepseek", "--base-url", fake.url, "hello"],
          { cwd: work, home, env: { DEEPSEEK_API_KEY: key } }
        )
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(3)
        const lines = Cli.linesOf(result.stderr)
        expect(lines.filter((l) => /error/i.test(l)), result.stderr).toHaveLength(1)
        expect(lines.find((l) => /error/i.test(l))).toContain("AUTH")
        expect(result.stderr).not.toMatch(Cli.stackFrame)
        expect(result.stdout).toBe("")
        expect(result.stderr).not.toContain(key)
        expect(yield* fake.requests).toHaveLength(1)
        // the failed turn is still logged and closed
        const [logFile] = Cli.sessionLogs(home)
        const log = Cli.readLog(logFile!)
        expect(Cli.enclosureProblems(log.events)).toEqual([])
        expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "error", code: "AUTH" } } })
      }),
    TIMEOUT
  )

  it.live(
    "[issue 7] an explicit provider without its key → one line naming the variable, exit 2, nothing sent",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const fake = yield* FakeProvider.make()
        const result = yield* Cli.runCli(
          ["run", "--provider", "anthropic", "--base-url", fake.url, "hello"],
          // another provider's key must not stand in for the missing one
          { cwd: work, home, env: { DEEPSEEK_API_KEY: "sk-other" } }
        )
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(2)
        expect(Cli.linesOf(result.stderr), result.stderr).toHaveLength(1)
        expect(result.stderr).toContain("ANTHROPIC_API_KEY")
        expect(result.stderr).not.toMatch(Cli.stackFrame)
        expect(result.stdout).toBe("")
        expect(yield* fake.requests).toHaveLength(0)
        expect(Cli.sessionLogs(home)).toHaveLength(0)
      }),
    TIMEOUT
  )
})
