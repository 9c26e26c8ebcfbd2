// vitest project: integration
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as McpConnection from "../../src/Mcp/McpConnection.js"
import { alive, baseEnv, clientInfo, everything, fixture, freePort, stdio } from "./support.js"

const options = (extra: Partial<McpConnection.Options> = {}): McpConnection.Options => ({
  baseEnv,
  cwd: process.cwd(),
  clientInfo,
  connectTimeoutMs: 15_000,
  killGraceMs: 300,
  ...extra
})

const until = (check: () => boolean, what: string, ms = 10_000) =>
  Effect.gen(function*() {
    const start = Date.now()
    while (!check()) {
      if (Date.now() - start > ms) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("25 millis")
    }
  })

describe("McpConnection over stdio (server-everything)", () => {
  it.live("connects lazily, lists tools, calls tools with arguments, reports tool errors, times out a call, and kills the server's group on scope close", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const c = yield* Scope.provide(
        McpConnection.make(stdio("everything", [everything, "stdio"]), options({ callTimeoutMs: 1500 })),
        scope
      )
      expect((yield* c.status)._tag).toBe("Idle")
      const tools = yield* c.listTools
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]))
      const status = yield* c.status
      expect(status._tag).toBe("Connected")
      const pid = status._tag === "Connected" ? status.pid ?? 0 : 0
      expect(alive(pid)).toBe(true)
      const result = yield* c.callTool("echo", { message: "hi there" })
      expect(result.content).toEqual([{ type: "text", text: "Echo: hi there" }])
      const sum = yield* c.callTool("get-sum", { a: 2, b: 3 })
      expect(JSON.stringify(sum.content)).toContain("5")
      // a failing tool comes back as an isError result with the server's text
      const bad = yield* c.callTool("get-sum", { a: 1 })
      expect(bad.isError).toBe(true)
      expect(JSON.stringify(bad.content)).toContain("Invalid arguments for tool get-sum")
      const missing = yield* c.callTool("no-such-tool", {})
      expect(missing.isError).toBe(true)
      expect(JSON.stringify(missing.content)).toContain("no-such-tool not found")
      // the per-call deadline
      const late = yield* Effect.flip(c.callTool("trigger-long-running-operation", { duration: 5, steps: 5 }))
      expect(late.code).toBe("MCP_TIMEOUT")
      expect(late.message).toBe(`MCP server "everything" did not answer the call of "trigger-long-running-operation" in time`)
      yield* Scope.close(scope, Exit.void)
      expect(alive(pid)).toBe(false)
    }), 30_000)

  it.live("interrupting a long-running call sends notifications/cancelled to the server", () =>
    Effect.gen(function*() {
      const log = join(mkdtempSync(join(tmpdir(), "mcp-tap-")), "received.jsonl")
      const c = yield* McpConnection.make(
        stdio("everything", [fixture("tap.mjs"), log, process.execPath, everything, "stdio"]),
        options()
      )
      yield* c.connect
      const fiber = yield* Effect.forkChild(c.callTool("trigger-long-running-operation", { duration: 30, steps: 30 }))
      yield* until(() => existsSync(log) && readFileSync(log, "utf8").includes("trigger-long-running-operation"), "the call")
      yield* Fiber.interrupt(fiber)
      yield* until(() => readFileSync(log, "utf8").includes("notifications/cancelled"), "the cancel notification")
      const lines = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { method?: string; id?: number; params?: { requestId?: number } })
      const call = lines.find((l) => l.method === "tools/call")
      const cancel = lines.find((l) => l.method === "notifications/cancelled")
      expect(cancel?.params?.requestId).toBe(call?.id)
      // the server is still usable afterwards
      const after = yield* c.callTool("echo", { message: "still here" })
      expect(after.content).toEqual([{ type: "text", text: "Echo: still here" }])
    }).pipe(Effect.scoped), 30_000)

  it.live("a server crash mid-call fails the call with MCP_CONNECT_FAILED; the next use restarts it; then it is reported down", () =>
    Effect.gen(function*() {
      const c = yield* McpConnection.make(stdio("everything", [everything, "stdio"]), options({ maxRestarts: 1 }))
      const crash = Effect.gen(function*() {
        const s = yield* c.status
        const pid = s._tag === "Connected" ? s.pid ?? 0 : 0
        const fiber = yield* Effect.forkChild(c.callTool("trigger-long-running-operation", { duration: 30, steps: 30 }))
        yield* Effect.sleep("200 millis")
        process.kill(pid, "SIGKILL")
        return yield* Effect.flip(Fiber.join(fiber))
      })
      yield* c.connect
      const first = yield* crash
      expect(first.code).toBe("MCP_CONNECT_FAILED")
      expect((yield* c.status)._tag).toBe("Crashed")
      const again = yield* c.callTool("echo", { message: "back" })
      expect(again.content).toEqual([{ type: "text", text: "Echo: back" }])
      const s2 = yield* c.status
      expect(s2._tag === "Connected" && s2.generation).toBe(2)
      expect(yield* c.takeToolsChanged).toBe(true)
      yield* crash
      const down = yield* Effect.flip(c.callTool("echo", { message: "x" }))
      expect(down.code).toBe("MCP_CONNECT_FAILED")
      expect(down.message).toContain("reported down")
      expect((yield* c.status)._tag).toBe("Down")
    }).pipe(Effect.scoped), 40_000)

  it.live("a server that never answers initialize: MCP_TIMEOUT with a clear message, and its process is gone", () =>
    Effect.gen(function*() {
      const pidFile = join(mkdtempSync(join(tmpdir(), "mcp-silent-")), "pid")
      const c = yield* McpConnection.make(
        stdio("silent", [fixture("silent-server.mjs"), pidFile]),
        options({ connectTimeoutMs: 800 })
      )
      const error = yield* Effect.flip(c.connect)
      expect(error.code).toBe("MCP_TIMEOUT")
      expect(error.message).toBe(`MCP server "silent" did not answer initialize within 800 ms`)
      expect((yield* c.status)._tag).toBe("Failed")
      expect(alive(Number(readFileSync(pidFile, "utf8")))).toBe(false)
    }).pipe(Effect.scoped), 20_000)

  it.live("a command that does not exist fails with MCP_CONNECT_FAILED", () =>
    Effect.gen(function*() {
      const c = yield* McpConnection.make(
        { _tag: "Stdio", name: "nope", command: "/nonexistent/mcp-server", args: [], env: {} },
        options()
      )
      const error = yield* Effect.flip(c.connect)
      expect(error.code).toBe("MCP_CONNECT_FAILED")
      expect(error.message).toContain(`cannot start MCP server "nope"`)
    }).pipe(Effect.scoped), 20_000)
})

describe("McpConnection over streamable HTTP (server-everything)", () => {
  it.live("connects, lists, calls a tool with arguments, and receives an image", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const server = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, [everything, "streamableHttp"], {
            env: { ...baseEnv, PORT: String(port) },
            stdio: ["ignore", "ignore", "pipe"]
          })
        ),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      let stderr = ""
      server.stderr?.on("data", (d: Buffer) => (stderr += d.toString()))
      yield* until(() => stderr.includes("listening on port"), "the HTTP server")
      const c = yield* McpConnection.make(
        { _tag: "Http", name: "web", url: `http://127.0.0.1:${port}/mcp`, headers: {} },
        options()
      )
      const tools = yield* c.listTools
      expect(tools.map((t) => t.name)).toContain("echo")
      const echo = yield* c.callTool("echo", { message: "over http" })
      expect(echo.content).toEqual([{ type: "text", text: "Echo: over http" }])
      const image = yield* c.callTool("get-tiny-image", {})
      expect(image.content.some((b) => b.type === "image" && b.mimeType === "image/png")).toBe(true)
      expect(c.kind).toBe("http")
    }).pipe(Effect.scoped), 30_000)

  it.live("HTTP+SSE: type sse connects directly, and type http falls back to it when the endpoint is not streamable HTTP", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const server = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, [everything, "sse"], {
            env: { ...baseEnv, PORT: String(port) },
            stdio: ["ignore", "ignore", "pipe"]
          })
        ),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      let stderr = ""
      server.stderr?.on("data", (d: Buffer) => (stderr += d.toString()))
      yield* until(() => stderr.includes("running on port"), "the SSE server")
      for (const tag of ["Sse", "Http"] as const) {
        const c = yield* McpConnection.make(
          { _tag: tag, name: `legacy-${tag}`, url: `http://127.0.0.1:${port}/sse`, headers: {} },
          options()
        )
        const echo = yield* c.callTool("echo", { message: tag })
        expect(echo.content).toEqual([{ type: "text", text: `Echo: ${tag}` }])
      }
    }).pipe(Effect.scoped), 30_000)
})
