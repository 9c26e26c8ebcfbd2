// vitest project: integration
import { describe, expect, it } from "vitest"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as BoundedFetch from "../../../src/Mcp/internal/BoundedFetch.js"

/** A loopback server answering with `type` and writing `chunks` (or, with `forever`, writing without end). */
const serve = async (type: string, chunks: ReadonlyArray<string>, forever = false) => {
  const server = Http.createServer((_, res) => {
    res.writeHead(200, { "content-type": type })
    for (const c of chunks) res.write(c)
    if (!forever) return void res.end()
    const timer = setInterval(() => {
      if (!res.write("a".repeat(64 * 1024))) return
    }, 1)
    res.on("close", () => clearInterval(timer))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe("BoundedFetch (issue 26)", () => {
  it("fails a JSON body that never ends once it passes the limit", async () => {
    const server = await serve("application/json", ["{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"x\":\""], true)
    try {
      const response = await BoundedFetch.make(1024 * 1024)(server.url)
      await expect(response.text()).rejects.toThrow()
    } finally {
      await server.close()
    }
  })
  it("lets an event stream of many small events through, and fails one event over the limit", async () => {
    const event = `data: ${"x".repeat(1000)}\r\n\r\n`
    const ok = await serve("text/event-stream", Array.from({ length: 300 }, () => event))
    try {
      const text = await (await BoundedFetch.make(16 * 1024)(ok.url)).text()
      expect(text.length).toBe(event.length * 300)
    } finally {
      await ok.close()
    }
    const big = await serve("text/event-stream", [event, `data: ${"y".repeat(64 * 1024)}\n\n`])
    try {
      await expect((await BoundedFetch.make(16 * 1024)(big.url)).text()).rejects.toThrow()
    } finally {
      await big.close()
    }
  })
})
