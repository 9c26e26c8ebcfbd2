import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PermissionRule from "../../../src/Cli/settings/PermissionRule.js"
import * as Permissions from "../../../src/Cli/settings/Permissions.js"
import * as Settings from "../../../src/Cli/settings/Settings.js"
import type { PermissionMode } from "../../../src/Cli/settings/SettingsFile.js"
import type { Mode } from "../../../src/Cli/tools/Approval.js"

const cwd = "/ws"

const engine = (
  rules: { allow?: Array<string>; deny?: Array<string>; ask?: Array<string> },
  mode: PermissionMode = "default",
  approval: Mode = "deny",
  dir = cwd
) =>
  Effect.map(
    Permissions.make({
      cwd: dir,
      approval,
      mode,
      settings: {
        ...Settings.empty,
        rules: (["deny", "ask", "allow"] as const).flatMap((kind) => (rules[kind] ?? []).map((text) => ({ kind, text, origin: "s.json" })))
      }
    }),
    (m) => m.service
  ).pipe(Effect.provide(NodeContext.layer))

const bash = (command: string) => ({ command })

describe("PermissionRule (HB-12)", () => {
  it("HB-12: bare names, prefix and exact bash rules, path globs", () => {
    const r = (t: string) => PermissionRule.parse(t)!
    expect(PermissionRule.matches(r("Bash"), "bash", bash("anything"), cwd, "restrict")).toBe(true)
    expect(PermissionRule.matches(r("Bash(npm test:*)"), "bash", bash("npm test"), cwd, "allow")).toBe(true)
    expect(PermissionRule.matches(r("Bash(npm test:*)"), "bash", bash("npm test -- --watch"), cwd, "allow")).toBe(true)
    expect(PermissionRule.matches(r("Bash(npm test:*)"), "bash", bash("npm testify"), cwd, "allow")).toBe(false)
    expect(PermissionRule.matches(r("Bash(git status)"), "bash", bash("git status"), cwd, "allow")).toBe(true)
    expect(PermissionRule.matches(r("Bash(git status)"), "bash", bash("git status -s"), cwd, "allow")).toBe(false)
    expect(PermissionRule.matches(r("Edit(src/**)"), "edit", { file_path: "src/a/b.ts" }, cwd, "allow")).toBe(true)
    expect(PermissionRule.matches(r("Edit(src/**)"), "write", { file_path: "/ws/src/x.ts" }, cwd, "allow")).toBe(true)
    expect(PermissionRule.matches(r("Edit(src/**)"), "edit", { file_path: "lib/x.ts" }, cwd, "allow")).toBe(false)
    expect(PermissionRule.matches(r("Read(./secrets/**)"), "read", { file_path: "secrets/k" }, cwd, "restrict")).toBe(true)
    expect(PermissionRule.matches(r("Read(./secrets/**)"), "read", { file_path: "../ws/secrets/k" }, cwd, "restrict")).toBe(true)
    expect(PermissionRule.matches(r("Read(*.env)"), "read", { file_path: "a/b/.env" }, cwd, "restrict")).toBe(true)
    expect(PermissionRule.matches(r("Read(*.env)"), "read", { file_path: "a/b/env" }, cwd, "restrict")).toBe(false)
    expect(PermissionRule.matches(r("Read(*.env)"), "read", { file_path: "a/b/x.env" }, cwd, "restrict")).toBe(true)
    expect(PermissionRule.matches(r("Edit(src/**)"), "edit", { file_path: "/etc/passwd" }, cwd, "allow")).toBe(false)
    expect(PermissionRule.matches(r("mcp__fs"), "mcp__fs__read", {}, cwd, "allow")).toBe(true)
    expect(PermissionRule.matches(r("mcp__fs__read"), "mcp__fs__write", {}, cwd, "allow")).toBe(false)
    expect(PermissionRule.parse("Bash(")).toBeUndefined()
  })

  it("HB-12: an allow rule never covers a compound command it does not fully match", () => {
    const allow = [PermissionRule.parse("Bash(npm test:*)")!, PermissionRule.parse("Bash(npm run lint:*)")!]
    expect(PermissionRule.bashAllowedByAll(allow, bash("npm test && npm run lint"))).toBeDefined()
    expect(PermissionRule.bashAllowedByAll(allow, bash("npm test && rm -rf x"))).toBeUndefined()
    expect(PermissionRule.bashAllowedByAll(allow, bash("npm test $(rm -rf x)"))).toBeUndefined()
    expect(PermissionRule.bashAllowedByAll(allow, bash("npm test; touch HIDDEN"))).toBeUndefined()
    expect(PermissionRule.matches(PermissionRule.parse("Bash(rm:*)")!, "bash", bash("ls && rm -rf x"), cwd, "restrict")).toBe(true)
  })

  it("suggests a reusable rule for \"always allow\"", () => {
    expect(PermissionRule.suggest("bash", bash("npm test -- --watch"), cwd)).toBe("Bash(npm test:*)")
    expect(PermissionRule.suggest("bash", bash("ls -la"), cwd)).toBe("Bash(ls:*)")
    expect(PermissionRule.suggest("bash", bash("a && b"), cwd)).toBe("Bash(a && b)")
    expect(PermissionRule.suggest("edit", { file_path: "/ws/src/a.ts" }, cwd)).toBe("Edit(./src/a.ts)")
  })
})

describe("Permissions (HB-12, AC-124)", () => {
  it.effect("AC-124: deny Bash(rm:*), allow Bash(npm test:*): rm denied, npm test allowed, git push asks (denied without a TTY)", () =>
    Effect.gen(function*() {
      const p = yield* engine({ deny: ["Bash(rm:*)"], allow: ["Bash(npm test:*)"] })
      const rm = yield* p.resolve("bash", bash("rm -rf x"))
      expect(rm).toMatchObject({ decision: "deny", rule: "Bash(rm:*)", origin: "s.json" })
      expect(yield* p.resolve("bash", bash("npm test"))).toMatchObject({ decision: "allow", rule: "Bash(npm test:*)" })
      expect(yield* p.decide("bash", bash("git push"))).toMatchObject({ decision: "ask", rule: "mode:default" })
      const push = yield* p.resolve("bash", bash("git push"))
      expect(push.decision).toBe("deny")
      expect(push.reason).toContain("not interactive")
      expect(yield* p.resolve("read", { file_path: "a" })).toMatchObject({ decision: "allow", rule: "mode:default" })
    }))

  it.effect("AC-124: plan mode refuses write, edit and bash (even when allowed by a rule); reads pass", () =>
    Effect.gen(function*() {
      const p = yield* engine({ allow: ["Bash(npm test:*)", "Edit"] }, "plan", "auto")
      for (const [name, args] of [["write", { file_path: "a", content: "" }], ["edit", { file_path: "a" }], ["bash", bash("npm test")]] as const) {
        expect(yield* p.resolve(name, args)).toMatchObject({ decision: "deny", rule: "mode:plan" })
      }
      expect((yield* p.resolve("grep", { pattern: "x" })).decision).toBe("allow")
    }))

  it.effect("HB-12: deny > ask > allow > mode; acceptEdits, bypassPermissions and --yes", () =>
    Effect.gen(function*() {
      const p = yield* engine({ deny: ["Edit(secrets/**)"], ask: ["Bash(git:*)"], allow: ["Bash(git status)", "Edit"] })
      expect(yield* p.decide("edit", { file_path: "secrets/a" })).toMatchObject({ decision: "deny", rule: "Edit(secrets/**)" })
      expect(yield* p.decide("bash", bash("git status"))).toMatchObject({ decision: "ask", rule: "Bash(git:*)" })
      expect(yield* p.decide("edit", { file_path: "a" })).toMatchObject({ decision: "allow", rule: "Edit" })
      const edits = yield* engine({}, "acceptEdits")
      expect(yield* edits.decide("write", { file_path: "a" })).toMatchObject({ decision: "allow", rule: "mode:acceptEdits" })
      expect(yield* edits.decide("bash", bash("ls"))).toMatchObject({ decision: "ask" })
      const bypass = yield* engine({ deny: ["Bash(rm:*)"] }, "bypassPermissions")
      expect(yield* bypass.decide("bash", bash("ls"))).toMatchObject({ decision: "allow", rule: "mode:bypassPermissions" })
      expect(yield* bypass.decide("bash", bash("rm x"))).toMatchObject({ decision: "deny" })
      const yes = yield* engine({ deny: ["Bash(rm:*)"] }, "default", "auto")
      expect(yield* yes.resolve("bash", bash("ls"))).toMatchObject({ decision: "allow", rule: "mode:default + --yes" })
      expect(yield* yes.resolve("bash", bash("rm x"))).toMatchObject({ decision: "deny" })
    }))

  it.effect("always allow: a session rule applies at once; a project rule is written to settings.local.json", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "perm-"))
      mkdirSync(join(dir, ".effect-harness"))
      writeFileSync(join(dir, ".effect-harness/settings.local.json"), JSON.stringify({ hooks: {}, permissions: { deny: ["X"] } }))
      const p = yield* engine({}, "default", "ask", dir)
      expect((yield* p.decide("bash", bash("npm test"))).decision).toBe("ask")
      yield* p.remember("Bash(npm test:*)", "session")
      expect(yield* p.decide("bash", bash("npm test"))).toMatchObject({ decision: "allow", origin: "session" })
      yield* p.remember("Bash(make:*)", "project").pipe(Effect.provide(NodeContext.layer))
      const written = JSON.parse(readFileSync(join(dir, ".effect-harness/settings.local.json"), "utf8"))
      expect(written).toEqual({ hooks: {}, permissions: { deny: ["X"], allow: ["Bash(make:*)"] } })
      expect((yield* p.decide("bash", bash("make all"))).decision).toBe("allow")
    }))
})
