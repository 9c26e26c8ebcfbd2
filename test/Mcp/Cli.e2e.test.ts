/**
 * End to end through the spawned bundled CLI: a `.mcp.json` in a temporary workspace with the
 * reference servers (server-everything, server-filesystem), a scripted model calling
 * `mcp__everything__echo` and a filesystem tool; project approval when not interactive; a server
 * that never answers initialize; `harness mcp list` / `mcp tools`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"
import { everything, filesystem, fixture } from "./support.js"

const TIMEOUT = 90_000

const workspace = Effect.gen(function*() {
  const home = yield* Cli.tempDir("harness-mcp-home-")
  const work = realpathSync(yield* Cli.tempDir("harness-mcp-ws-"))
  writeFileSync(join(work, "note.txt"), "a note in the workspace\n")
  writeFileSync(join(work, ".mcp.json"), JSON.stringify({
    mcpServers: {
      everything: { command: process.execPath, args: [everything, "stdio"] },
      filesystem: { command: process.execPath, args: [filesystem, "${WORKSPACE}"] }
    }
  }))
  return { home, work, env: { WORKSPACE: work } }
})

const script = (file: string, responses: ReadonlyArray<unknown>) =>
  writeFileSync(file, JSON.stringify({ provider: "scripted", model: "demo", responses }))

describe("harness CLI end to end: MCP servers", () => {
  it.live("[issue 14] run with .mcp.json: the scripted model calls mcp__everything__echo and a filesystem tool", () =>
    Effect.gen(function*() {
      const { env, home, work } = yield* workspace
      const file = join(work, "script.json")
      script(file, [
        { call: { id: "c1", name: "mcp__everything__echo", arguments: JSON.stringify({ message: "hello mcp" }) } },
        {
          call: {
            id: "c2",
            name: "mcp__filesystem__read_text_file",
            arguments: JSON.stringify({ path: join(work, "note.txt") })
          }
        },
        { call: { id: "c3", name: "mcp__everything__get-env", arguments: "{}" } },
        { text: "all done" }
      ])
      const result = yield* Cli.runCli(
        ["run", "--provider", "scripted", "--script", file, "--yes", "--trust-workspace", "use the tools"],
        { cwd: work, home, env: { ...env, PROBE_SECRET_KEY: "must-not-leak" }, timeoutMs: 60_000 }
      )
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe("all done\n")
      expect(result.stderr).not.toMatch(Cli.stackFrame)
      const logs = Cli.sessionLogs(home)
      expect(logs).toHaveLength(1)
      const events = Cli.readLog(logs[0]!).events
      const results = events.flatMap((e) => (e.type === "tool/result" ? [e.data] : []))
      // a stdio server does not inherit the harness's whole environment
      const envResult = results.find((r) => r.callId === "c3")
      expect(envResult?.isError).toBe(false)
      expect(JSON.stringify(envResult?.content)).toContain("PATH")
      expect(JSON.stringify(envResult?.content)).not.toContain("must-not-leak")
      expect(results.slice(0, 2).map((r) => [r.callId, r.isError, JSON.stringify(r.content)])).toEqual([
        ["c1", false, JSON.stringify([{ type: "text", text: "Echo: hello mcp" }])],
        ["c2", false, JSON.stringify([{ type: "text", text: "a note in the workspace\n" }])]
      ])
      const offered = events.find((e) => e.type === "mcp/tools")
      expect(offered?.type === "mcp/tools" && offered.data.servers.map((s) => [s.name, s.status])).toEqual([
        ["everything", "connected"],
        ["filesystem", "connected"]
      ])
      const header = events.find((e) => e.type === "request/header")
      const tools = header?.type === "request/header" ? header.data.header.tools?.map((t) => t.name) ?? [] : []
      expect(tools).toEqual(expect.arrayContaining(["mcp__everything__echo", "mcp__filesystem__read_text_file", "read"]))
    }), TIMEOUT)

  it.live("[issue 14] not interactive, no --trust-workspace: project servers are skipped with one line; a server that never answers initialize times out; the agent still answers", () =>
    Effect.gen(function*() {
      const { env, home, work } = yield* workspace
      const file = join(work, "script.json")
      script(file, [{ text: "hi without tools" }])
      const explicit = join(work, "silent.json")
      writeFileSync(explicit, JSON.stringify({
        mcpServers: { silent: { command: process.execPath, args: [fixture("silent-server.mjs")] } }
      }))
      const result = yield* Cli.runCli(
        ["run", "--provider", "scripted", "--script", file, "--mcp-config", explicit, "hello"],
        { cwd: work, home, env: { ...env, MCP_TIMEOUT: "1000" }, timeoutMs: 60_000 }
      )
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe("hi without tools\n")
      const lines = Cli.linesOf(result.stderr)
      // project servers wait for the workspace's configuration to be approved (issue 26)
      expect(lines).toContain(
        "effect-harness: this workspace's configuration is not approved, so it was skipped (2 MCP servers); run in a terminal to review it, or pass --trust-workspace"
      )
      expect(lines).toContain(`MCP server "silent" is unavailable: MCP server "silent" did not answer initialize within 1000 ms`)
    }), TIMEOUT)

  it.live("[issue 14] harness mcp list and mcp tools", () =>
    Effect.gen(function*() {
      const { env, home, work } = yield* workspace
      const before = yield* Cli.runCli(["mcp", "list"], { cwd: work, home, env })
      expect(before.code, before.stderr).toBe(0)
      expect(Cli.linesOf(before.stdout)).toEqual([
        "everything  stdio  skipped  needs approval",
        "filesystem  stdio  skipped  needs approval"
      ])
      // --yes is not consent (issue 26): it is not even an option of the inspection commands
      const yes = yield* Cli.runCli(["mcp", "list", "--yes"], { cwd: work, home, env })
      expect(yes.code).toBe(2)
      const list = yield* Cli.runCli(["mcp", "list", "--trust-workspace"], { cwd: work, home, env })
      expect(list.code, list.stderr).toBe(0)
      expect(Cli.linesOf(list.stdout)).toEqual([
        "everything  stdio  connected  12 tools",
        expect.stringMatching(/^filesystem  stdio  connected  \d+ tools$/)
      ])
      const tools = yield* Cli.runCli(["mcp", "tools", "everything", "--trust-workspace"], { cwd: work, home, env })
      expect(tools.stdout).toContain(
        "(skipped) simulate-research-query: it runs only as an MCP task, which this client does not support"
      )
      expect(tools.code, tools.stderr).toBe(0)
      expect(Cli.linesOf(tools.stdout)).toContain("mcp__everything__echo                            Echoes back the input string")
      const unknown = yield* Cli.runCli(["mcp", "tools", "nope", "--trust-workspace"], { cwd: work, home, env })
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toBe(`no MCP server named "nope" is configured\n`)
    }), TIMEOUT)
})
