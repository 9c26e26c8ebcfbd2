// vitest project: integration
/**
 * The spawned CLI exports its spans over OTLP/HTTP to a local receiver when `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
 * and sends nothing when it is not (issue 19).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"
import * as FakeProvider from "../support/FakeProvider.js"
import * as OtlpDecode from "./OtlpDecode.js"
import { receiver } from "./OtlpReceiver.js"

/** The span tree checks shared by both protocols: names, parents and GenAI attributes. */
const expectTree = (spans: ReadonlyArray<OtlpDecode.DecodedSpan>) => {
  const names = spans.map((x) => x.name)
  const turn = spans.find((x) => x.name === "invoke_agent effect-harness")
  expect(turn, names.join(", ")).toBeDefined()
  expect(turn!.attributes["gen_ai.operation.name"]).toBe("invoke_agent")
  const chats = spans.filter((x) => x.name.startsWith("chat "))
  expect(chats.length).toBeGreaterThanOrEqual(2)
  for (const chat of chats) {
    expect(chat.parentSpanId).toBe(turn!.spanId)
    expect(chat.attributes["gen_ai.operation.name"]).toBe("chat")
    expect(chat.attributes["gen_ai.conversation.id"]).toBe(turn!.attributes["gen_ai.conversation.id"])
  }
  const tool = spans.find((x) => x.name === "execute_tool ls")
  expect(tool).toBeDefined()
  expect(tool!.parentSpanId).toBe(turn!.spanId)
  expect(tool!.attributes["gen_ai.tool.name"]).toBe("ls")
  return { turn: turn!, chats, tool: tool! }
}

const TIMEOUT = 90_000

describe("OTLP export from the CLI (issue 19)", () => {
  it.live("OTEL_EXPORTER_OTLP_ENDPOINT set: a DeepSeek run's span tree reaches the receiver (JSON) with a retry; no key in any payload", () =>
    Effect.gen(function*() {
      const otlp = yield* receiver
      const home = yield* Cli.tempDir("harness-otel-home-")
      const work = yield* Cli.tempDir("harness-otel-ws-")
      writeFileSync(join(work, "README.md"), "# demo\n")
      const key = `sk-otel-5ecret-${Math.random().toString(36).slice(2)}`
      const fake = yield* FakeProvider.make({
        replies: FakeProvider.retriedToolTurn("A README.")
      })
      const result = yield* Cli.runCli(["run", "--yes", "--provider", "deepseek", "--base-url", fake.url, "hello"], {
        cwd: work,
        home,
        env: {
          DEEPSEEK_API_KEY: key,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20otel-secret-token",
          OTEL_SERVICE_NAME: "harness-under-test"
        }
      })
      expect(result.code, result.stderr).toBe(0)
      const traces = otlp.received.filter((r) => r.path === "/v1/traces")
      expect(traces.length).toBeGreaterThan(0)
      expect(traces[0]!.contentType).toContain("json")
      const spans = traces.flatMap((t) => OtlpDecode.jsonSpans(t.body))
      const { chats, turn } = expectTree(spans)
      expect(chats[0]!.attributes["gen_ai.provider.name"]).toBe("deepseek")
      expect(chats[0]!.attributes["gen_ai.request.model"]).toBe("deepseek-v4-flash")
      expect(chats[0]!.attributes["effect_harness.request.retries"]).toBe(1)
      const priced = chats.filter((c) => typeof c.attributes["effect_harness.cost.usd"] === "number")
      expect(priced).toHaveLength(2)
      const retry = spans.find((x) => x.name === "effect_harness.retry")
      expect(retry?.parentSpanId).toBe(chats[0]!.spanId)
      expect(spans.some((x) => x.name === "effect_harness.session.flush" && x.parentSpanId === turn.spanId)).toBe(true)
      // the metrics went out too
      const metrics = otlp.received.filter((r) => r.path === "/v1/metrics").map((r) => r.body.toString("utf8")).join("\n")
      for (const name of ["gen_ai.client.token.usage", "gen_ai.client.operation.duration", "gen_ai.client.operation.time_to_first_chunk", "effect_harness.tool.duration"]) {
        expect(metrics).toContain(name)
      }
      const everything = otlp.received.map((r) => r.body.toString("utf8")).join("\n")
      expect(everything).toContain("harness-under-test")
      expect(everything).not.toContain("otel-secret-token")
      expect(everything).not.toContain(key)
      expect(everything).not.toContain("5ecret")
      // content capture is opt-in: the prompt is not in any payload
      expect(everything).not.toContain("\"hello\"")
    }), TIMEOUT)

  it.live("protobuf (the default protocol): the receiver decodes the same span tree", () =>
    Effect.gen(function*() {
      const otlp = yield* receiver
      const home = yield* Cli.tempDir("harness-otel-home-")
      const work = yield* Cli.tempDir("harness-otel-ws-")
      const result = yield* Cli.runCli(["run", "hello"], { cwd: work, home, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } })
      expect(result.code, result.stderr).toBe(0)
      const traces = otlp.received.filter((r) => r.path === "/v1/traces")
      expect(traces.length).toBeGreaterThan(0)
      expect(traces[0]!.contentType).toContain("protobuf")
      // decoded from the protobuf wire format: the same tree
      expectTree(traces.flatMap((t) => OtlpDecode.protobufSpans(t.body)))
    }), TIMEOUT)

  it.live("not set (other OTEL_* variables naming the receiver): no connection is opened, nothing is sent", () =>
    Effect.gen(function*() {
      const otlp = yield* receiver
      const home = yield* Cli.tempDir("harness-otel-home-")
      const work = yield* Cli.tempDir("harness-otel-ws-")
      // the receiver's address is known to the child but the endpoint variable is not set
      const result = yield* Cli.runCli(["run", "hello"], {
        cwd: work,
        home,
        env: { OTEL_SERVICE_NAME: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_HEADERS: `x=${otlp.url}` }
      })
      expect(result.code, result.stderr).toBe(0)
      expect(otlp.received).toEqual([])
      expect(otlp.connections.count).toBe(0)
    }), TIMEOUT)
})
