/**
 * Attack tests (issue 26, "bounded everything"): real processes, real files, real signals.
 *
 * - A model that streams forever: the bundled CLI cuts the step at `--max-output-bytes` (default
 *   8 MiB), the HTTP request is dropped, the log ends with the `OUTPUT_LIMIT` finish and a failed
 *   turn, and the process exits 5.
 * - A session log over V8's 512 MiB string limit (about 600 MB of valid events, written in the
 *   test): `sessions list` lists it and the other session, `sessions show` prints it, `run --resume`
 *   continues it. `HARNESS_STRESS=1` runs it at 600 MB; without it the log is 12 MB (the
 *   same streaming path, read in 1 MiB chunks) so the suite stays fast.
 * - `read` of a 100 MB one-line file called by a scripted model: the CLI answers SIGINT within a
 *   second (exit 130) while the read runs or right after it.
 * - A stdio MCP server (a real process, raw JSON-RPC written here) answers one call with 11 MiB:
 *   that call's result is an error naming the transport's limit, the next call on the same server
 *   succeeds, and the CLI finishes normally (no uncaught exception).
 * - A SQLite store whose database file is read-only (0444; as root the CLI runs as `nobody`):
 *   `sessions list` lists it, a writer fails with one clear line (exit 4).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { closeSync, createWriteStream, mkdirSync, openSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { spawnSync } from "node:child_process"
import { chmodSync, chownSync } from "node:fs"
import * as Result from "effect/Result"
import * as IdEncoding from "../../src/Session/persistence/IdEncoding.js"
import * as Jsonl from "../../src/Session/persistence/Jsonl.js"
import * as Records from "../../src/Session/persistence/Records.js"
import * as Cli from "../support/Cli.js"
import { header, LogBuilder } from "../support/sessionLog.js"

const TIMEOUT = 60_000
const STRESS = process.env["HARNESS_STRESS"] === "1"

/**
 * Writes a valid JSONL log of about `mib` MiB for session `id` in `cwd`: one turn whose failed
 * step streamed `mib` text deltas of 1 MiB each (the turn ended aborted). Returns the file.
 */
const writeBigLog = (home: string, cwd: string, id: string, mib: number): Effect.Effect<string> =>
  Effect.promise(async () => {
    const dir = join(home, "sessions", Jsonl.bucketOf(cwd))
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const encoded = IdEncoding.encode(id)
    if (Result.isFailure(encoded)) throw new Error(`cannot encode ${id}`)
    const file = join(dir, `${encoded.success}.jsonl`)
    const mebibyte = "y".repeat(1024 * 1024)
    const b = new LogBuilder(Date.now() - 60_000)
    b.turnStart(0).user("the big one").requestHeader().stepStart(0, 1)
    b.push("assistant/chunk", { turn: 0, step: 1, chunk: { type: "block-start", index: 0, blockType: "text" } })
    for (let i = 0; i < mib; i++) {
      b.push("assistant/chunk", { turn: 0, step: 1, chunk: { type: "text-delta", index: 0, text: mebibyte } })
    }
    b.push("assistant/chunk", { turn: 0, step: 1, chunk: { type: "finish", reason: { kind: "aborted" } } })
    b.stepEnd(0, 1).turnEnd(0, "aborted")
    const out = createWriteStream(file, { mode: 0o600 })
    const write = (line: string) =>
      new Promise<void>((resolve) => (out.write(line) ? resolve() : out.once("drain", () => resolve())))
    await write(`${JSON.stringify(Records.headerRecord(header(id, cwd, Date.now() - 60_000)))}\n`)
    for (const event of b.events) await write(`${Records.encodeEvent(event)}\n`)
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())))
    return file
  })

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
  Effect.callback<{ readonly url: string; readonly server: Http.Server; readonly sent: () => number; readonly closed: () => boolean }>(
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
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

describe("attack: bounded everything (issue 26)", () => {
  it.live(
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

  it.live(
    `a session log of ${STRESS ? "600 MB (past V8's string limit)" : "12 MB (HARNESS_STRESS=1: 600 MB)"} stays listable, showable and resumable`,
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-attack-home-")
        const work = yield* Cli.tempDir("harness-attack-ws-")
        const script = join(work, "script.json")
        writeFileSync(script, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "SMALL-OK" }] }))
        const small = yield* Cli.runCli(["run", "--script", script, "a small one"], { cwd: work, home })
        expect(small.code, small.stderr).toBe(0)
        const file = yield* writeBigLog(home, work, "big-session", STRESS ? 600 : 12)
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(file, { force: true })))
        expect(statSync(file).size).toBeGreaterThan(STRESS ? 600_000_000 : 12_000_000)
        const opts = { cwd: work, home, timeoutMs: 120_000 }
        const list = yield* Cli.runCli(["sessions", "list", "--json"], opts)
        expect(list.code, list.stderr).toBe(0)
        const rows = Cli.linesOf(list.stdout).map((l) => JSON.parse(l) as { id: string; status: string })
        expect(rows.map((r) => r.id).sort()).toEqual(expect.arrayContaining(["big-session"]))
        expect(rows).toHaveLength(2)
        expect(rows.find((r) => r.id === "big-session")?.status).not.toBe("damaged")
        const show = yield* Cli.runCli(["sessions", "show", "big-session"], opts)
        expect(show.code, show.stderr).toBe(0)
        expect(show.stdout).toContain("the big one")
        writeFileSync(script, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "RESUMED-OK" }] }))
        const resumed = yield* Cli.runCli(["run", "--resume", "big-session", "--script", script, "go on"], opts)
        expect(resumed.code, resumed.stderr).toBe(0)
        expect(resumed.stdout).toContain("RESUMED-OK")
      }),
    STRESS ? 300_000 : TIMEOUT
  )

  it.live(
    "read of a 100 MB one-line file: the CLI answers SIGINT within a second",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-attack-home-")
        const work = yield* Cli.tempDir("harness-attack-ws-")
        const fd = openSync(join(work, "one.txt"), "w")
        const block = Buffer.alloc(1024 * 1024, "z")
        for (let i = 0; i < 100; i++) writeSync(fd, block)
        closeSync(fd)
        const script = join(work, "script.json")
        writeFileSync(
          script,
          JSON.stringify({
            provider: "scripted",
            model: "demo",
            responses: [
              [
                { toolCall: { id: "c1", name: "read", arguments: JSON.stringify({ file_path: "one.txt" }) } },
                { finish: { kind: "tool-calls" } }
              ],
              [{ hang: true }]
            ]
          })
        )
        const child = yield* Cli.spawnCli(["run", "--yes", "--script", script, "read it"], { cwd: work, home, timeoutMs: 60_000 })
        // the read has started once the CLI announces the call on stderr
        yield* child.waitFor("stderr", (t) => t.includes("→ read("))
        yield* Effect.sleep(200)
        const sent = Date.now()
        yield* child.kill("SIGINT")
        const result = yield* child.result
        const took = Date.now() - sent
        expect(result.code, result.stderr).toBe(130)
        expect(took).toBeLessThan(1000)
      }),
    TIMEOUT
  )

  it.live(
    "an MCP result over the stdio transport's 10 MiB limit is an error result of that call; the server stays usable",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-attack-home-")
        const work = yield* Cli.tempDir("harness-attack-ws-")
        const server = join(work, "big-server.mjs")
        writeFileSync(
          server,
          `import { createInterface } from "node:readline"
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  // the SDK's own order: result first, id last
  const answer = (result) => send({ result, jsonrpc: "2.0", id: m.id })
  if (m.method === "initialize") {
    answer({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "big", version: "1.0.0" } })
  } else if (m.method === "tools/list") {
    answer({ tools: [{ name: "big", inputSchema: { type: "object" } }, { name: "small", inputSchema: { type: "object" } }] })
  } else if (m.method === "tools/call") {
    const text = m.params.name === "big" ? "b".repeat(11 * 1024 * 1024) : "small-ok"
    answer({ content: [{ type: "text", text }] })
  } else {
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } })
  }
})
`
        )
        const config = join(work, "mcp.json")
        writeFileSync(config, JSON.stringify({ mcpServers: { big: { command: process.execPath, args: [server] } } }))
        const script = join(work, "script.json")
        writeFileSync(
          script,
          JSON.stringify({
            provider: "scripted",
            model: "demo",
            responses: [
              { call: { id: "c1", name: "mcp__big__big", arguments: "{}" } },
              { call: { id: "c2", name: "mcp__big__small", arguments: "{}" } },
              { text: "all done" }
            ]
          })
        )
        const result = yield* Cli.runCli(["run", "--yes", "--mcp-config", config, "--script", script, "call them"], {
          cwd: work,
          home,
          timeoutMs: 45_000
        })
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toBe("all done\n")
        expect(result.stderr).not.toMatch(Cli.stackFrame)
        const [file] = Cli.sessionLogs(home)
        const results = Cli.readLog(file!).events.flatMap((e) => (e.type === "tool/result" ? [e.data] : []))
        expect(results.map((r) => r.isError)).toEqual([true, false])
        expect(JSON.stringify(results[0]!.content)).toContain("over the stdio transport's limit")
        expect(JSON.stringify(results[1]!.content)).toContain("small-ok")
      }),
    TIMEOUT
  )

  it.live(
    "a read-only SQLite database is listable; a writer gets a clear error",
    () =>
      Effect.gen(function*() {
        const base = yield* Cli.tempDir("harness-attack-sqlite-")
        const home = join(base, "home")
        const work = join(base, "work")
        mkdirSync(home)
        mkdirSync(work)
        const script = join(work, "script.json")
        writeFileSync(script, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "hi" }] }))
        const made = yield* Cli.runCli(["run", "--store", "sqlite", "--script", script, "hello sqlite"], { cwd: work, home })
        expect(made.code, made.stderr).toBe(0)
        const bundle = yield* Cli.bundle
        // root ignores file modes: run the readers as nobody, who may write the directory, not the file
        const asRoot = process.getuid?.() === 0
        chmodSync(base, 0o755)
        chmodSync(work, 0o755)
        chmodSync(script, 0o644)
        chmodSync(join(home, "sessions.sqlite"), 0o444)
        if (asRoot) chownSync(home, 65534, 65534)
        chmodSync(home, 0o755)
        const cli = (args: ReadonlyArray<string>) =>
          spawnSync(process.execPath, [bundle, ...args], {
            cwd: work,
            // a home of its own: a workspace that is the home directory is refused (issue 26, consent)
            env: Cli.cleanEnv(home, { HOME: join(base, "user") }),
            encoding: "utf8",
            timeout: 30_000,
            ...(asRoot ? { uid: 65534, gid: 65534 } : {})
          })
        const list = cli(["sessions", "list", "--store", "sqlite"])
        expect(list.status, list.stderr).toBe(0)
        expect(list.stdout).toContain("hello sqlite")
        const write = cli(["run", "--store", "sqlite", "--script", script, "again"])
        expect(write.status).toBe(4)
        expect(Cli.linesOf(write.stderr)[0]).toContain("sessions.sqlite")
        expect(write.stderr).not.toMatch(Cli.stackFrame)
      }),
    TIMEOUT
  )
})
