/**
 * The spawned CLI exports its spans over OTLP/HTTP to a local receiver when `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
 * and sends nothing when it is not (issue 19).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"

interface Received {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

/** A local OTLP receiver recording every request; closed with the scope. */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly received: Array<Received> }>((resume) => {
    const received: Array<Received> = []
    const server = createServer((req, res) => {
      const parts: Array<Buffer> = []
      req.on("data", (b: Buffer) => parts.push(b))
      req.on("end", () => {
        received.push({ path: req.url ?? "", contentType: String(req.headers["content-type"]), body: Buffer.concat(parts) })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, received, server }))
    })
  }),
  (r) => Effect.sync(() => (r as unknown as { server: { close: () => void } }).server.close())
)

/** Span names in an OTLP/JSON trace export body. */
const spanNames = (body: Buffer): Array<string> => {
  const json = JSON.parse(body.toString("utf8")) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<{ name: string; attributes?: Array<{ key: string }> }> }> }>
  }
  return (json.resourceSpans ?? []).flatMap((r) => (r.scopeSpans ?? []).flatMap((s) => (s.spans ?? []).map((x) => x.name)))
}

const TIMEOUT = 90_000

describe("OTLP export from the CLI (issue 19)", () => {
  it.scopedLive("OTEL_EXPORTER_OTLP_ENDPOINT set: the turn's spans reach the receiver (JSON), no key in any payload", () =>
    Effect.gen(function*() {
      const otlp = yield* receiver
      const home = yield* Cli.tempDir("harness-otel-home-")
      const work = yield* Cli.tempDir("harness-otel-ws-")
      writeFileSync(join(work, "README.md"), "# demo\n")
      const result = yield* Cli.runCli(["run", "hello"], {
        cwd: work,
        home,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20otel-secret-token",
          OTEL_SERVICE_NAME: "harness-under-test"
        }
      })
      expect(result.code, result.stderr).toBe(0)
      const traces = otlp.received.filter((r) => r.path === "/v1/traces")
      expect(traces.length).toBeGreaterThan(0)
      const names = traces.flatMap((t) => spanNames(t.body))
      expect(names).toContain("invoke_agent effect-harness")
      expect(names.some((n) => n.startsWith("chat "))).toBe(true)
      expect(names).toContain("execute_tool ls")
      const everything = otlp.received.map((r) => r.body.toString("utf8")).join("\n")
      expect(everything).toContain("harness-under-test")
      expect(everything).not.toContain("otel-secret-token")
      // content capture is opt-in: the prompt is not in any payload
      expect(everything).not.toContain("\"hello\"")
    }), TIMEOUT)

  it.scopedLive("protobuf (the default protocol) carries the same span names", () =>
    Effect.gen(function*() {
      const otlp = yield* receiver
      const home = yield* Cli.tempDir("harness-otel-home-")
      const work = yield* Cli.tempDir("harness-otel-ws-")
      const result = yield* Cli.runCli(["run", "hello"], { cwd: work, home, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } })
      expect(result.code, result.stderr).toBe(0)
      const traces = otlp.received.filter((r) => r.path === "/v1/traces")
      expect(traces.length).toBeGreaterThan(0)
      expect(traces[0]!.contentType).toContain("protobuf")
      const bytes = Buffer.concat(traces.map((t) => t.body)).toString("latin1")
      expect(bytes).toContain("invoke_agent effect-harness")
      expect(bytes).toContain("execute_tool ls")
    }), TIMEOUT)

  it.scopedLive("not set: nothing is sent anywhere", () =>
    Effect.gen(function*() {
      const otlp = yield* receiver
      const home = yield* Cli.tempDir("harness-otel-home-")
      const work = yield* Cli.tempDir("harness-otel-ws-")
      // the receiver's address is known to the child but the endpoint variable is not set
      const result = yield* Cli.runCli(["run", "hello"], { cwd: work, home, env: { OTEL_SERVICE_NAME: otlp.url } })
      expect(result.code, result.stderr).toBe(0)
      expect(otlp.received).toEqual([])
    }), TIMEOUT)
})
