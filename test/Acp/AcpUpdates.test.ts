/**
 * Session events as ACP `session/update`s (issue 35): chunks, tool calls with kinds and diffs,
 * results, the replay of a stored session, prompts and stop reasons.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as AcpAgent from "../../src/Acp/AcpAgent.js"
import * as AcpApprovals from "../../src/Acp/AcpApprovals.js"
import * as AcpUpdates from "../../src/Acp/AcpUpdates.js"
import { callId } from "../../src/Llm/ContentBlock.js"
import { sessionId } from "../../src/Llm/Message.js"
import { exportEvents } from "../support/exportLog.js"

describe("Acp/AcpUpdates", () => {
  it("a tool call: title, kind, raw input, location and the diff of an edit or a write", () => {
    expect(AcpUpdates.describeCall("c1", "edit", JSON.stringify({ file_path: "src/a.ts", old_string: "a", new_string: "b" }))).toEqual({
      toolCallId: "c1",
      title: "edit src/a.ts",
      kind: "edit",
      status: "pending",
      rawInput: { file_path: "src/a.ts", old_string: "a", new_string: "b" },
      content: [{ type: "diff", path: "src/a.ts", oldText: "a", newText: "b" }],
      locations: [{ path: "src/a.ts" }]
    })
    expect(AcpUpdates.describeCall("c2", "write", JSON.stringify({ file_path: "n.md", content: "x" })).content).toEqual([
      { type: "diff", path: "n.md", oldText: null, newText: "x" }
    ])
    expect(AcpUpdates.describeCall("c3", "bash", JSON.stringify({ command: "npm test\necho done" }))).toMatchObject({ title: "bash: npm test", kind: "execute" })
    expect(AcpUpdates.describeCall("c4", "grep", JSON.stringify({ pattern: "TODO" }))).toMatchObject({ title: "grep TODO", kind: "search" })
    expect(AcpUpdates.describeCall("c5", "mcp__x__y", "not json")).toMatchObject({ title: "mcp__x__y", kind: "other", rawInput: "not json" })
  })

  it("live updates: text and thought chunks, tool_call, tool_call_update; bookkeeping events send nothing", () => {
    const updates = exportEvents().flatMap(AcpUpdates.live)
    expect(updates.map((u) => u.sessionUpdate)).toEqual([
      "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call", "tool_call_update", "tool_call_update"
    ])
    expect(updates[5]).toMatchObject({ toolCallId: "call-bash", status: "failed", _meta: { seq: 10 } })
  })

  it("a replay sends the user's messages, the assistant's answers and every tool call with its result", () => {
    const kinds = AcpUpdates.replay(exportEvents()).map((u) => u.sessionUpdate)
    expect(kinds).toEqual([
      "user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call", "tool_call_update", "tool_call_update",
      "agent_message_chunk", "user_message_chunk", "user_message_chunk", "agent_message_chunk"
    ])
  })

  it("prompt text from ACP blocks; stop reasons from turn ends", () => {
    expect(AcpUpdates.promptText([
      { type: "text", text: "look at" },
      { type: "resource_link", name: "a.ts", uri: "file:///w/a.ts" },
      { type: "resource", resource: { uri: "file:///w/b.ts", text: "const b = 1" } },
      { type: "image", data: "", mimeType: "image/png" }
    ])).toBe("look at\n[a.ts](file:///w/a.ts)\n<resource uri=\"file:///w/b.ts\">\nconst b = 1\n</resource>\n[image content is not supported]")
    expect(AcpAgent.stopReasonOf({ kind: "completed" })).toBe("end_turn")
    expect(AcpAgent.stopReasonOf({ kind: "aborted", reason: "x" })).toBe("cancelled")
    expect(AcpAgent.stopReasonOf({ kind: "max-steps", steps: 3 })).toBe("max_turn_requests")
    expect(AcpAgent.stopReasonOf({ kind: "rejected", reason: "no" })).toBe("refusal")
    expect(AcpAgent.stopReasonOf({ kind: "error", step: 1, message: "boom" })).toBeUndefined()
  })

  it.effect("approvals go to the asker of the requesting agent, for as long as it is registered", () =>
    Effect.gen(function*() {
      const approvals = yield* AcpApprovals.make
      const request = { agentId: sessionId("a1"), turn: 1, step: 1, callId: callId("c"), name: "bash", arguments: {} }
      expect(yield* approvals.ask(request)).toBe("unavailable")
      yield* Effect.scoped(Effect.gen(function*() {
        yield* approvals.register("a1", () => Effect.succeed("allow-once"))
        yield* approvals.register("a2", () => Effect.succeed("reject"))
        expect(yield* approvals.ask(request)).toBe("allow-once")
        expect(yield* approvals.ask({ ...request, agentId: sessionId("a2") })).toBe("reject")
      }))
      expect(yield* approvals.ask(request)).toBe("unavailable")
    }))
})
