/**
 * End-to-end (issue 35): `harness acp` driven by the ACP maintainers' SDK, client side, over the real
 * stdio of a spawned agent process with the scripted model: initialize, a new session, a prompt whose
 * `write` call needs permission (granted: the file is written), one whose `bash` call is denied,
 * a prompt cancelled mid-stream, then a second agent process loading the session (replayed) and
 * answering a last prompt. The log is complete, balanced and replays (`sessions replay`).
 */
import * as Acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Readable, Writable } from "node:stream"
import * as Cli from "../../support/Cli.js"

const TIMEOUT = 180_000

interface Agent {
  readonly connection: Acp.ClientConnection
  readonly updates: Array<Acp.SessionNotification>
  readonly permissions: Array<Acp.RequestPermissionRequest>
  readonly stderr: () => string
  /** the editor goes away: closes the connection and the agent's stdin */
  readonly close: () => void
  /** resolves with the exit code once the process ended */
  readonly exited: Promise<number | null>
}

/** Spawns `harness acp` and connects the SDK's client to its stdio; answers permission requests with `answers` in order. */
const spawnAgent = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly home: string; readonly answers: Array<"allow" | "reject"> }
): Effect.Effect<Agent, never, Scope.Scope> =>
  Effect.flatMap(Cli.bundle, (script) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, [script, "acp", ...args], { cwd: options.cwd, env: Cli.cleanEnv(options.home), stdio: ["pipe", "pipe", "pipe"] })
        let stderr = ""
        child.stderr.setEncoding("utf8")
        child.stderr.on("data", (d: string) => (stderr += d))
        const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
        const updates: Array<Acp.SessionNotification> = []
        const permissions: Array<Acp.RequestPermissionRequest> = []
        const app = Acp.client({ name: "acp-e2e" })
          .onNotification("session/update", ({ params }) => void updates.push(params))
          .onRequest("session/request_permission", ({ params }) => {
            permissions.push(params)
            const answer = options.answers.shift()
            return answer === undefined ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId: answer } }
          })
        const connection = app.connect(Acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)))
        const close = () => {
          connection.close()
          child.stdin.end()
        }
        return { agent: { connection, updates, permissions, stderr: () => stderr, exited, close }, child }
      }),
      ({ child }) => Effect.sync(() => void (child.exitCode === null && child.kill("SIGKILL")))
    ).pipe(Effect.map(({ agent }) => agent)))

const waitUntil = (predicate: () => boolean): Promise<void> =>
  new Promise((resolve) => {
    const check = () => (predicate() ? resolve() : setTimeout(check, 20))
    check()
  })

const textOf = (updates: ReadonlyArray<Acp.SessionNotification>, kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk") =>
  updates.flatMap((n) => n.update.sessionUpdate === kind && n.update.content.type === "text" ? [n.update.content.text] : []).join("")

describe("harness acp end to end", () => {
  it.live("[issue 35] initialize, new session, permission granted and denied, cancel mid-stream, load again; the log replays", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-acp-home-")
      const work = yield* Cli.tempDir("harness-acp-ws-")
      const first = join(work, "..", `${work.split("/").at(-1)}-script1.json`)
      writeFileSync(first, JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [
          [{ reasoning: "the user wants a file" }, { text: "I will write a.txt." }, { toolCall: { id: "c1", name: "write", arguments: JSON.stringify({ file_path: "a.txt", content: "hello from acp\n" }) } }, { finish: { kind: "tool-calls" } }],
          { text: "wrote it" },
          { call: { id: "c2", name: "bash", arguments: JSON.stringify({ command: "echo should-not-run > b.txt" }) } },
          { text: "ok, not running it" },
          [{ text: "streaming and then " }, { hang: true }]
        ]
      }))
      const agent = yield* spawnAgent(["--script", first], { cwd: work, home, answers: ["allow", "reject"] })
      const peer = agent.connection.agent
      const init = yield* Effect.promise(() => peer.request("initialize", { protocolVersion: Acp.PROTOCOL_VERSION, clientCapabilities: {} }))
      expect(init).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true }, agentInfo: { name: "effect-harness" } })

      const created = yield* Effect.promise(() => peer.request("session/new", { cwd: work, mcpServers: [] }))
      const sessionId = created.sessionId
      expect(sessionId).toMatch(/^harness-session-/)
      expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["default", "acceptEdits", "plan"])

      // 1. a write needing permission, granted
      const granted = yield* Effect.promise(() => peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "please write a.txt" }] }))
      expect(granted.stopReason).toBe("end_turn")
      expect(agent.permissions[0]).toMatchObject({ sessionId, toolCall: { toolCallId: "c1", kind: "edit", content: [{ type: "diff", path: "a.txt", newText: "hello from acp\n" }] } })
      expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("hello from acp\n")
      expect(textOf(agent.updates, "agent_thought_chunk")).toBe("the user wants a file")
      expect(textOf(agent.updates, "agent_message_chunk")).toBe("I will write a.txt.wrote it")
      const c1 = agent.updates.flatMap((n) => "toolCallId" in n.update && n.update.toolCallId === "c1" ? [n.update] : [])
      expect(c1.map((u) => [u.sessionUpdate, u.status])).toEqual([["tool_call", "pending"], ["tool_call_update", "in_progress"], ["tool_call_update", "completed"]])

      // 2. a bash call, denied: not run, the model reads why
      const denied = yield* Effect.promise(() => peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "now run a command" }] }))
      expect(denied.stopReason).toBe("end_turn")
      expect(agent.permissions).toHaveLength(2)
      expect(agent.permissions[1]).toMatchObject({ toolCall: { toolCallId: "c2", kind: "execute" } })
      expect(existsSync(join(work, "b.txt"))).toBe(false)
      const c2 = agent.updates.flatMap((n) => "toolCallId" in n.update && n.update.toolCallId === "c2" ? [n.update] : [])
      expect(c2.map((u) => u.status)).toEqual(["pending", "failed"])

      // 3. cancelled mid-stream
      const pending = peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "tell me a long story" }] })
      yield* Effect.promise(() => waitUntil(() => textOf(agent.updates, "agent_message_chunk").endsWith("streaming and then ")))
      yield* Effect.promise(() => peer.notify("session/cancel", { sessionId }))
      const cancelled = yield* Effect.promise(() => pending)
      expect(cancelled.stopReason).toBe("cancelled")

      // the editor goes away: the agent saves, releases the session and exits 0
      agent.close()
      expect(yield* Effect.promise(() => agent.exited), agent.stderr()).toBe(0)

      // 4. a new agent process loads the session: replayed before the answer, then goes on
      const second = join(work, "..", `${work.split("/").at(-1)}-script2.json`)
      writeFileSync(second, JSON.stringify({ provider: "scripted", model: "demo", responses: [{ text: "back again" }] }))
      const again = yield* spawnAgent(["--script", second], { cwd: work, home, answers: [] })
      yield* Effect.promise(() => again.connection.agent.request("initialize", { protocolVersion: Acp.PROTOCOL_VERSION, clientCapabilities: {} }))
      const loaded = yield* Effect.promise(() => again.connection.agent.request("session/load", { sessionId, cwd: work, mcpServers: [] }))
      expect(loaded).toMatchObject({ modes: { currentModeId: "default" } })
      expect(textOf(again.updates, "user_message_chunk")).toBe("please write a.txtnow run a commandtell me a long story")
      expect(textOf(again.updates, "agent_message_chunk")).toContain("I will write a.txt.wrote it")
      expect(again.updates.filter((n) => n.update.sessionUpdate === "tool_call").map((n) => "toolCallId" in n.update ? n.update.toolCallId : "")).toEqual(["c1", "c2"])
      const before = again.updates.length
      const last = yield* Effect.promise(() => again.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "are you there?" }] }))
      expect(last.stopReason).toBe("end_turn")
      expect(textOf(again.updates.slice(before), "agent_message_chunk")).toBe("back again")
      again.close()
      expect(yield* Effect.promise(() => again.exited), again.stderr()).toBe(0)

      // the log: one session, four turns, balanced, every prompt verbatim, and it replays
      const logs = Cli.sessionLogs(home)
      expect(logs).toHaveLength(1)
      const log = Cli.readLog(logs[0]!)
      expect(Cli.enclosureProblems(log.events)).toEqual([])
      const reasons = log.events.flatMap((e) => e.type === "turn/end" ? [(e.data as { reason: { kind: string } }).reason.kind] : [])
      expect(reasons).toEqual(["completed", "completed", "aborted", "completed"])
      const prompts = log.events.flatMap((e) =>
        e.type === "user/message" ? (e.data as { content: ReadonlyArray<{ type: string; text?: string }> }).content.flatMap((b) => b.type === "text" ? [b.text] : []) : []
      )
      expect(prompts).toEqual(["please write a.txt", "now run a command", "tell me a long story", "are you there?"])
      const replay = yield* Cli.runCli(["sessions", "replay", sessionId], { cwd: work, home })
      expect(replay.code, replay.stderr + replay.stdout).toBe(0)
    }), TIMEOUT)

  it.live("[issue 35] modes: plan denies a command without asking, acceptEdits writes without asking; bad mode and model refused", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("harness-acp-home-")
      const work = yield* Cli.tempDir("harness-acp-ws-")
      const script = join(home, "script.json")
      writeFileSync(script, JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [
          { call: { id: "p1", name: "bash", arguments: JSON.stringify({ command: "echo planned > p.txt" }) } },
          { text: "planning only" },
          { call: { id: "e1", name: "write", arguments: JSON.stringify({ file_path: "e.txt", content: "accepted\n" }) } },
          { text: "written" }
        ]
      }))
      const agent = yield* spawnAgent(["--script", script], { cwd: work, home, answers: [] })
      const peer = agent.connection.agent
      yield* Effect.promise(() => peer.request("initialize", { protocolVersion: Acp.PROTOCOL_VERSION, clientCapabilities: {} }))
      const { sessionId } = yield* Effect.promise(() => peer.request("session/new", { cwd: work, mcpServers: [] }))

      yield* Effect.promise(() => peer.request("session/set_mode", { sessionId, modeId: "plan" }))
      expect(agent.updates.some((n) => n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "plan")).toBe(true)
      const planned = yield* Effect.promise(() => peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "make a plan" }] }))
      expect(planned.stopReason).toBe("end_turn")
      expect(agent.permissions).toEqual([])
      expect(existsSync(join(work, "p.txt"))).toBe(false)
      const p1 = agent.updates.flatMap((n) => "toolCallId" in n.update && n.update.toolCallId === "p1" ? [n.update] : [])
      expect(p1.at(-1)).toMatchObject({ status: "failed" })
      expect(JSON.stringify(p1.at(-1))).toContain("plan mode allows only read-only tools")

      yield* Effect.promise(() => peer.request("session/set_mode", { sessionId, modeId: "acceptEdits" }))
      const edited = yield* Effect.promise(() => peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write it" }] }))
      expect(edited.stopReason).toBe("end_turn")
      expect(agent.permissions).toEqual([])
      expect(readFileSync(join(work, "e.txt"), "utf8")).toBe("accepted\n")

      const badMode = yield* Effect.promise(() => peer.request("session/set_mode", { sessionId, modeId: "yolo" }).then(() => "", (e: Error) => e.message))
      expect(badMode).toContain("unknown mode yolo")
      const badModel = yield* Effect.promise(() =>
        peer.request("session/set_config_option", { sessionId, configId: "model", value: "gpt-nope" }).then(() => "", (e: Error) => e.message)
      )
      expect(badModel).toContain("unknown model gpt-nope")
      const badCwd = yield* Effect.promise(() => peer.request("session/new", { cwd: "/", mcpServers: [] }).then(() => "", (e: Error) => e.message))
      expect(badCwd).toContain(`this agent serves ${work}`)
      agent.close()
      expect(yield* Effect.promise(() => agent.exited), agent.stderr()).toBe(0)
      const log = Cli.readLog(Cli.sessionLogs(home)[0]!)
      expect(Cli.enclosureProblems(log.events)).toEqual([])
    }), TIMEOUT)
})
