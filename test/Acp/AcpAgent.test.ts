/**
 * `AcpAgent.serve` in process (issue 35), over an in-memory ndjson stream pair and the test kit's
 * scripted world: the `model` option switches the session's model between prompts (the session goes
 * on), a prompt while one runs is refused, and a cancel ends the running one `cancelled`.
 */
import * as Acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as AcpAgent from "../../src/Acp/AcpAgent.js"
import * as AcpApprovals from "../../src/Acp/AcpApprovals.js"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as TestKit from "../../src/Loop/TestKit.js"

const pair = () => {
  const toClient = new TransformStream<Uint8Array, Uint8Array>()
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  return {
    agent: Acp.ndJsonStream(toClient.writable, toAgent.readable),
    client: Acp.ndJsonStream(toAgent.writable, toClient.readable)
  }
}

describe("Acp/AcpAgent", () => {
  it.live("the model option reopens the session on another model; a second prompt while one runs is refused; cancel", () =>
    Effect.gen(function*() {
      const streams = pair()
      const approvals = yield* AcpApprovals.make
      yield* Effect.forkScoped(AcpAgent.serve(streams.agent, {
        cwd: "/work/project",
        provider: "scripted",
        model: "test",
        models: ["test-2"],
        agentInfo: { name: "t", version: "0" },
        approvals
      }))
      const texts: Array<string> = []
      const connection = Acp.client({ name: "c" })
        .onNotification("session/update", ({ params }) => {
          if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") texts.push(params.update.content.text)
        })
        .connect(streams.client)
      yield* Effect.addFinalizer(() => Effect.sync(() => connection.close()))
      const peer = connection.agent
      yield* Effect.promise(() => peer.request("initialize", { protocolVersion: Acp.PROTOCOL_VERSION, clientCapabilities: {} }))
      const created = yield* Effect.promise(() => peer.request("session/new", { cwd: "/work/project", mcpServers: [] }))
      const sessionId = created.sessionId
      expect(created.configOptions).toMatchObject([{ id: "model", currentValue: "test", options: [{ value: "test" }, { value: "test-2" }] }])

      yield* Effect.promise(() => peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "one" }] }))
      const switched = yield* Effect.promise(() => peer.request("session/set_config_option", { sessionId, configId: "model", value: "test-2" }))
      expect(switched.configOptions).toMatchObject([{ id: "model", currentValue: "test-2" }])
      yield* Effect.promise(() => peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "two" }] }))
      expect(texts.join("")).toBe("first on testsecond on test-2")
      const requests = yield* Scripted.requests
      expect(requests.map((r) => r.model)).toEqual(["test", "test-2"])
      // the same session goes on: the second request carries the first turn
      expect(requests[1]!.messages.length).toBeGreaterThan(requests[0]!.messages.length)

      const hanging = peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "three" }] })
      yield* Effect.promise(() => new Promise<void>((resolve) => {
        const check = () => (texts.join("").endsWith("stuck") ? resolve() : setTimeout(check, 10))
        check()
      }))
      const refused = yield* Effect.promise(() =>
        peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "four" }] }).then(() => "", (e: Error) => e.message)
      )
      expect(refused).toContain("a prompt is already running")
      const duringTurn = yield* Effect.promise(() =>
        peer.request("session/set_config_option", { sessionId, configId: "model", value: "test" }).then(() => "", (e: Error) => e.message)
      )
      expect(duringTurn).toContain("not while one runs")
      yield* Effect.promise(() => peer.notify("session/cancel", { sessionId }))
      expect((yield* Effect.promise(() => hanging)).stopReason).toBe("cancelled")
    }).pipe(Effect.provide(TestKit.layer({
      script: [Scripted.text("first on test"), Scripted.text("second on test-2"), Scripted.hang(Scripted.say("stuck"))]
    }))), 30_000)
})
