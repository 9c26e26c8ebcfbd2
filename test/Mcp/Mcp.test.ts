// vitest project: integration
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Mcp from "../../src/Mcp/Mcp.js"
import type * as McpConfig from "../../src/Mcp/McpConfig.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { baseEnv, clientInfo, everything, filesystem, fixture, stdio } from "./support.js"

const everythingServer = stdio("everything", [everything, "stdio"])

const setup = (
  servers: ReadonlyArray<McpConfig.Resolved>,
  script: Scripted.Script,
  extra: Partial<Mcp.Options> = {}
) => {
  const notices: Array<string> = []
  const layer = Mcp.layer({
    servers,
    baseEnv,
    cwd: process.cwd(),
    clientInfo,
    connectTimeoutMs: 15_000,
    killGraceMs: 300,
    approval: "auto",
    onNotice: (line) => Effect.sync(() => void notices.push(line)),
    ...extra
  }).pipe(Layer.provideMerge(TestKit.layer({ script })))
  return { notices, layer }
}

const results = (events: ReadonlyArray<SessionEvent>) =>
  events.flatMap((e) => (e.type === "tool/result" ? [e.data] : []))

const text = (r: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  r.content.map((b) => (b.type === "text" && "text" in b && typeof b.text === "string" ? b.text : "")).join("")

describe("Mcp tools in the loop (server-everything, server-filesystem over stdio)", () => {
  it.live("offers normalised mcp__ tools, validates arguments, maps results and errors, logs mcp/tools, refreshes on list_changed at a step boundary", () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "mcp-fs-")))
    const root = join(dir, "root")
    mkdirSync(root)
    writeFileSync(join(root, "note.txt"), "hello from the filesystem server\n")
    const received = join(dir, "received.jsonl")
    const { layer, notices } = setup([
      stdio("everything", [fixture("tap.mjs"), received, process.execPath, everything, "stdio"]),
      stdio("filesystem", [filesystem, root])
    ], [
      Scripted.call("c1", "mcp__everything__echo", `{"message":"hi"}`),
      Scripted.call("c2", "mcp__everything__get-tiny-image", `{}`),
      Scripted.call("c3", "mcp__everything__echo", `{"message":5}`),
      Scripted.call("c4", "mcp__filesystem__read_text_file", JSON.stringify({ path: join(root, "note.txt") })),
      Scripted.call("c5", "mcp__filesystem__read_text_file", JSON.stringify({ path: join(dir, "outside.txt") })),
      Scripted.text("done")
    ])
    const listRequests = () =>
      readFileSync(received, "utf8").split("\n").filter((l) => l.includes(`"method":"tools/list"`)).length
    return Effect.gen(function*() {
      const mcp = yield* Mcp.McpServers
      // server-everything announces a list change right after initialisation (it adds tools then);
      // the list is fetched again only at the next step boundary
      while ((yield* mcp.connections[0]!.listChangedCount) === 0) yield* Effect.sleep("20 millis")
      expect(listRequests()).toBe(1)
      const t = yield* TestKit.agent()
      yield* t.prompt("go")
      expect(listRequests()).toBe(2)
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      const requests = yield* t.requests
      const echo = requests[0]?.tools?.find((s) => s.name === "mcp__everything__echo")
      expect(echo).toEqual({
        name: "mcp__everything__echo",
        description: "Echoes back the input string",
        parameters: {
          type: "object",
          properties: { message: { type: "string", description: "Message to echo" } },
          required: ["message"]
        }
      })
      // the task-only tool is skipped with one line, once
      expect(requests[0]?.tools?.some((s) => s.name === "mcp__everything__simulate-research-query")).toBe(false)
      const skipLine =
        `MCP server "everything": tool "simulate-research-query" skipped: it runs only as an MCP task, which this client does not support`
      expect(notices.filter((n) => n === skipLine)).toHaveLength(1)
      const events = yield* t.events
      const [r1, r2, bad, ok, denied] = results(events)
      expect(r1?.isError).toBe(false)
      expect(text(r1!)).toBe("Echo: hi")
      expect(r1?.meta).toEqual({ mcp: { server: "everything", tool: "echo" } })
      // the call's idempotency key reaches the server in the request's _meta (DEC-16)
      const echoCall = readFileSync(received, "utf8").split("\n").find((l) =>
        l.includes(`"method":"tools/call"`) && l.includes(`"message":"hi"`)
      )
      expect(JSON.parse(echoCall ?? "{}").params?._meta).toEqual({ "effect-harness/idempotencyKey": `${t.agent.id}:1:1:c1` })
      expect(text(r2!)).toMatch(/^Here's the image you requested:\n\[image: image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/)
      // invalid arguments never reach the server
      expect(bad?.error).toEqual({ name: "ToolArgsError", code: "INVALID_ARGS" })
      expect(text(bad!)).toBe(`Error: invalid arguments: "message" must be string`)
      expect(readFileSync(received, "utf8")).not.toContain(`"message":5`)
      expect(text(ok!)).toBe("hello from the filesystem server\n")
      expect(denied?.isError).toBe(true)
      expect(denied?.error).toEqual({ name: "McpServerError", code: "MCP_SERVER_ERROR" })
      expect(text(denied!)).toMatch(/^Error: .*(Access denied|outside allowed)/)
      // the offered servers and tools are logged before the first request header, once
      const types = events.map((e) => e.type)
      expect(types.indexOf("mcp/tools")).toBeGreaterThan(-1)
      expect(types.indexOf("mcp/tools")).toBeLessThan(types.indexOf("request/header"))
      expect(types.filter((ty) => ty === "mcp/tools")).toHaveLength(1)
      const offered = events.find((e) => e.type === "mcp/tools")
      const servers = offered?.type === "mcp/tools" ? offered.data.servers : []
      expect(servers.map((s) => [s.name, s.status])).toEqual([["everything", "connected"], ["filesystem", "connected"]])
      expect(servers[0]?.tools).toContainEqual({ name: "mcp__everything__echo", tool: "echo" })
      expect(servers[0]?.skipped).toContainEqual({
        tool: "simulate-research-query",
        reason: "it runs only as an MCP task, which this client does not support"
      })
    }).pipe(Effect.scoped, Effect.provide(layer))
  }, 40_000)

  it.live("a server crash mid-call is a tool error, the agent goes on, and the server is restarted on next use", () => {
    const { layer } = setup([everythingServer], [
      Scripted.call("c1", "mcp__everything__trigger-long-running-operation", `{"duration":30,"steps":30}`),
      Scripted.call("c2", "mcp__everything__echo", `{"message":"after the crash"}`),
      Scripted.text("done")
    ])
    return Effect.gen(function*() {
      const mcp = yield* Mcp.McpServers
      const connection = mcp.connections[0]!
      const status = yield* connection.status
      const pid = status._tag === "Connected" ? status.pid ?? 0 : 0
      const t = yield* TestKit.agent()
      const run = yield* Effect.forkChild(t.prompt("go"))
      while (!(yield* t.events).some((e) => e.type === "tool/call")) yield* Effect.sleep("20 millis")
      yield* Effect.sleep("300 millis")
      process.kill(pid, "SIGKILL")
      yield* Fiber.join(run)
      expect(yield* t.turnEnds).toEqual([{ kind: "completed" }])
      const [crashed, after] = results(yield* t.events)
      expect(crashed?.isError).toBe(true)
      expect(crashed?.error).toEqual({ name: "McpConnectError", code: "MCP_CONNECT_FAILED" })
      expect(after?.isError).toBe(false)
      expect(text(after!)).toBe("Echo: after the crash")
      const restarted = yield* connection.status
      expect(restarted._tag === "Connected" && restarted.generation).toBe(2)
    }).pipe(Effect.scoped, Effect.provide(layer))
  }, 40_000)

  it.live("a server that never answers initialize: timeout, one clear line, the agent still starts; MCP calls need approval", () => {
    const { layer, notices } = setup(
      [stdio("silent", [fixture("silent-server.mjs")]), everythingServer],
      [Scripted.call("c1", "mcp__everything__echo", `{"message":"hi"}`), Scripted.text("hello")],
      { connectTimeoutMs: 4000, approval: "deny" }
    )
    return Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.prompt("go")
      expect(yield* t.texts).toEqual(["", "hello"])
      // approval cannot be asked here: the call is denied like a built-in mutating tool's
      const [denied] = results(yield* t.events)
      expect(denied?.isError).toBe(true)
      expect(text(denied!)).toContain(`tool "mcp__everything__echo" is provided by an MCP server and needs the user's approval`)
      expect(notices).toContain(`MCP server "silent" is unavailable: MCP server "silent" did not answer initialize within 4000 ms`)
      const names = (yield* t.requests)[0]?.tools?.map((s) => s.name) ?? []
      expect(names.some((n) => n.startsWith("mcp__silent__"))).toBe(false)
      expect(names).toContain("mcp__everything__echo")
      const offered = (yield* t.events).find((e) => e.type === "mcp/tools")
      expect(offered?.type === "mcp/tools" && offered.data.servers[0]).toMatchObject({ name: "silent", status: "failed", tools: [] })
    }).pipe(Effect.scoped, Effect.provide(layer))
  }, 30_000)

  it.live("[issue 26] one malformed tool definition drops only that tool (a notice names it), not the server", () => {
    const { layer, notices } = setup(
      [stdio("odd", [fixture("malformed-tools.mjs")])],
      [Scripted.call("c1", "mcp__odd__echo", `{"message":"still here"}`), Scripted.text("done")]
    )
    return Effect.gen(function*() {
      const t = yield* TestKit.agent()
      yield* t.prompt("go")
      const [echo] = results(yield* t.events)
      expect(echo?.isError).toBe(false)
      expect(text(echo!)).toBe("Echo: still here")
      const names = (yield* t.requests)[0]?.tools?.map((s) => s.name) ?? []
      expect(names.filter((n) => n.startsWith("mcp__odd__"))).toEqual(["mcp__odd__echo"])
      expect(notices.filter((n) => n.includes("skipped"))).toEqual([
        `MCP server "odd": tool "broken" skipped: its definition is malformed (inputSchema.type: Invalid input: expected "object")`,
        `MCP server "odd": tool "#2" skipped: its definition is malformed (name: Invalid input: expected string, received undefined)`
      ])
    }).pipe(Effect.scoped, Effect.provide(layer))
  }, 30_000)
})
