import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PermissionRule from "../../src/Policy/PermissionRule.js"
import * as Permissions from "../../src/Policy/Permissions.js"
import * as Settings from "../../src/Workspace/Settings.js"
import * as ShellParser from "../../src/Policy/ShellParser.js"
import type { PermissionMode } from "../../src/Workspace/SettingsFile.js"
import type { Mode } from "../../src/Policy/Approval.js"
import * as ReadFilter from "../../src/Tools/ReadFilter.js"

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
  ).pipe(Effect.provide(NodeServices.layer))

const bash = (command: string) => ({ command })

describe("PermissionRule (HB-12)", () => {
  it.effect("HB-12: bare names, prefix and exact bash rules, path globs", () =>
    Effect.gen(function*() {
      const parser = yield* ShellParser.make
      const r = (t: string) => PermissionRule.parse(t)!
      const sh = (rule: string, command: string, purpose: PermissionRule.Purpose) =>
        Effect.map(parser.analyze(command), (shell) => PermissionRule.matches(r(rule), "bash", bash(command), cwd, purpose, { shell }))
      expect(PermissionRule.matches(r("Bash"), "bash", bash("anything"), cwd, "restrict")).toBe(true)
      expect(yield* sh("Bash(npm test:*)", "npm test", "allow")).toBe(true)
      expect(yield* sh("Bash(npm test:*)", "npm test -- --watch", "allow")).toBe(true)
      expect(yield* sh("Bash(npm test:*)", "npm testify", "allow")).toBe(false)
      expect(yield* sh("Bash(git status)", "git status", "allow")).toBe(true)
      expect(yield* sh("Bash(git status)", "git status -s", "allow")).toBe(false)
      // allow: the program as spelled (a repository's ./git is not git); restrict: its base name too
      expect(yield* sh("Bash(git status)", "./git status", "allow")).toBe(false)
      expect(yield* sh("Bash(git status)", "./git status", "restrict")).toBe(true)
      // a bash pattern without the analysis: restrict matches, allow does not
      expect(PermissionRule.matches(r("Bash(rm:*)"), "bash", bash("x"), cwd, "restrict")).toBe(true)
      expect(PermissionRule.matches(r("Bash(rm:*)"), "bash", bash("rm x"), cwd, "allow")).toBe(false)
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
  }))

  it.effect("HB-12: an allow rule never covers a compound command it does not fully match", () =>
    Effect.gen(function*() {
      const parser = yield* ShellParser.make
      const allow = [PermissionRule.parse("Bash(npm test:*)")!, PermissionRule.parse("Bash(npm run lint:*)")!]
      const allowed = (command: string) => Effect.map(parser.analyze(command), (shell) => PermissionRule.bashAllowedByAll(allow, shell))
      expect(yield* allowed("npm test && npm run lint")).toBeDefined()
      expect(yield* allowed("npm test && rm -rf x")).toBeUndefined()
      expect(yield* allowed("npm test $(rm -rf x)")).toBeUndefined()
      expect(yield* allowed("npm test; touch HIDDEN")).toBeUndefined()
      const shell = yield* parser.analyze("ls && rm -rf x")
      expect(PermissionRule.matches(PermissionRule.parse("Bash(rm:*)")!, "bash", bash("ls && rm -rf x"), cwd, "restrict", { shell })).toBe(true)
    }))

  it.effect("suggests a reusable rule for \"always allow\"", () =>
    Effect.gen(function*() {
      const parser = yield* ShellParser.make
      const suggest = (command: string) => Effect.map(parser.analyze(command), (shell) => PermissionRule.suggest("bash", bash(command), cwd, shell))
      expect(yield* suggest("npm test -- --watch")).toBe("Bash(npm test:*)")
      expect(yield* suggest("ls -la")).toBe("Bash(ls:*)")
      expect(yield* suggest("a && b")).toBe("Bash(a && b)")
      expect(yield* suggest("echo x > out.txt")).toBe("Bash(echo x > out.txt)")
      expect(PermissionRule.suggest("edit", { file_path: "/ws/src/a.ts" }, cwd)).toBe("Edit(./src/**)")
      expect(PermissionRule.suggest("write", { file_path: "/ws/notes.txt" }, cwd)).toBe("Write(./notes.txt)")
    }))
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
      yield* p.remember("Bash(make:*)", "project").pipe(Effect.provide(NodeServices.layer))
      const written = JSON.parse(readFileSync(join(dir, ".effect-harness/settings.local.json"), "utf8"))
      expect(written).toEqual({ hooks: {}, permissions: { deny: ["X"], allow: ["Bash(make:*)"] } })
      expect((yield* p.decide("bash", bash("make all"))).decision).toBe("allow")
    }))
})

describe("Permissions: resolved paths and protected configuration (issue 26)", () => {
  const workspace = () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "perm-ws-")))
    for (const d of ["src", ".claude", "lib", "secrets"]) mkdirSync(join(dir, d))
    writeFileSync(join(dir, "secrets/key"), "k")
    symlinkSync("../.claude", join(dir, "src/cfg"))
    symlinkSync("../lib", join(dir, "src/out"))
    symlinkSync("secrets", join(dir, "docs"))
    return dir
  }

  it.effect("[issue 26] Edit(src/**) allows the resolved path only; a deny rule matches the lexical or the resolved path", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const p = yield* engine({ allow: ["Edit(src/**)"], deny: ["Read(./secrets/**)"] }, "default", "deny", dir)
      expect(yield* p.decide("write", { file_path: "src/a.ts" })).toMatchObject({ decision: "allow", rule: "Edit(src/**)" })
      expect(yield* p.decide("write", { file_path: "src/out/a.js" })).toMatchObject({ decision: "ask", rule: "mode:default" })
      expect(yield* p.decide("write", { file_path: "src/cfg/settings.json" })).toMatchObject({ decision: "ask", hard: true })
      expect(yield* p.decide("read", { file_path: "docs/key" })).toMatchObject({ decision: "deny", rule: "Read(./secrets/**)" })
      expect(yield* p.decide("grep", { pattern: "k", path: "docs/key" })).toMatchObject({ decision: "deny" })
      expect(yield* p.decide("read", { file_path: "src/a.ts" })).toMatchObject({ decision: "allow" })
      expect(p.hiddenFromReads("secrets/key")).toBe(true)
      expect(p.hiddenFromReads("secrets")).toBe(false)
      expect(p.hiddenFromReads("src/a.ts")).toBe(false)
      // a directory rule covers what lies below it
      const dirRule = yield* engine({ deny: ["Read(secrets)"] }, "default", "deny", dir)
      expect(dirRule.hiddenFromReads("secrets/key")).toBe(true)
      expect(yield* dirRule.decide("read", { file_path: "docs/key" })).toMatchObject({ decision: "deny" })
    }))

  it.effect("[issue 26] write/edit of protected configuration: a hard ask in every mode, under allow rules and --yes; asked at a terminal without \"always\"", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const targets = [".claude/settings.json", ".mcp.json", ".git/hooks/pre-commit", ".git/config", ".effect-harness/settings.json", ".codex/hooks.json", "src/cfg/x.json"]
      for (const mode of ["default", "acceptEdits", "bypassPermissions"] as const) {
        for (const approval of ["auto", "deny"] as const) {
          const p = yield* engine({ allow: ["Edit", "Write(**)"] }, mode, approval, dir)
          for (const file_path of targets) {
            for (const name of ["write", "edit"]) {
              const d = yield* p.resolve(name, { file_path, content: "x" })
              expect([mode, approval, name, file_path, d.decision]).toEqual([mode, approval, name, file_path, "deny"])
              expect(d.reason).toContain("harness or git configuration")
            }
          }
        }
      }
      const asked = yield* engine({ allow: ["Edit"] }, "bypassPermissions", "ask", dir)
      expect(yield* asked.resolve("write", { file_path: ".mcp.json", content: "{}" })).toMatchObject({ decision: "ask", hard: true })
      expect(yield* asked.suggest("write", { file_path: ".mcp.json", content: "{}" })).toBeUndefined()
      // a deny rule still wins; reads of configuration are not affected
      const denied = yield* engine({ deny: ["Edit(.claude/**)"] }, "default", "ask", dir)
      expect(yield* denied.decide("write", { file_path: ".claude/settings.json" })).toMatchObject({ decision: "deny" })
      expect(yield* asked.decide("read", { file_path: ".mcp.json" })).toMatchObject({ decision: "allow" })
    }))
})

describe("Permissions layers (Effect 4 layer memoization)", () => {
  it.effect("two harnesses never share a read filter: each hides what its own deny rules cover", () =>
    Effect.gen(function*() {
      const filterOf = (deny: string) =>
        Permissions.readFilter.pipe(
          Layer.provide(Permissions.layer({
            cwd,
            approval: "deny",
            settings: { ...Settings.empty, rules: [{ kind: "deny", text: deny, origin: "s.json" }] }
          })),
          Layer.provide(NodeServices.layer)
        )
      const [outer, inner] = yield* Effect.gen(function*() {
        const outer = yield* ReadFilter.hidden
        const inner = yield* ReadFilter.hidden.pipe(Effect.provide(filterOf("Read(b/**)")))
        return [outer, inner] as const
      }).pipe(Effect.provide(filterOf("Read(a/**)")))
      expect([outer("a/x"), outer("b/x")]).toEqual([true, false])
      expect([inner("a/x"), inner("b/x")]).toEqual([false, true])
    }))
})
