// vitest project: integration
/**
 * The embedder's acceptance test (issue 28, DEC-15): the full coding agent composed from the package's root
 * entry alone (`src/index.ts` is the source of `effect-harness`; a check below keeps this file to the package's
 * exports), a scripted turn in a temporary workspace that reads, edits and runs bash under a permission rule
 * and a PreToolUse command hook, and calls an MCP tool of `@modelcontextprotocol/server-everything`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { CodingAgent, Memory, Scripted } from "../../src/index.js"
import * as Surface from "../support/PackageSurface.js"

const repo = fileURLToPath(new URL("../../", import.meta.url))
const everything = Path.join(repo, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
const args = (value: Record<string, string>) => JSON.stringify(value)

/** A workspace with a file, a settings file (a deny rule and a PreToolUse hook) and an MCP configuration. */
const workspace = () => {
  const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "embedder-")))
  const cwd = Path.join(root, "project")
  Fs.mkdirSync(cwd)
  Fs.writeFileSync(Path.join(cwd, "a.txt"), "hello world\n")
  const settingsFile = Path.join(root, "settings.json")
  Fs.writeFileSync(settingsFile, JSON.stringify({
    permissions: { deny: ["Bash(rm:*)"] },
    hooks: {
      PreToolUse: [{
        matcher: "bash",
        hooks: [{ type: "command", command: "grep -q forbidden && { echo 'Blocked: no forbidden words' >&2; exit 2; } || exit 0" }]
      }]
    }
  }))
  const mcpFile = Path.join(root, "mcp.json")
  Fs.writeFileSync(mcpFile, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } } }))
  return { root, cwd, settingsFile, mcpFile }
}

const script: Scripted.Script = [
  Scripted.call("c1", "read", args({ file_path: "a.txt" })),
  Scripted.call("c2", "edit", args({ file_path: "a.txt", old_string: "hello", new_string: "hello edited" })),
  Scripted.call("c3", "bash", args({ command: "cat a.txt" })),
  Scripted.call("c4", "bash", args({ command: "rm -f a.txt" })),
  Scripted.call("c5", "bash", args({ command: "echo forbidden" })),
  Scripted.call("c6", "mcp__everything__echo", args({ message: "hi mcp" })),
  Scripted.text("all done")
]

describe("the coding agent as a library (issue 28)", () => {
  it("this file imports the package only through its exports", () => {
    const exported = Surface.exportsOf(Fs.readFileSync(Path.join(repo, "package.json"), "utf8"))
      .map((e) => Path.join(repo, Surface.sourceOf(e.types)))
    const own = Fs.readFileSync(fileURLToPath(import.meta.url), "utf8")
    const fromSrc = [...own.matchAll(/from "(\.\.\/\.\.\/src\/[^"]+)"/g)].map((m) =>
      Path.join(repo, "test/embedder", m[1]!).replace(/\.js$/, ".ts")
    )
    expect(fromSrc.length).toBeGreaterThan(0)
    expect(fromSrc.filter((f) => !exported.includes(f))).toEqual([])
  })

  it.live("reads, edits and runs bash under a deny rule and a PreToolUse hook, and calls an MCP tool", () => {
    const ws = workspace()
    const agentLayer = CodingAgent.layer({
      adapter: Scripted.layer(script),
      model: "test",
      cwd: ws.cwd,
      persistence: Memory.layer,
      approval: "auto",
      settingsFile: ws.settingsFile,
      mcpConfig: [ws.mcpFile]
    })
    return Effect.gen(function*() {
      const agent = yield* CodingAgent.make()
      expect(yield* agent.prompt("tidy a.txt")).toBe("all done")
      const events = yield* agent.agent.session.events
      const results = events.flatMap((e) => e.type === "tool/result" ? [e.data] : [])
      const text = (i: number) => JSON.stringify(results[i]?.content)
      expect(results.map((r) => r.isError === true)).toEqual([false, false, false, true, true, false])
      expect(text(0)).toContain("hello world")
      expect(text(2)).toContain("hello edited world")
      expect(text(3)).toContain("Bash(rm:*)")
      expect(text(4)).toContain("Blocked: no forbidden words")
      expect(text(5)).toContain("hi mcp")
      expect(Fs.readFileSync(Path.join(ws.cwd, "a.txt"), "utf8")).toBe("hello edited world\n")
    }).pipe(
      Effect.scoped,
      Effect.provide(agentLayer),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({
        HOME: ws.root,
        EFFECT_HARNESS_HOME: Path.join(ws.root, ".harness"),
        PATH: process.env["PATH"] ?? "/usr/bin:/bin"
      })),
      Effect.ensuring(Effect.sync(() => Fs.rmSync(ws.root, { recursive: true, force: true })))
    )
  }, 60_000)
})
