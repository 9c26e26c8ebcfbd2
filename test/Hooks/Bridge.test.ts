// vitest project: integration
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as ProcessGroup from "../../src/Tools/internal/ProcessGroup.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Reconstruction from "../support/Reconstruction.js"
import { type HookConfig, layer, ofType, resultTexts, script, settingsOf, tempRoot } from "./BridgeKit.js"

const args = (v: unknown) => JSON.stringify(v)

/** One bash call (`touch ran`), then "done"; PreToolUse hooks from `pre`. */
const runRow = (root: string, pre: HookConfig["PreToolUse"], notices: Array<string>) =>
  Effect.gen(function*() {
    const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
    yield* t.prompt("go")
    return { events: yield* t.events, ends: yield* t.turnEnds }
  }).pipe(
    Effect.provide(layer(root, [Scripted.call("c1", "bash", args({ command: "touch ran" })), Scripted.text("done")], settingsOf({ PreToolUse: pre }), notices))
  )

describe("Bridge (HB-3..HB-11)", () => {
  it.live("AC-118 [HB-6 HB-7] conformance table, one real script per row", () =>
    Effect.gen(function*() {
      const dir = tempRoot()
      const rows: Array<{
        readonly name: string
        readonly body: string
        readonly onFailure?: "block"
        readonly timeout?: number
        readonly ran: boolean
        readonly decision: string
        readonly result?: string
        readonly warned?: string
        readonly end?: string
      }> = [
        { name: "exit0-empty.sh", body: "#!/bin/bash\ncat >/dev/null\necho '{}'\n", ran: true, decision: "none" },
        {
          name: "deny.mjs",
          body: "#!/usr/bin/env node\nlet s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const i=JSON.parse(s);" +
            "console.log(JSON.stringify({hookSpecificOutput:{hookEventName:'PreToolUse',permissionDecision:'deny',permissionDecisionReason:'no '+i.tool_input.command}}))})\n",
          ran: false,
          decision: "deny",
          result: "Error: no touch ran"
        },
        {
          name: "mismatch.mjs",
          body: "#!/usr/bin/env node\nconsole.log(JSON.stringify({hookSpecificOutput:{hookEventName:'PostToolUse',permissionDecision:'deny'}}))\n",
          ran: true,
          decision: "none",
          warned: "ignored during PreToolUse"
        },
        { name: "exit2.sh", body: "#!/bin/bash\necho '{\"decision\":\"approve\"}'\necho 'blocked by policy' >&2\nexit 2\n", ran: false, decision: "deny", result: "Error: blocked by policy" },
        { name: "exit1.sh", body: "#!/bin/bash\necho 'oops' >&2\nexit 1\n", ran: true, decision: "error", warned: "exited with 1: oops" },
        { name: "slow.sh", body: "#!/bin/bash\nsleep 30 &\necho $! > \"$0.pid\"\nwait\n", timeout: 1, ran: true, decision: "error", warned: "timed out" },
        { name: "malformed.sh", body: "#!/bin/bash\necho '{oops'\n", ran: true, decision: "error", warned: "malformed JSON" },
        { name: "crash.sh", body: "#!/bin/bash\nkill -9 $$\n", onFailure: "block", ran: false, decision: "deny", result: "fails closed", warned: "crashed" },
        {
          name: "stop.mjs",
          body: "#!/usr/bin/env node\nconsole.log(JSON.stringify({continue:false,stopReason:'enough for today'}))\n",
          ran: false,
          decision: "none",
          end: "hook-stopped"
        }
      ]
      for (const row of rows) {
        const root = tempRoot()
        const notices: Array<string> = []
        const command = script(dir, row.name, row.body)
        const { ends, events } = yield* runRow(root, [{
          matcher: "Bash",
          hooks: [{
            type: "command",
            command,
            ...(row.timeout === undefined ? {} : { timeout: row.timeout }),
            ...(row.onFailure === undefined ? {} : { onFailure: row.onFailure })
          }]
        }], notices)
        expect(existsSync(join(root, "ran")), row.name).toBe(row.ran)
        const results = ofType(events, "hook/result")
        expect(results.map((r) => r.data.decision), row.name).toEqual([row.decision])
        if (row.result !== undefined) expect(resultTexts(events)[0], row.name).toContain(row.result)
        if (row.warned !== undefined) expect(notices.join("\n"), row.name).toContain(row.warned)
        else expect(notices, row.name).toEqual([])
        expect(ends.at(-1)?.kind, row.name).toBe(row.end ?? "completed")
        if (row.end === "hook-stopped") expect(ends.at(-1)).toEqual({ kind: "hook-stopped", reason: "enough for today" })
        if (row.name === "slow.sh") {
          // the hook's whole process group was killed, the background sleep included
          const pid = Number(readFileSync(`${command}.pid`, "utf8"))
          expect(yield* ProcessGroup.awaitGone(pid, 5000)).toBe(true)
          expect(results[0]?.data.durationMs).toBeLessThan(20_000)
        }
      }
    }), 60_000)

  it.live("AC-120 [HB-8] three 1 s handlers run concurrently; log order = configuration order; merge is most restrictive", () =>
    Effect.gen(function*() {
      const dir = tempRoot()
      const root = tempRoot()
      const notices: Array<string> = []
      const h = (name: string, sleep: string, out: string) =>
        ({ type: "command" as const, command: script(dir, name, `#!/bin/bash\ncat >/dev/null\nsleep ${sleep}\necho '${out}'\n`) })
      const decision = (d: string, r?: string) =>
        JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: d, ...(r === undefined ? {} : { permissionDecisionReason: r }) } })
      const { events } = yield* runRow(root, [
        { matcher: "Bash", hooks: [h("a.sh", "1", decision("allow")), h("b.sh", "1", decision("ask", "r1"))] },
        { matcher: "*", hooks: [h("c.sh", "1", decision("deny", "r2")), h("d.sh", "0.1", decision("deny", "r3"))] }
      ], notices)
      const invoked = ofType(events, "hook/invoked")
      const results = ofType(events, "hook/result")
      expect(invoked.map((e) => e.data.handlerId)).toEqual([
        "settings.json#PreToolUse[0].hooks[0]",
        "settings.json#PreToolUse[0].hooks[1]",
        "settings.json#PreToolUse[1].hooks[0]",
        "settings.json#PreToolUse[1].hooks[1]"
      ])
      expect(results.map((e) => e.data.handlerId)).toEqual(invoked.map((e) => e.data.handlerId))
      expect(results.map((e) => e.data.decision)).toEqual(["allow", "ask", "deny", "deny"])
      const decided = ofType(events, "hook/decision")[0]!
      expect(decided.data).toMatchObject({ decision: "deny", reason: "r2\n\nr3" })
      expect(decided.time - invoked[0]!.time).toBeLessThan(2000)
      expect(resultTexts(events)[0]).toBe("Error: r2\n\nr3")
      expect(existsSync(join(root, "ran"))).toBe(false)
    }), 30_000)

  it.live("AC-121 [HB-9] updatedInput rewriting rm -rf / to echo blocked runs the echo; a schema-breaking one runs nothing; reconstruction holds", () =>
    Effect.gen(function*() {
      const dir = tempRoot()
      const root = tempRoot()
      const notices: Array<string> = []
      const rewrite = script(dir, "rewrite.mjs",
        "#!/usr/bin/env node\nlet s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const i=JSON.parse(s);" +
          "const c=i.tool_input.command;const u=c==='rm -rf /'?{command:'echo blocked'}:{command:42};" +
          "console.log(JSON.stringify({hookSpecificOutput:{hookEventName:'PreToolUse',permissionDecision:'allow',updatedInput:u}}))})\n")
      yield* Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* t.prompt("go")
        const events = yield* t.events
        const texts = resultTexts(events)
        expect(texts[0]).toContain("blocked\n[exit code: 0]")
        expect(texts[0]).toContain("rewrote this call's input to {\"command\":\"echo blocked\"}")
        expect(texts[1]).toContain("Error: invalid arguments: \"command\" must be a string")
        expect(existsSync(join(root, "x"))).toBe(false)
        const updated = ofType(events, "tool/input-updated")
        expect(updated.map((e) => [e.data.original, e.data.updated, e.data.handlerId])).toEqual([
          [{ command: "rm -rf /" }, { command: "echo blocked" }, "settings.json#PreToolUse[0].hooks[0]"],
          [{ command: "touch x" }, { command: 42 }, "settings.json#PreToolUse[0].hooks[0]"]
        ])
        yield* Reconstruction.check(t)
      }).pipe(Effect.provide(layer(root, [
        Scripted.call("c1", "bash", args({ command: "rm -rf /" })),
        Scripted.call("c2", "bash", args({ command: "touch x" })),
        Scripted.text("done")
      ], settingsOf({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: rewrite }] }] }), notices)))
    }), 30_000)

  it.live("AC-122 [HB-10] a Stop hook that always exits 2 ends the turn with hook-loop after 8 blocks", () =>
    Effect.gen(function*() {
      const dir = tempRoot()
      const root = tempRoot()
      const notices: Array<string> = []
      const stop = script(dir, "stop.sh", "#!/bin/bash\njq -r .stop_hook_active >> \"$0.log\" 2>/dev/null || cat > /dev/null\necho 'keep going' >&2\nexit 2\n")
      yield* Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* t.prompt("go")
        const events = yield* t.events
        expect(yield* t.turnEnds).toEqual([{ kind: "hook-loop", blocks: 8 }])
        expect(ofType(events, "hook/decision").map((e) => e.data.decision)).toEqual(Array(8).fill("block"))
        expect(ofType(events, "steering/message")).toHaveLength(7)
        expect(ofType(events, "assistant/message")).toHaveLength(8)
        if (existsSync(`${stop}.log`)) {
          expect(readFileSync(`${stop}.log`, "utf8").trim().split("\n")).toEqual(["false", ...Array(7).fill("true")])
        }
        yield* Reconstruction.check(t)
      }).pipe(Effect.provide(layer(root, Array.from({ length: 10 }, (_, i) => Scripted.text(`answer ${i}`)),
        settingsOf({ Stop: [{ hooks: [{ type: "command", command: stop }] }] }), notices)))
    }), 60_000)

  it.live("HB-3 HB-9 SessionStart context, PostToolUse updatedToolOutput (logged, citing the original), PostToolUse block feedback", () =>
    Effect.gen(function*() {
      const dir = tempRoot()
      const root = tempRoot()
      const notices: Array<string> = []
      const start = script(dir, "start.sh", "#!/bin/bash\ncat > /dev/null\necho 'branch: main'\n")
      const post = script(dir, "post.mjs",
        "#!/usr/bin/env node\nlet s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const i=JSON.parse(s);" +
          "if(i.tool_input.command==='echo secret'){console.log(JSON.stringify({hookSpecificOutput:{hookEventName:'PostToolUse',updatedToolOutput:'[redacted]',additionalContext:'output was redacted'}}))}" +
          "else{process.stderr.write('lint failed');process.exit(2)}})\n")
      yield* Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* t.prompt("go")
        const events = yield* t.events
        const texts = resultTexts(events)
        expect(texts[0]).toBe("[redacted]")
        expect(texts[1]).toBe("PostToolUse hook feedback:\nlint failed")
        const updated = ofType(events, "tool/output-updated")
        expect(updated.map((e) => [e.data.callId, e.data.updated, e.data.handlerId])).toEqual([["c1", "[redacted]", "settings.json#PostToolUse[0].hooks[0]"]])
        expect(JSON.stringify(updated[0]?.data.original)).toContain("secret")
        const contexts = ofType(events, "context/message").map((e) => JSON.stringify(e.data.content))
        expect(contexts.some((c) => c.includes("branch: main"))).toBe(true)
        expect(contexts.some((c) => c.includes("output was redacted"))).toBe(true)
        expect(ofType(events, "hook/invoked").map((e) => e.data.event)).toEqual(["PostToolUse", "PostToolUse"])
        yield* Reconstruction.check(t)
      }).pipe(Effect.provide(layer(root, [
        Scripted.call("c1", "bash", args({ command: "echo secret" })),
        Scripted.call("c2", "bash", args({ command: "echo other" })),
        Scripted.text("done")
      ], settingsOf({
        SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: start }] }],
        PostToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: post }] }]
      }), notices)))
    }), 30_000)

  it.live("HB-11 cancelling the turn kills a running hook's whole process group", () =>
    Effect.gen(function*() {
      const dir = tempRoot()
      const root = tempRoot()
      const notices: Array<string> = []
      const hang = script(dir, "hang.sh", "#!/bin/bash\nsleep 60 &\necho $! > \"$0.pid\"\nwait\n")
      yield* Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* t.agent.send([{ type: "text", text: "go" }])
        while (!existsSync(`${hang}.pid`) || readFileSync(`${hang}.pid`, "utf8").trim() === "") yield* Effect.sleep(20)
        yield* t.agent.cancel("stop")
        yield* t.agent.whenIdle
        const pid = Number(readFileSync(`${hang}.pid`, "utf8"))
        expect(yield* ProcessGroup.awaitGone(pid, 5000)).toBe(true)
        expect((yield* t.turnEnds)[0]?.kind).toBe("aborted")
        expect(existsSync(join(root, "ran"))).toBe(false)
      }).pipe(Effect.provide(layer(root, [Scripted.call("c1", "bash", args({ command: "touch ran" })), Scripted.text("done")],
        settingsOf({ PreToolUse: [{ hooks: [{ type: "command", command: hang }] }] }), notices)))
    }), 30_000)

  it.live("[issue 26] a workspace's hooks get the allowlisted environment (no GITHUB_TOKEN); the user's own keep the harness's", () =>
    Effect.gen(function*() {
      const root = tempRoot()
      const before = process.env["GITHUB_TOKEN"]
      process.env["GITHUB_TOKEN"] = "ghp_bridgeUnitToken42"
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (before === undefined) delete process.env["GITHUB_TOKEN"]
          else process.env["GITHUB_TOKEN"] = before
        })
      )
      const base = settingsOf({
        UserPromptSubmit: [{ hooks: [{ type: "command", command: `env > ${join(root, "user.env")}` }] }],
        Stop: [{ hooks: [{ type: "command", command: `env > ${join(root, "project.env")}` }] }]
      })
      const settings = { ...base, hooks: base.hooks.map((h) => (h.event === "Stop" ? { ...h, project: true } : h)) }
      yield* Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* t.prompt("go")
      }).pipe(Effect.provide(layer(root, [Scripted.text("done")], settings, [])))
      expect(readFileSync(join(root, "user.env"), "utf8")).toContain("GITHUB_TOKEN=ghp_bridgeUnitToken42")
      const project = readFileSync(join(root, "project.env"), "utf8")
      expect(project).not.toContain("GITHUB_TOKEN")
      expect(project).toContain(`CLAUDE_PROJECT_DIR=${root}`)
    }))

  it.live("[DEC-16] tool-event hooks get the call's idempotency key as HARNESS_IDEMPOTENCY_KEY; other events do not", () =>
    Effect.gen(function*() {
      const root = tempRoot()
      const settings = settingsOf({
        PreToolUse: [{ hooks: [{ type: "command", command: `echo "pre=$HARNESS_IDEMPOTENCY_KEY" >> ${join(root, "keys")}` }] }],
        PostToolUse: [{ hooks: [{ type: "command", command: `echo "post=$HARNESS_IDEMPOTENCY_KEY" >> ${join(root, "keys")}` }] }],
        Stop: [{ hooks: [{ type: "command", command: `echo "stop=\${HARNESS_IDEMPOTENCY_KEY-unset}" >> ${join(root, "keys")}` }] }]
      })
      const id = yield* Effect.gen(function*() {
        const t = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* t.prompt("go")
        return t.agent.id
      }).pipe(Effect.provide(layer(root, [Scripted.call("c1", "bash", args({ command: "true" })), Scripted.text("done")], settings, [])))
      expect(readFileSync(join(root, "keys"), "utf8").split("\n").filter((l) => l !== "")).toEqual([
        `pre=${id}:1:1:c1`,
        `post=${id}:1:1:c1`,
        "stop=unset"
      ])
    }))
})
