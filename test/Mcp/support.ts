/**
 * Helpers for the MCP tests: the reference servers from npm (run with this Node), fixture
 * servers, and a free loopback port for the streamable HTTP server.
 */
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type * as McpConfig from "../../src/Mcp/McpConfig.js"

export const repoRoot: string = fileURLToPath(new URL("../../", import.meta.url))
export const everything = join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
export const filesystem = join(repoRoot, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

export const stdio = (name: string, args: ReadonlyArray<string>): McpConfig.Resolved => ({
  _tag: "Stdio",
  name,
  command: process.execPath,
  args,
  env: {}
})

export const clientInfo = { name: "effect-harness-test", version: "0.0.0" }

/** the environment a stdio server inherits in tests */
export const baseEnv: Record<string, string | undefined> = { PATH: process.env["PATH"], HOME: process.env["HOME"] }

/** a port that was free a moment ago on 127.0.0.1 */
export const freePort: Effect.Effect<number> = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** `true` while a process with this pid exists (and is not a zombie) */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
    return state !== "Z"
  } catch {
    return true
  }
}
