import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Permissions from "../../src/Policy/Permissions.js"
import * as Settings from "../../src/Workspace/Settings.js"
import * as WorkspaceTrust from "../../src/Workspace/WorkspaceTrust.js"

const put = (file: string, value: unknown) => {
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value))
}

const fixture = () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "trust-")))
  const cwd = join(root, "ws")
  const home = join(root, "data")
  mkdirSync(cwd)
  const at: Settings.Locations = { cwd, home: join(root, "settings-home"), userHome: join(root, "user") }
  return { at, cwd, home }
}

const hooked = {
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "\"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh --strict" }] }] },
  permissions: { allow: ["Bash"], deny: ["Bash(rm:*)"], ask: ["Edit"], defaultMode: "acceptEdits" }
}

const reviewOf = (at: Settings.Locations) =>
  Effect.flatMap(Settings.read(at), (files) => Effect.map(WorkspaceTrust.review(at, files), (r) => ({ files, review: r })))

const notices = () => {
  const lines: Array<string> = []
  return { lines, notice: (line: string) => Effect.sync(() => void lines.push(line)) }
}

describe("WorkspaceTrust (issue 26)", () => {
  it.effect("nothing to approve: deny/ask rules and CLI defaults alone ask no question", () =>
    Effect.gen(function*() {
      const { at, cwd } = fixture()
      put(join(cwd, ".claude/settings.json"), { permissions: { deny: ["Bash"] } })
      put(join(cwd, ".effect-harness/settings.json"), { store: "sqlite" })
      const { review } = yield* reviewOf(at)
      expect(Option.isNone(review)).toBe(true)
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("the review lists hooks, servers, grants and the scripts they name; the fingerprint follows files and scripts", () =>
    Effect.gen(function*() {
      const { at, cwd } = fixture()
      put(join(cwd, ".claude/settings.json"), hooked)
      put(join(cwd, "hooks/guard.sh"), "#!/bin/sh\nexit 0\n")
      put(join(cwd, ".mcp.json"), { mcpServers: { srv: { command: "node", args: ["./srv.js"] } } })
      put(join(cwd, "srv.js"), "// v1\n")
      const first = Option.getOrThrow((yield* reviewOf(at)).review)
      expect(first.hooks.map((h) => h.command)).toEqual(["\"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh --strict"])
      expect(first.allow).toEqual([{ file: ".claude/settings.json", rule: "Bash" }])
      expect(first.modes).toEqual([{ file: ".claude/settings.json", mode: "acceptEdits" }])
      expect(first.servers).toEqual([{ name: "srv", command: "node ./srv.js" }])
      expect(first.scripts.map((s) => s.path)).toEqual(["hooks/guard.sh", "srv.js"])
      const q = WorkspaceTrust.question(first)
      expect(q).toContain("hook PreToolUse (matcher Bash) from .claude/settings.json: \"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh --strict")
      expect(q).toContain("MCP server \"srv\" from .mcp.json: node ./srv.js")
      expect(q).toContain("allow rule Bash from .claude/settings.json")
      expect(q).toContain("permission mode acceptEdits from .claude/settings.json")
      // unchanged: same fingerprint; a rewritten script or file: another one
      expect(Option.getOrThrow((yield* reviewOf(at)).review).fingerprint).toBe(first.fingerprint)
      put(join(cwd, "srv.js"), "// v2\n")
      const second = Option.getOrThrow((yield* reviewOf(at)).review)
      expect(second.fingerprint).not.toBe(first.fingerprint)
      put(join(cwd, "hooks/guard.sh"), "#!/bin/sh\nexit 1\n")
      const third = Option.getOrThrow((yield* reviewOf(at)).review)
      expect(third.fingerprint).not.toBe(second.fingerprint)
      put(join(cwd, ".claude/settings.local.json"), { permissions: { deny: ["Read"] } })
      expect(Option.getOrThrow((yield* reviewOf(at)).review).fingerprint).not.toBe(third.fingerprint)
    }).pipe(Effect.provide(NodeServices.layer)))

  it("the question shows control characters as inert escapes", () => {
    const q = WorkspaceTrust.question({
      root: "/w",
      hooks: [{ event: "Stop", matcher: undefined, command: "echo \u001b[2K\u202e hi", timeout: undefined, onFailure: "continue", dialect: "claude", file: ".claude/settings.json", id: "x" }],
      allow: [],
      modes: [],
      servers: [],
      scripts: [],
      fingerprint: "f"
    })
    expect(q).not.toMatch(/[\u001b\u202e]/)
    expect(q).toContain("\\x1b[2K\\u202e hi")
  })

  it.effect("apply: unapproved drops hooks, allow rules and mode (deny/ask stay); approved drops only bypassPermissions, with a warning", () =>
    Effect.gen(function*() {
      const { at, cwd } = fixture()
      put(join(cwd, ".claude/settings.json"), hooked)
      put(join(cwd, ".effect-harness/settings.json"), { permissions: { defaultMode: "bypassPermissions" } })
      put(join(at.home, "settings.json"), { permissions: { allow: ["Read"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "mine" }] }] } })
      const files = yield* Settings.read(at)
      const untrusted = WorkspaceTrust.apply(files, false)
      const u = Settings.merge(untrusted.files)
      expect(u.hooks.map((h) => h.command)).toEqual(["mine"])
      expect(u.rules.map((r) => `${r.kind} ${r.text}`).sort()).toEqual(["allow Read", "ask Edit", "deny Bash(rm:*)"])
      expect(u.defaultMode).toBeUndefined()
      expect(untrusted.warnings).toEqual([])
      const trusted = WorkspaceTrust.apply(files, true)
      const t = Settings.merge(trusted.files)
      expect(t.hooks).toHaveLength(2)
      expect(t.hooks.find((h) => h.command !== "mine")?.project).toBe(true)
      expect(t.rules.map((r) => `${r.kind} ${r.text}`)).toContain("allow Bash")
      expect(t.defaultMode).toBe("acceptEdits")
      expect(trusted.warnings).toEqual([
        `.effect-harness/settings.json: "defaultMode": "bypassPermissions" is ignored (only your own settings or --permission-mode can set it)`
      ])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("decide: skip says one line; ask yes records (0600 in a 0700 directory); recorded asks nothing; no is not recorded", () =>
    Effect.gen(function*() {
      const { at, cwd, home } = fixture()
      put(join(cwd, ".codex/hooks.json"), { hooks: { Stop: [{ hooks: [{ type: "command", command: "./h.sh" }] }] } })
      const { review } = yield* reviewOf(at)
      const skip = notices()
      expect(yield* WorkspaceTrust.decide({ home, review, mode: "skip", notice: skip.notice })).toBe(false)
      expect(skip.lines).toEqual([
        "this workspace's configuration is not approved, so it was skipped (1 hook); run in a terminal to review it, or pass --trust-workspace"
      ])
      const asked: Array<string> = []
      const no = notices()
      expect(yield* WorkspaceTrust.decide({ home, review, mode: "ask", ask: (q) => Effect.sync(() => (asked.push(q), false)), notice: no.notice })).toBe(false)
      expect(no.lines).toHaveLength(1)
      const yes = notices()
      expect(yield* WorkspaceTrust.decide({ home, review, mode: "ask", ask: (q) => Effect.sync(() => (asked.push(q), true)), notice: yes.notice })).toBe(true)
      expect(asked).toHaveLength(2)
      expect(statSync(join(home, WorkspaceTrust.TRUST_FILE)).mode & 0o777).toBe(0o600)
      expect(statSync(home).mode & 0o777).toBe(0o700)
      const later = notices()
      expect(yield* WorkspaceTrust.decide({ home, review, mode: "skip", notice: later.notice })).toBe(true)
      expect(later.lines).toEqual([])
      // a group-writable record is not believed
      chmodSync(join(home, WorkspaceTrust.TRUST_FILE), 0o664)
      const loose = notices()
      expect(yield* WorkspaceTrust.decide({ home, review, mode: "skip", notice: loose.notice })).toBe(false)
      expect(loose.lines[0]).toContain("is writable by other users")
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("the user's own \"always for this project\" answer keeps an approved workspace approved", () =>
    Effect.gen(function*() {
      const { at, cwd, home } = fixture()
      put(join(cwd, ".claude/settings.json"), hooked)
      const { review } = yield* reviewOf(at)
      const n = notices()
      expect(yield* WorkspaceTrust.decide({ home, review, mode: "flag", notice: n.notice })).toBe(true)
      const { service } = yield* Permissions.make({
        cwd,
        settings: Settings.empty,
        approval: "ask",
        onProjectWrite: WorkspaceTrust.rerecord(at, home, n.notice)
      })
      yield* service.remember("Bash(npm test:*)", "project")
      const after = yield* reviewOf(at)
      expect(Option.getOrThrow(after.review).fingerprint).not.toBe(Option.getOrThrow(review).fingerprint)
      expect(yield* WorkspaceTrust.decide({ home, review: after.review, mode: "skip", notice: n.notice })).toBe(true)
      expect(n.lines).toEqual([])
    }).pipe(Effect.provide(NodeServices.layer)))
})
