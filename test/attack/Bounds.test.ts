/**
 * Attack tests (issue 26, "bounded everything"): real processes, real files, real signals.
 *
 * - A model that streams forever: the bundled CLI cuts the step at `--max-output-bytes` (default
 *   8 MiB), the HTTP request is dropped, the log ends with the `OUTPUT_LIMIT` finish and a failed
 *   turn, and the process exits 5.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { statSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Cli from "../support/Cli.js"

const TIMEOUT = 60_000

/** One OpenAI-compatible SSE frame carrying a text delta. */
const frame = (content: string): string =>
  `data: ${
    JSON.stringify({
      id: "chatcmpl-attack",
      object: "chat.completion.chunk",
      created: 1_764_664_568,
      model: "deepseek-v4-flash",
      choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]
    })
  }\n\n`

/**
 * A loopback OpenAI-compatible server whose every answer streams text deltas forever (as fast as
 * the client reads). `sent()` is the bytes written so far, `closed()` whether the client went away.
 */
const foreverServer = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly server: Http.Server; readonly sent: () => number; readonly closed: () => boolean }>(
    (resume) => {
      let sent = 0
      let closed = false
      const piece = frame("x".repeat(4096))
      const server = Http.createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.write(frame(""))
          res.on("close", () => {
            closed = true
          })
          const pump = (): void => {
            while (!closed) {
              sent += piece.length
              if (!res.write(piece)) {
                res.once("drain", pump)
                return
              }
            }
          }
          pump()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, server, sent: () => sent, closed: () => closed }))
      })
    }
  ),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

describe("attack: bounded everything (issue 26)", () => {
  it.scopedLive(
    "a model that streams forever is cut at the default 8 MiB: OUTPUT_LIMIT finish in the log, request dropped, exit 5",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-attack-home-")
        const work = yield* Cli.tempDir("harness-attack-ws-")
        const fake = yield* foreverServer
        const result = yield* Cli.runCli(["run", "--provider", "deepseek", "--base-url", fake.url, "talk"], {
          cwd: work,
          home,
          env: { DEEPSEEK_API_KEY: "sk-attack-forever" },
          timeoutMs: 40_000
        })
        expect(result.timedOut, result.stderr).toBe(false)
        expect(result.code, result.stderr).toBe(5)
        expect(Cli.linesOf(result.stderr).filter((l) => l.includes("OUTPUT_LIMIT"))).toHaveLength(1)
        // the client went away: the server stops writing
        yield* Effect.sleep(100)
        expect(fake.closed()).toBe(true)
        const [file] = Cli.sessionLogs(home)
        expect(file).toBeDefined()
        const log = Cli.readLog(file!)
        // the partial output is kept (as the step's chunks), capped at 8 MiB of text
        const text = log.events.reduce(
          (n, e) => e.type === "assistant/chunk" && e.data.chunk.type === "text-delta" ? n + e.data.chunk.text.length : n,
          0
        )
        expect(text).toBeGreaterThan(8 * 1024 * 1024 - 8192)
        expect(text).toBeLessThanOrEqual(8 * 1024 * 1024)
        expect(statSync(file!).size).toBeLessThan(16 * 1024 * 1024)
        const finishes = log.events.filter((e) => e.type === "assistant/chunk" && e.data.chunk.type === "finish")
        expect(finishes.at(-1)).toMatchObject({ data: { chunk: { reason: { kind: "error", code: "OUTPUT_LIMIT" } } } })
        expect(log.events.at(-1)).toMatchObject({ type: "turn/end", data: { reason: { kind: "error", code: "OUTPUT_LIMIT" } } })
      }),
    TIMEOUT
  )
})
