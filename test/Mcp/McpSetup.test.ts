import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as McpConfig from "../../src/Mcp/McpConfig.js"
import * as McpSetup from "../../src/Mcp/McpSetup.js"

const workspace = (config: unknown) => {
  const root = mkdtempSync(join(tmpdir(), "mcp-ws-"))
  const home = join(root, "home")
  const cwd = join(root, "ws")
  mkdirSync(cwd)
  writeFileSync(join(cwd, ".mcp.json"), JSON.stringify(config))
  return { cwd, home }
}

const project = {
  mcpServers: {
    local: { command: "node", args: ["server.js", "--token=${TOKEN:-none}"], env: { KEY: "${KEY}" } },
    api: { type: "http", url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${TOKEN}" }, extra: true }
  }
}

describe("McpConfig", () => {
  it("parses Claude Code's format and expands ${VAR} and ${VAR:-default}; secrets stay redacted", () => {
    const entries = Result.getOrThrow(McpConfig.parse(JSON.stringify(project), "/w/.mcp.json", "project"))
    expect(entries.map((e) => e.name)).toEqual(["local", "api"])
    const local = Result.getOrThrow(McpConfig.resolve(entries[0]!, { KEY: "k1" }))
    expect(local).toMatchObject({ _tag: "Stdio", command: "node", args: ["server.js", "--token=none"] })
    expect(local._tag === "Stdio" && Redacted.value(local.env["KEY"]!)).toBe("k1")
    const api = Result.getOrThrow(McpConfig.resolve(entries[1]!, { HOST: "example.com", TOKEN: "s3cret" }))
    expect(api).toMatchObject({ _tag: "Http", url: "https://example.com/mcp" })
    expect(String(api._tag === "Http" && api.headers["Authorization"])).not.toContain("s3cret")
    expect(McpConfig.resolve(entries[1]!, {})).toEqual(
      Result.fail(`MCP server "api" needs the environment variables HOST, TOKEN`)
    )
    expect(McpConfig.describe(entries[1]!.config)).toBe("http https://${HOST}/mcp (headers: Authorization: <redacted>)")
  })

  it("rejects malformed files with one line naming the file and the server", () => {
    expect(McpConfig.parse("{", "f.json", "project").pipe(Result.mapError((e) => e.message.startsWith("f.json: not valid JSON"))))
      .toEqual(Result.fail(true))
    const bad = McpConfig.parse(JSON.stringify({ mcpServers: { x: { type: "ws", url: "u" } } }), "f.json", "project")
    expect(Result.isFailure(bad) && bad.failure.message.startsWith(`f.json: server "x" is invalid:`)).toBe(true)
  })
})

describe("McpSetup.load (project approval)", () => {
  it.effect("non-interactive: project servers are skipped with a notice; --yes uses them; explicit files are trusted", () =>
    Effect.gen(function*() {
      const { cwd, home } = workspace(project)
      const env = { KEY: "k", HOST: "h.example", TOKEN: "t" }
      const skipped = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "skip" })
      expect(McpSetup.ready(skipped)).toEqual([])
      expect(skipped.notices).toEqual([
        `MCP server "local" from .mcp.json is not approved yet; skipped (approve it in an interactive session, or pass --yes)`,
        `MCP server "api" from .mcp.json is not approved yet; skipped (approve it in an interactive session, or pass --yes)`
      ])
      const yes = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "yes" })
      expect(McpSetup.ready(yes).map((s) => s.name)).toEqual(["local", "api"])
      const extra = join(cwd, "extra.json")
      writeFileSync(extra, JSON.stringify({ mcpServers: { other: { command: "x" } } }))
      const explicit = yield* McpSetup.load({ cwd, home, env, explicitFiles: ["extra.json"], trust: "skip" })
      expect(McpSetup.ready(explicit).map((s) => s.name)).toEqual(["other"])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("interactive: asked once per server, the answer is stored; a changed command asks again", () =>
    Effect.gen(function*() {
      const { cwd, home } = workspace(project)
      const env = { KEY: "k", HOST: "h.example", TOKEN: "t" }
      const asked: Array<string> = []
      const prompt = (answers: Record<string, boolean>) => (q: string) =>
        Effect.sync(() => {
          asked.push(q)
          return q.includes(`"local"`) ? answers["local"] : answers["api"]
        })
      const first = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "ask", prompt: prompt({ local: true, api: false }) })
      expect(McpSetup.ready(first).map((s) => s.name)).toEqual(["local"])
      expect(asked).toEqual([
        `Start the MCP server "local" from .mcp.json: node server.js --token=\${TOKEN:-none} (env: KEY)?`,
        `Start the MCP server "api" from .mcp.json: http https://\${HOST}/mcp (headers: Authorization: <redacted>)?`
      ])
      const stored = JSON.parse(readFileSync(join(home, "mcp-approvals.json"), "utf8")) as {
        projects: Record<string, Record<string, { decision: string }>>
      }
      expect(stored.projects[cwd]?.["local"]?.decision).toBe("approved")
      expect(stored.projects[cwd]?.["api"]?.decision).toBe("rejected")
      asked.length = 0
      const second = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "skip" })
      expect(McpSetup.ready(second).map((s) => s.name)).toEqual(["local"])
      expect(second.notices).toEqual([`MCP server "api" from .mcp.json was rejected earlier; skipped`])
      writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: { local: { command: "node", args: ["other.js"] } } }))
      const third = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "ask", prompt: prompt({ local: true }) })
      expect(asked).toHaveLength(1)
      expect(McpSetup.ready(third).map((s) => s.name)).toEqual(["local"])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("[issue 26] the approval covers the script the command names: a rewritten server.js asks again; the file is private", () =>
    Effect.gen(function*() {
      const { cwd, home } = workspace(project)
      const env = { KEY: "k", HOST: "h.example", TOKEN: "t" }
      writeFileSync(join(cwd, "server.js"), "// v1\n")
      const yes = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "yes", record: true })
      expect(McpSetup.ready(yes).map((s) => s.name)).toEqual(["local", "api"])
      const file = join(home, "mcp-approvals.json")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(statSync(home).mode & 0o777).toBe(0o700)
      const approved = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "skip" })
      expect(McpSetup.ready(approved).map((s) => s.name)).toEqual(["local", "api"])
      writeFileSync(join(cwd, "server.js"), "// v2: something else\n")
      const rewritten = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "skip" })
      expect(McpSetup.ready(rewritten).map((s) => s.name)).toEqual(["api"])
      // an approvals file others can write is not believed
      chmodSync(file, 0o666)
      const loose = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "skip" })
      expect(McpSetup.ready(loose)).toEqual([])
      expect(loose.notices[0]).toContain("is writable by other users")
      // an unapproved workspace: project servers are left out without a word (the caller said it)
      const none = yield* McpSetup.load({ cwd, home, env, explicitFiles: [], trust: "none" })
      expect(McpSetup.ready(none)).toEqual([])
      expect(none.notices).toEqual([])
    }).pipe(Effect.provide(NodeServices.layer)))
})
