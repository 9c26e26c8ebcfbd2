import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Settings from "../../src/Workspace/Settings.js"

const put = (file: string, value: unknown) => {
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value))
}

const hook = (command: string) => ({ hooks: { Stop: [{ hooks: [{ type: "command", command }] }] } })

describe("Settings (HB-1)", () => {
  it.effect("HB-1: every file is merged in order; hooks add up; the later scalar wins", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "settings-"))
      const cwd = join(root, "ws")
      const home = join(root, "home")
      const userHome = join(root, "user")
      put(join(userHome, ".claude/settings.json"), { ...hook("user-claude"), permissions: { defaultMode: "plan" } })
      put(join(home, "settings.json"), hook("user-ours"))
      put(join(cwd, ".claude/settings.json"), { ...hook("proj-claude"), permissions: { deny: ["Bash(rm:*)"] } })
      put(join(cwd, ".claude/settings.local.json"), hook("proj-claude-local"))
      put(join(cwd, ".codex/hooks.json"), hook("codex"))
      put(join(cwd, ".effect-harness/settings.json"), { ...hook("proj-ours"), permissions: { defaultMode: "acceptEdits" } })
      put(join(cwd, ".effect-harness/settings.local.json"), { ...hook("proj-local"), stopHookLimit: 3 })
      put(join(root, "extra.json"), hook("extra"))
      const loaded = yield* Settings.load({ cwd, home, userHome, extra: join(root, "extra.json") })
      expect(loaded.hooks.map((h) => h.command)).toEqual([
        "user-claude", "user-ours", "proj-claude", "proj-claude-local", "codex", "proj-ours", "proj-local", "extra"
      ])
      expect(loaded.hooks.map((h) => h.dialect)).toEqual([
        "claude", "harness", "claude", "claude", "codex", "harness", "harness", "harness"
      ])
      expect(loaded.hooks[2]?.id).toBe(".claude/settings.json#Stop[0].hooks[0]")
      expect(loaded.defaultMode).toBe("acceptEdits")
      expect(loaded.stopHookLimit).toBe(3)
      expect(loaded.rules).toEqual([{ kind: "deny", text: "Bash(rm:*)", origin: ".claude/settings.json" }])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("[issue 15] CLI defaults: the last file that sets each key wins", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "settings-"))
      const cwd = join(root, "ws")
      const home = join(root, "home")
      put(join(home, "settings.json"), { provider: "anthropic", model: "user-model", colour: "never" })
      put(join(cwd, ".effect-harness/settings.json"), { model: "project-model", store: "sqlite" })
      const loaded = yield* Settings.load({ cwd, home, userHome: join(root, "user") })
      expect(loaded.defaults).toEqual({ provider: "anthropic", model: "project-model", store: "sqlite", colour: "never" })
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("HB-1: a malformed file fails startup with one line; a missing --settings file too", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "settings-"))
      put(join(root, ".claude/settings.json"), "{\"hooks\": [}")
      const bad = yield* Effect.flip(Settings.load({ cwd: root, home: join(root, "h"), userHome: join(root, "u") }))
      expect(bad.message).toBe(".claude/settings.json line 1: not valid JSON")
      const missing = yield* Effect.flip(Settings.load({ cwd: join(root, "none"), home: join(root, "h"), userHome: join(root, "u"), extra: join(root, "nope.json") }))
      expect(missing.message).toContain("no such settings file")
    }).pipe(Effect.provide(NodeServices.layer)))
})
