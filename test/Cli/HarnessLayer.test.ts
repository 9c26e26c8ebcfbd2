/**
 * The composition root under Effect 4's layer memoization: a layer already built by an enclosing
 * `Effect.provide` is reused by a nested one, so a harness provided inside another (a second agent
 * setup, a test harness around the CLI's) must still get its own stateful services.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as HarnessLayer from "../../src/Cli/HarnessLayer.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as Agent from "../../src/Loop/Agent.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import * as SessionStore from "../../src/Session/SessionStore.js"

const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix)))),
    (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  )

const setupAt = (cwd: string, storePath: string): HarnessLayer.Setup => ({
  choice: { _tag: "Scripted", scriptFile: undefined, model: "demo" },
  cwd,
  store: "jsonl",
  storePath,
  approval: "deny",
  sandbox: { enabled: false, allowNetwork: false }
})

const services = Effect.all([SessionStore.SessionStore, Llm.Llm, ToolRuntime.ToolRuntime, Agent.AgentFactory])

describe("HarnessLayer (Effect 4 layer memoization)", () => {
  it.effect("a harness provided inside another shares none of its stateful services", () =>
    Effect.gen(function*() {
      const home = yield* tempDir("harness-layer-home-")
      const a = yield* tempDir("harness-layer-a-")
      const b = yield* tempDir("harness-layer-b-")
      const [outer, inner] = yield* Effect.gen(function*() {
        const outer = yield* services
        const inner = yield* services.pipe(Effect.provide(HarnessLayer.layer(setupAt(b, NodePath.join(b, "sessions")))))
        return [outer, inner] as const
      }).pipe(
        Effect.provide(HarnessLayer.layer(setupAt(a, NodePath.join(a, "sessions")))),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { HOME: home, EFFECT_HARNESS_HOME: home } }))
      )
      outer.forEach((service, i) => expect(inner[i]).not.toBe(service))
    }))
})
