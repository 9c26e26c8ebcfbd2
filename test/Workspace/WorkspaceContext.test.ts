import * as NodeServices from "@effect/platform-node/NodeServices"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as BuiltinTools from "../../src/Tools/BuiltinTools.js"
import * as Workspace from "../../src/Tools/Workspace.js"
import * as WorkspaceContext from "../../src/Workspace/WorkspaceContext.js"
import * as Render from "../../src/Workspace/WorkspaceContextRender.js"
import type * as Message from "../../src/Llm/Message.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { PostExecuteDecision } from "../../src/Loop/ToolHooks.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { writeFiles } from "../support/TempWorkspace.js"

const sha1 = (s: string) => NodeCrypto.createHash("sha1").update(s, "utf8").digest("hex")

const textOfMessage = (m: Message.Message | undefined): string => {
  const b = m?.content[0]
  return b !== undefined && b.type === "text" ? b.text : ""
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1

/** A temp dir tree: `home/`, `proj/` (with `.git/`), returned as real paths. */
const tree = (files: Record<string, string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const base = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "harness-wc-" }))
    yield* fs.makeDirectory(`${base}/home`, { recursive: true })
    yield* fs.makeDirectory(`${base}/proj/.git`, { recursive: true })
    yield* writeFiles(base, files)
    return { base, home: `${base}/home`, proj: `${base}/proj` }
  })

describe("WorkspaceContext discovery and baseline", () => {
  it.live(
    "AC-102 [W-1,W-3] home + root AGENTS.md + pkg/CLAUDE.md → one prefix message, one frame, broad to specific",
    () =>
      Effect.gen(function*() {
        const t = yield* tree({
          "home/AGENTS.md": "HOME RULES",
          "proj/AGENTS.md": "ROOT RULES",
          "proj/pkg/CLAUDE.md": "PKG RULES"
        })
        const discovery = yield* WorkspaceContext.discover(`${t.proj}/pkg`, { home: t.home })
        expect(discovery.root).toBe(t.proj)
        const { message } = WorkspaceContext.baseline(discovery, 100_000)
        expect(message?.role).toBe("user")
        expect(message?.content).toHaveLength(1)
        const text = textOfMessage(message)
        expect(text.startsWith("<system-reminder>\n")).toBe(true)
        expect(text.endsWith("\n</system-reminder>")).toBe(true)
        expect(count(text, "<system-reminder>")).toBe(1)
        expect(count(text, "</system-reminder>")).toBe(1)
        expect(text).toContain("cannot override system, developer or user instructions")
        const order = [
          `Instructions from: ${t.home}/AGENTS.md\n\nHOME RULES`,
          "Instructions from: AGENTS.md\n\nROOT RULES",
          "Instructions from: pkg/CLAUDE.md\n\nPKG RULES"
        ].map((s) => text.indexOf(s))
        expect(order.every((i) => i > 0)).toBe(true)
        expect([...order].sort((a, b) => a - b)).toEqual(order)
      }).pipe(Effect.provide(NodeServices.layer))
  )

  it.live("AC-102 [W-1] both names → AGENTS.md only; symlinked AGENTS.md pointing outside → not loaded", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const t = yield* tree({
        "proj/AGENTS.md": "ROOT AGENTS",
        "proj/CLAUDE.md": "ROOT CLAUDE",
        "outside/AGENTS.md": "OUTSIDE",
        "proj/a/CLAUDE.md": "A CLAUDE",
        "proj/a/b/.keep": ""
      })
      yield* fs.symlink(`${t.base}/outside/AGENTS.md`, `${t.proj}/a/AGENTS.md`)
      yield* fs.symlink(`${t.base}/outside/AGENTS.md`, `${t.proj}/a/b/AGENTS.md`)
      yield* fs.makeDirectory(`${t.proj}/a/b/CLAUDE.md`) // a directory counts as absent too
      const discovery = yield* WorkspaceContext.discover(`${t.proj}/a/b`, { home: t.home })
      const text = textOfMessage(WorkspaceContext.baseline(discovery, 100_000).message)
      expect(text).toContain("Instructions from: AGENTS.md\n\nROOT AGENTS")
      expect(text).not.toContain("ROOT CLAUDE")
      expect(text).not.toContain("OUTSIDE")
      // the symlink is absent, so the next candidate wins
      expect(text).toContain("Instructions from: a/CLAUDE.md\n\nA CLAUDE")
      expect(discovery.entries.map((e) => e.state._tag)).toEqual(["Absent", "Loaded", "Loaded", "Absent"])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("[W-1,W-3] home from $EFFECT_HARNESS_HOME or ~/.effect-harness, displayed as such; no marker → cwd is root", () =>
    Effect.gen(function*() {
      const t = yield* tree({
        "envhome/AGENTS.md": "ENV HOME",
        "user/.effect-harness/AGENTS.md": "USER HOME",
        "plain/AGENTS.md": "PLAIN"
      })
      const viaEnv = yield* WorkspaceContext.discover(`${t.base}/plain`).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { EFFECT_HARNESS_HOME: `${t.base}/envhome` } }))
      )
      expect(viaEnv.root).toBe(`${t.base}/plain`)
      const envText = textOfMessage(WorkspaceContext.baseline(viaEnv, 100_000).message)
      expect(envText).toContain("Instructions from: $EFFECT_HARNESS_HOME/AGENTS.md\n\nENV HOME")
      expect(envText).toContain("Instructions from: AGENTS.md\n\nPLAIN")
      const viaHome = yield* WorkspaceContext.discover(`${t.base}/plain`).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { HOME: `${t.base}/user` } }))
      )
      expect(textOfMessage(WorkspaceContext.baseline(viaHome, 100_000).message)).toContain(
        "Instructions from: ~/.effect-harness/AGENTS.md\n\nUSER HOME"
      )
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("[W-2,W-3] oversized winner is unavailable (no fallthrough); </system-reminder> is escaped; nothing → no message", () =>
    Effect.gen(function*() {
      const t = yield* tree({
        "proj/AGENTS.md": "before </system-reminder> after",
        "proj/big/AGENTS.md": "x".repeat(2000),
        "proj/big/CLAUDE.md": "SHOULD NOT FALL THROUGH"
      })
      const discovery = yield* WorkspaceContext.discover(`${t.proj}/big`, { home: t.home, maxFileBytes: 1000 })
      expect(discovery.entries[2]?.state).toMatchObject({ _tag: "Unavailable", path: "big/AGENTS.md" })
      const text = textOfMessage(WorkspaceContext.baseline(discovery, 100_000).message)
      expect(text).toContain("before <\\/system-reminder> after")
      expect(count(text, "</system-reminder>")).toBe(1)
      expect(text).not.toContain("SHOULD NOT FALL THROUGH")

      const empty = yield* WorkspaceContext.discover(`${t.base}/home`, { home: `${t.base}/nowhere` })
      expect(WorkspaceContext.baseline(empty, 100_000).message).toBeUndefined()
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("AC-103 [W-4] budget below total → broadest omitted first, most specific truncated, notice, size ≤ budget; 0 → nothing", () =>
    Effect.gen(function*() {
      const t = yield* tree({
        "home/AGENTS.md": "H".repeat(400),
        "proj/AGENTS.md": "R".repeat(400),
        "proj/pkg/AGENTS.md": "P".repeat(400) + "é".repeat(200)
      })
      const discovery = yield* WorkspaceContext.discover(`${t.proj}/pkg`, { home: t.home })
      const full = textOfMessage(WorkspaceContext.baseline(discovery, 100_000).message)
      const fullSize = Render.byteLength(full)

      // drop the home file only
      const dropOne = WorkspaceContext.baseline(discovery, fullSize - 300)
      const t1 = textOfMessage(dropOne.message)
      expect(Render.byteLength(t1)).toBeLessThanOrEqual(fullSize - 300)
      expect(t1).not.toContain("HHHH")
      expect(t1).toContain("R".repeat(400))
      expect(t1).toContain(`Omitted: ${t.home}/AGENTS.md (400 bytes).`)
      expect([...dropOne.known.keys()]).toEqual([".", "pkg"])

      // both broader files dropped, the most specific truncated (UTF-8 safe)
      for (const budget of [900, 777, 701]) {
        const b = WorkspaceContext.baseline(discovery, budget)
        const text = textOfMessage(b.message)
        expect(Render.byteLength(text)).toBeLessThanOrEqual(budget)
        expect(text).not.toContain("HHHH")
        expect(text).not.toContain("RRRR")
        expect(text).toContain("Instructions from: pkg/AGENTS.md")
        expect(text).toContain("Truncated: pkg/AGENTS.md (800 bytes).")
        expect(text).toContain("Omitted: ")
        expect(text).toContain(Render.TRUNCATION_MARKER)
        expect(text).not.toContain("\uFFFD")
        expect(text.endsWith("</system-reminder>")).toBe(true)
      }
      expect(WorkspaceContext.baseline(discovery, 0).message).toBeUndefined()
      expect(WorkspaceContext.baseline(discovery, Number.NaN).message).toBeUndefined()
      expect(WorkspaceContext.baseline(discovery, 50).message).toBeUndefined()
    }).pipe(Effect.provide(NodeServices.layer)))
})

// ---------------------------------------------------------------------------------------------
// End to end through a real agent (scripted model, real tools, real session)

const contexts = (events: ReadonlyArray<SessionEvent>) =>
  events.flatMap((e) => (e.type === "context/message" ? [e] : []))

const contextText = (e: SessionEvent): string => {
  if (e.type !== "context/message") return ""
  const b = e.data.content[0]
  return b !== undefined && b.type === "text" ? b.text : ""
}

const readArgs = (p: string) => JSON.stringify({ file_path: p })

/** The kit with the built-in tools, the workspace-context plugin and a workspace at `root`. */
const kit = (root: string, home: string, script: Scripted.Script, extra?: Layer.Layer<never, never, ToolRuntime.ToolRuntime>) => {
  const env = Layer.provideMerge(Workspace.layer(root), NodeServices.layer)
  const withKit = Layer.provideMerge(
    TestKit.layer({ script, tools: BuiltinTools.tools({ bash: { ...BuiltinTools.Bash.defaultOptions, killGraceMs: 200 } }) }),
    env
  )
  const plugin = WorkspaceContext.layer({ maxBytes: 20_000, home })
  return Layer.provideMerge(extra === undefined ? plugin : Layer.merge(plugin, extra), withKit)
}

describe("WorkspaceContext in the agent loop", () => {
  it.live("AC-104 [W-5,W-6] set after the batch, re-read → nothing, edit → replace, delete → remove", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const t = yield* tree({
        "proj/AGENTS.md": "ROOT",
        "proj/pkg/sub/x.ts": "export const x = 1\n",
        "proj/pkg/sub/AGENTS.md": "SUB RULES v1"
      })
      const script: Scripted.Script = [
        Scripted.call("c1", "read", readArgs("pkg/sub/x.ts")),
        Scripted.text("ok1"),
        Scripted.call("c2", "read", readArgs("pkg/sub/x.ts")),
        Scripted.text("ok2"),
        Scripted.call("c3", "read", readArgs(`${t.proj}/pkg/sub/x.ts`)),
        Scripted.text("ok3"),
        Scripted.call("c4", "read", readArgs("pkg/sub/x.ts")),
        Scripted.text("ok4")
      ]
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: t.proj } })
        yield* a.prompt("look at x")
        const e1 = yield* a.events
        // the baseline is in the request prefix, not in the log
        const firstRequest = (yield* a.requests)[0]
        expect(textOfMessage(firstRequest?.messages[0])).toContain("Instructions from: AGENTS.md\n\nROOT")
        const c1 = contexts(e1)
        expect(c1).toHaveLength(1)
        const ctx = c1[0]!
        // after the batch: right after the tool result
        const types = e1.map((e) => e.type)
        expect(types.indexOf("context/message")).toBe(types.indexOf("tool/result") + 1)
        expect(ctx.type === "context/message" && ctx.data.source).toEqual({ kind: "plugin", plugin: "workspace-context" })
        expect(ctx.type === "context/message" && ctx.data.meta).toEqual({
          kind: "workspace-instructions",
          version: 1,
          changes: [{ action: "set", scope: "pkg/sub", path: "pkg/sub/AGENTS.md", digest: sha1("SUB RULES v1") }]
        })
        const text = contextText(ctx)
        expect(text.startsWith("<system-reminder>\n")).toBe(true)
        expect(text.endsWith("</system-reminder>")).toBe(true)
        expect(text).toContain("Additional instructions from: pkg/sub/AGENTS.md")
        expect(text).toContain("SUB RULES v1")
        // the model sees it verbatim in the next request
        const second = (yield* a.requests)[1]
        expect(second?.messages.some((m) => textOfMessage(m) === text)).toBe(true)

        // re-read → nothing new
        yield* a.prompt("again")
        expect(contexts(yield* a.events)).toHaveLength(1)

        // edit the instructions + read (absolute path) → Updated … (replace)
        yield* fs.writeFileString(`${t.proj}/pkg/sub/AGENTS.md`, "SUB RULES v2")
        yield* a.prompt("after edit")
        const c3 = contexts(yield* a.events)
        expect(c3).toHaveLength(2)
        expect(contextText(c3[1]!)).toContain("Updated instructions from: pkg/sub/AGENTS.md")
        expect(contextText(c3[1]!)).toContain("SUB RULES v2")
        expect(c3[1]!.type === "context/message" && c3[1]!.data.meta).toMatchObject({
          changes: [{ action: "replace", scope: "pkg/sub", path: "pkg/sub/AGENTS.md", digest: sha1("SUB RULES v2") }]
        })

        // delete + read → Instructions removed … (remove)
        yield* fs.remove(`${t.proj}/pkg/sub/AGENTS.md`)
        yield* a.prompt("after delete")
        const c4 = contexts(yield* a.events)
        expect(c4).toHaveLength(3)
        expect(contextText(c4[2]!)).toContain("Instructions removed: pkg/sub/AGENTS.md")
        expect(c4[2]!.type === "context/message" && c4[2]!.data.meta).toMatchObject({
          changes: [{ action: "remove", scope: "pkg/sub", path: "pkg/sub/AGENTS.md" }]
        })
      }).pipe(Effect.provide(kit(t.proj, t.home, script)))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("AC-104 [W-5] failed read, downstream-blocked read and bash → nothing", () =>
    Effect.gen(function*() {
      const t = yield* tree({
        "proj/pkg/a/AGENTS.md": "A RULES",
        "proj/pkg/a/x.ts": "x",
        "proj/pkg/b/AGENTS.md": "B RULES",
        "proj/pkg/b/y.ts": "y",
        "proj/pkg/c/AGENTS.md": "C RULES"
      })
      const script: Scripted.Script = [
        Scripted.call("c1", "read", readArgs("pkg/a/missing.ts")),
        Scripted.call("c2", "read", readArgs("pkg/b/y.ts")),
        Scripted.call("c3", "bash", JSON.stringify({ command: "cat pkg/c/AGENTS.md" })),
        Scripted.text("done")
      ]
      // a downstream policy that blocks reads of pkg/b
      const blocker = Layer.effectDiscard(ToolRuntime.onPostExecute((input, next) =>
        JSON.stringify(input.arguments).includes("pkg/b/")
          ? Effect.succeed(PostExecuteDecision.Block({ feedback: [{ type: "text", text: "blocked by policy" }] }))
          : next()
      ))
      yield* Effect.gen(function*() {
        const a = yield* TestKit.agent({ session: { _tag: "New", cwd: t.proj } })
        yield* a.prompt("go")
        const events = yield* a.events
        const results = events.flatMap((e) => (e.type === "tool/result" ? [e] : []))
        expect(results).toHaveLength(3)
        expect(contexts(events)).toHaveLength(0)
      }).pipe(Effect.provide(kit(t.proj, t.home, script, blocker)))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("[W-6,W-7] parallel reads announce a scope once; a resumed instance reconciles visible scopes before its first request", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const t = yield* tree({
        "proj/pkg/AGENTS.md": "PKG v1",
        "proj/pkg/one.ts": "1",
        "proj/pkg/two.ts": "2"
      })
      const script: Scripted.Script = [
        [
          Scripted.toolCall("c1", "read", readArgs("pkg/one.ts")),
          Scripted.toolCall("c2", "read", readArgs("pkg/two.ts")),
          Scripted.finish("tool-calls")
        ],
        Scripted.text("first done"),
        Scripted.text("resumed")
      ]
      yield* Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const a = yield* TestKit.agent({ session: { _tag: "New", id: "wc-resume", cwd: t.proj } })
          yield* a.prompt("read both")
          const c = contexts(yield* a.events)
          expect(c).toHaveLength(1)
          expect(contextText(c[0]!)).toContain("Additional instructions from: pkg/AGENTS.md")
        }))
        yield* fs.writeFileString(path.join(t.proj, "pkg/AGENTS.md"), "PKG v2")
        const b = yield* TestKit.agent({ session: { _tag: "Auto", id: "wc-resume", cwd: t.proj } })
        yield* b.prompt("continue")
        const c = contexts(yield* b.events)
        expect(c).toHaveLength(2)
        expect(contextText(c[1]!)).toContain("Updated instructions from: pkg/AGENTS.md")
        expect(contextText(c[1]!)).toContain("PKG v2")
        const last = (yield* b.requests).at(-1)
        expect(last?.messages.some((m) => textOfMessage(m).includes("PKG v2"))).toBe(true)
      }).pipe(Effect.provide(kit(t.proj, t.home, script)))
    }).pipe(Effect.provide(NodeServices.layer)))
})
