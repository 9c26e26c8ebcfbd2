/**
 * Attack test (issue 26, red team): an HTTP MCP server that answers with a body that never ends
 * is cut at the 10 MiB message limit; the harness neither grows without bound nor waits for its
 * connect timeout.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"

const endlessServer = Effect.acquireRelease(
  Effect.callback<Http.Server>((resume) => {
    const server = Http.createServer((_, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.write("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"x\":\"")
      const chunk = "a".repeat(256 * 1024)
      const pump = () => {
        while (res.write(chunk)) { /* until the socket is full */ }
      }
      res.on("drain", pump)
      pump()
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

describe("attack: MCP over HTTP is bounded (issue 26)", () => {
  it.live("a streamable HTTP server answering with a body that never ends fails at the message limit, quickly", () =>
    Effect.gen(function*() {
      const server = yield* endlessServer
      const port = (server.address() as AddressInfo).port
      const home = yield* Cli.tempDir("attack-mcphttp-home-")
      const work = yield* Cli.tempDir("attack-mcphttp-ws-")
      const config = join(work, "mcp.json")
      writeFileSync(config, JSON.stringify({ mcpServers: { big: { type: "http", url: `http://127.0.0.1:${port}/mcp` } } }))
      const started = Date.now()
      const result = yield* Cli.runCli(["mcp", "list", "--mcp-config", config], { cwd: work, home })
      const seconds = (Date.now() - started) / 1000
      expect(result.timedOut).toBe(false)
      // the connect timeout is 30 s: ending well before it means the body was cut, not waited for
      expect(seconds, result.stderr).toBeLessThan(20)
      expect(result.stderr).not.toMatch(Cli.stackFrame)
    }), 60_000)
})
