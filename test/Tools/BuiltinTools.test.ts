import * as NodeServices from "@effect/platform-node/NodeServices"
import * as FileSystem from "effect/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Approval from "../../src/Policy/Approval.js"
import * as BuiltinTools from "../../src/Tools/BuiltinTools.js"
import * as ProcessGroup from "../../src/Tools/internal/ProcessGroup.js"
import * as Tool from "../../src/Loop/Tool.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"

const { Workspace } = BuiltinTools

type Result = Extract<SessionEvent, { type: "tool/result" }>

const results = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<Result> =>
  events.flatMap((e) => (e.type === "tool/result" ? [e] : []))

const resultText = (r: Result | undefined): string => {
  const b = r?.data.content[0]
  return b !== undefined && b.type === "text" ? b.text : ""
}

/** A kit with the built-in tools in a temp workspace; `setup` adds policy layers. */
const kit = (
  root: string,
  script: Scripted.Script,
  setup: Layer.Layer<never, never, ToolRuntime.ToolRuntime> = Layer.empty
) => {
  const env = Layer.provideMerge(Workspace.layer(root), NodeServices.layer)
  const base = TestKit.layer({
    script,
    tools: BuiltinTools.tools({
      bash: { ...BuiltinTools.Bash.defaultOptions, killGraceMs: 200, sandbox: { enabled: false, allowNetwork: false } }
    })
  })
  return Layer.provideMerge(setup, Layer.provideMerge(base, env))
}

const tempRoot = Effect.flatMap(FileSystem.FileSystem, (fs) =>
  Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "harness-tools-" }), (d) => fs.realPath(d)))

const args = (o: object) => JSON.stringify(o)

describe("built-in tools as loop tools", () => {
  it("schemas carry descriptions; read-only tools are concurrency-safe, mutating ones are not", () => {
    const tools = BuiltinTools.tools()
    expect(tools.map((t) => t.name)).toEqual(BuiltinTools.names)
    for (const tool of tools) {
      const schema = Tool.toSchema(tool)
      expect(schema.description.length).toBeGreaterThan(20)
      const props = (schema.parameters as { properties: Record<string, { description?: string }> }).properties
      for (const [key, prop] of Object.entries(props)) {
        expect(prop.description, `${tool.name}.${key}`).toBeTypeOf("string")
      }
      expect(JSON.stringify(schema.parameters)).not.toContain("$ref")
    }
    const safe = tools.filter((t) => t.isConcurrencySafe?.({ file_path: "a", pattern: "x" }) === true).map((t) => t.name)
    expect(safe.sort()).toEqual(["glob", "grep", "ls", "read"])
    expect([...Approval.MUTATING_TOOLS].sort()).toEqual(["bash", "edit", "write"])
  })

  it.live("failures become readable error results with a coded error, never crashes", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* a.prompt("go")
        const rs = results(yield* a.events)
        expect(rs).toHaveLength(3)
        expect(resultText(rs[0])).toBe("Error: no such file or directory: missing.txt")
        expect(rs[0]?.data).toMatchObject({ isError: true, error: { name: "BuiltinToolError", code: "NOT_FOUND" } })
        expect(resultText(rs[1])).toContain("Error: access denied")
        expect(rs[1]?.data).toMatchObject({ isError: true, error: { code: "OUTSIDE_WORKSPACE" } })
        expect(rs[2]?.data).toMatchObject({ isError: true, error: { code: "INVALID_ARGS" } })
        expect(yield* a.turnEnds).toEqual([{ kind: "completed" }])
      }).pipe(Effect.provide(kit(root, [
        [
          Scripted.toolCall("c1", "read", args({ file_path: "missing.txt" })),
          Scripted.toolCall("c2", "ls", args({ path: "../.." })),
          Scripted.toolCall("c3", "read", args({ path: "wrong-key" })),
          Scripted.finish("tool-calls")
        ],
        Scripted.text("done")
      ])))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("approval 'deny' (non-interactive): mutating calls denied with a clear reason, read-only calls run", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempRoot
      yield* fs.writeFileString(`${root}/a.txt`, "hello\n")
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* a.prompt("go")
        const rs = results(yield* a.events)
        expect(resultText(rs[0])).toBe("     1\thello")
        expect(rs[1]?.data.isError).toBe(true)
        expect(resultText(rs[1])).toBe(`Error: ${Approval.nonInteractiveReason("write")}`)
        expect(resultText(rs[2])).toContain("--yes")
        expect(yield* fs.exists(`${root}/new.txt`)).toBe(false)
        expect(yield* fs.exists(`${root}/touched`)).toBe(false)
      }).pipe(Effect.provide(kit(root, [
        Scripted.call("c1", "read", args({ file_path: "a.txt" })),
        Scripted.call("c2", "write", args({ file_path: "new.txt", content: "x" })),
        Scripted.call("c3", "bash", args({ command: "touch touched" })),
        Scripted.text("done")
      ], Layer.effectDiscard(Approval.register(Approval.modeFor({ yes: false, interactive: false }))))))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("approval 'ask' puts mutating calls to the prompt (yes runs, no rejects); 'auto' runs without asking", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempRoot
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      const prompt: Approval.Prompt = (question) =>
        Effect.as(Ref.update(asked, (qs) => [...qs, question]), !question.includes("no.txt"))
      const script: Scripted.Script = [
        Scripted.call("c1", "write", args({ file_path: "yes.txt", content: "y" })),
        Scripted.call("c2", "write", args({ file_path: "no.txt", content: "n" })),
        Scripted.call("c3", "ls", args({})),
        Scripted.text("done")
      ]
      const askLayer = Layer.effectDiscard(Approval.register("ask"))
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* a.prompt("go")
        const rs = results(yield* a.events)
        expect(resultText(rs[0])).toBe("Created yes.txt (1 bytes, 1 line)")
        expect(resultText(rs[1])).toBe("Error: the user rejected the tool call")
        expect(yield* Ref.get(asked)).toEqual([
          "Allow write?\n  │ file: yes.txt (1 bytes)\n  │ y\n[y] yes once  [n] no",
          "Allow write?\n  │ file: no.txt (1 bytes)\n  │ n\n[y] yes once  [n] no"
        ])
        expect(yield* fs.exists(`${root}/no.txt`)).toBe(false)
      }).pipe(
        Effect.provide(
          Layer.provideMerge(
            askLayer,
            Layer.provideMerge(
              TestKit.layer({ script, tools: BuiltinTools.tools() }).pipe(Layer.provide(Approval.layer(prompt))),
              Layer.provideMerge(Workspace.layer(root), NodeServices.layer)
            )
          )
        )
      )

      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* a.prompt("go")
        expect(resultText(results(yield* a.events)[0])).toBe("Created auto.txt (1 bytes, 1 line)")
      }).pipe(Effect.provide(kit(root, [
        Scripted.call("c1", "write", args({ file_path: "auto.txt", content: "a" })),
        Scripted.text("done")
      ], Layer.effectDiscard(Approval.register(Approval.modeFor({ yes: true, interactive: false }))))))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("cancelling the agent during bash kills the whole process group (T-13, DEC-1)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempRoot
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* a.agent.send([{ type: "text", text: "run it" }])
        let pids: Array<number> = []
        for (let i = 0; i < 400 && pids.length < 3; i++) {
          yield* Effect.sleep(25)
          const text = yield* fs.readFileString(`${root}/pids`).pipe(Effect.orElseSucceed(() => ""))
          pids = [...text.matchAll(/PID=(\d+)/g)].map((m) => Number(m[1]))
        }
        expect(pids).toHaveLength(3)
        for (const pid of pids) expect(ProcessGroup.isProcessAlive(pid)).toBe(true)
        yield* a.agent.cancel("user pressed Ctrl-C")
        yield* a.agent.whenIdle
        for (const pid of pids) expect(ProcessGroup.isProcessAlive(pid)).toBe(false)
        const rs = results(yield* a.events)
        expect(rs).toHaveLength(1)
        expect(rs[0]?.data.isError).toBe(true)
        expect((yield* a.turnEnds)[0]).toMatchObject({ kind: "aborted" })
      }).pipe(Effect.provide(kit(root, [
        Scripted.call("c1", "bash", args({
          command: "echo PID=$$ > pids; sleep 1000 & echo PID=$! >> pids; (sleep 1000 & echo PID=$! >> pids; wait) & wait"
        }))
      ])))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("[issue 16] cancelling the agent during a catastrophic grep ends the turn within 1 s", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* tempRoot
      yield* fs.writeFileString(`${root}/evil.txt`, `${"a".repeat(40)}!\n`)
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: root } })
        yield* a.agent.send([{ type: "text", text: "search" }])
        // wait until the call is dispatched, then give the matcher time to get stuck
        for (let i = 0; i < 400; i++) {
          if ((yield* a.events).some((e) => e.type === "tool/call")) break
          yield* Effect.sleep(25)
        }
        yield* Effect.sleep(500)
        const started = Date.now()
        yield* a.agent.cancel("user pressed Ctrl-C")
        yield* a.agent.whenIdle
        const elapsed = Date.now() - started
        expect(elapsed).toBeLessThan(1000)
        expect((yield* a.turnEnds)[0]).toMatchObject({ kind: "aborted" })
      }).pipe(Effect.provide(kit(root, [Scripted.call("c1", "grep", args({ pattern: "^(a+)+$" }))])))
    }).pipe(Effect.provide(NodeServices.layer)))
})
