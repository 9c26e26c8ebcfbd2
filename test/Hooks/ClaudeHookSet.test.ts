// vitest project: integration
/**
 * An unmodified Claude Code hook set (what a Claude Code user keeps in `.claude/`) and permission
 * rules, through the spawned CLI (AC-123, AC-124).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import { runCli } from "../support/Cli.js"
import { ofType, resultTexts, tempRoot } from "./BridgeKit.js"

const hasJq = spawnSync("jq", ["--version"]).status === 0

const put = (file: string, text: string, executable = false) => {
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, text)
  if (executable) chmodSync(file, 0o755)
}

const call = (id: string, name: string, args: unknown) => ({ call: { id, name, arguments: JSON.stringify(args) } })

const events = (stdout: string): ReadonlyArray<SessionEvent> =>
  stdout.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as SessionEvent)

const workspace = () => {
  const root = tempRoot()
  const ws = join(root, "ws")
  const home = join(root, "home")
  mkdirSync(ws)
  mkdirSync(home)
  return { ws, home, env: { HOME: home } }
}

describe("Claude Code settings through the CLI", () => {
  it.live.skipIf(!hasJq)("AC-123 [HB-1 HB-3] a Claude Code hook set (jq guard, formatter, prompt context, Stop test runner) works end to end", () =>
    Effect.gen(function*() {
      const { env, home, ws } = workspace()
      put(join(ws, ".claude/settings.json"), JSON.stringify({
        model: "claude-sonnet-4-5",
        hooks: {
          UserPromptSubmit: [{ hooks: [{ type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/context.sh" }] }],
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/block-rm-rf.sh" }] }],
          PostToolUse: [{
            matcher: "Edit|Write",
            hooks: [
              { type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/format.sh" },
              { type: "command", command: "cp \"$(jq -r .transcript_path)\" \"$CLAUDE_PROJECT_DIR/transcript-copy.jsonl\"" }
            ]
          }],
          Stop: [{ hooks: [{ type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/run-tests.sh", timeout: 120 }] }]
        }
      }, null, 2))
      put(join(ws, ".claude/hooks/context.sh"), [
        "#!/bin/bash",
        "# adds project context to every prompt",
        "echo \"Project notes: the build output lives in build/\"",
        ""
      ].join("\n"), true)
      put(join(ws, ".claude/hooks/block-rm-rf.sh"), [
        "#!/bin/bash",
        "command=$(jq -r '.tool_input.command // empty')",
        "if echo \"$command\" | grep -Eq 'rm[[:space:]]+-[a-zA-Z]*(rf|fr)'; then",
        "  echo \"Blocked: rm -rf is not allowed in this project\" >&2",
        "  exit 2",
        "fi",
        "exit 0",
        ""
      ].join("\n"), true)
      put(join(ws, ".claude/hooks/format.sh"), [
        "#!/bin/bash",
        "file=$(jq -r '.tool_input.file_path // empty')",
        "[ -n \"$file\" ] && [ -f \"$file\" ] && sed -i 's/[[:space:]]*$//' \"$file\"",
        "exit 0",
        ""
      ].join("\n"), true)
      put(join(ws, ".claude/hooks/run-tests.sh"), [
        "#!/bin/bash",
        "input=$(cat)",
        "if [ \"$(echo \"$input\" | jq -r .stop_hook_active)\" = \"true\" ]; then exit 0; fi",
        "if ! npm test --silent > /tmp/run-tests.$$ 2>&1; then",
        "  echo \"Tests are failing, fix them before stopping:\" >&2",
        "  cat /tmp/run-tests.$$ >&2",
        "  rm -f /tmp/run-tests.$$",
        "  exit 2",
        "fi",
        "rm -f /tmp/run-tests.$$",
        ""
      ].join("\n"), true)
      put(join(ws, "package.json"), JSON.stringify({ name: "p", private: true, scripts: { test: "node test.js" } }))
      put(join(ws, "test.js"), "if (!require('fs').existsSync('fixed.txt')) { console.error('FAIL: fixed.txt missing'); process.exit(1) }\n")
      put(join(ws, "script.json"), JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [
          call("c1", "write", { file_path: "a.py", content: "x = 1   \ny = 2\t\n" }),
          call("c2", "bash", { command: "rm -rf build" }),
          { text: "all done" },
          call("c3", "write", { file_path: "fixed.txt", content: "ok" }),
          { text: "now really done" }
        ]
      }))
      const r = yield* runCli(["run", "--provider", "scripted", "--script", "script.json", "--json", "--yes", "--trust-workspace", "tidy up please"], { cwd: ws, home, env })
      expect(r.code, r.stderr).toBe(0)
      const log = events(r.stdout)
      // UserPromptSubmit: plain stdout became context, with the bridge's source
      const contexts = ofType(log, "context/message")
      expect(contexts[0]?.data.source).toEqual({ kind: "plugin", plugin: "hooks" })
      expect(JSON.stringify(contexts[0]?.data.content)).toContain("Project notes: the build output lives in build/")
      // PostToolUse formatter on Write
      expect(readFileSync(join(ws, "a.py"), "utf8")).toBe("x = 1\ny = 2\n")
      // PreToolUse jq guard
      expect(resultTexts(log)[1]).toBe("Error: Blocked: rm -rf is not allowed in this project")
      // Stop test runner: blocked once with the failing output, then passed after the fix
      expect(ofType(log, "hook/decision").filter((e) => e.data.event === "Stop").map((e) => e.data.decision)).toEqual(["block", "none"])
      expect(JSON.stringify(ofType(log, "steering/message")[0]?.data.content)).toContain("FAIL: fixed.txt missing")
      expect(ofType(log, "turn/end")[0]?.data.reason).toEqual({ kind: "completed" })
      // transcript_path: a readable JSONL file holding the current prompt
      const copy = readFileSync(join(ws, "transcript-copy.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string })
      expect(copy.some((e) => e.type === "user/message" && JSON.stringify(e).includes("tidy up please"))).toBe(true)
    }), 90_000)

  it.live("AC-124 [HB-12] rm denied without asking, npm test runs without asking (no TTY), git push asks → denied; plan refuses write", () =>
    Effect.gen(function*() {
      const { env, home, ws } = workspace()
      put(join(ws, ".effect-harness/settings.json"), JSON.stringify({ permissions: { deny: ["Bash(rm:*)"], allow: ["Bash(npm test:*)"] } }))
      put(join(ws, "package.json"), JSON.stringify({ name: "p", private: true, scripts: { test: "node -e \"require('fs').writeFileSync('tests-ran','')\"" } }))
      put(join(ws, "keep"), "")
      put(join(ws, "script.json"), JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [
          call("c1", "bash", { command: "rm -rf keep" }),
          call("c2", "bash", { command: "npm test" }),
          call("c3", "bash", { command: "git push" }),
          { text: "done" }
        ]
      }))
      // the workspace's own allow rule applies once its configuration is approved (issue 26)
      const r = yield* runCli(["run", "--provider", "scripted", "--script", "script.json", "--json", "--trust-workspace", "go"], { cwd: ws, home, env })
      expect(r.code, r.stderr).toBe(0)
      const log = events(r.stdout)
      expect(ofType(log, "permission/decision").map((e) => [e.data.decision, e.data.rule])).toEqual([
        ["deny", "Bash(rm:*)"],
        ["allow", "Bash(npm test:*)"],
        ["deny", "mode:default"]
      ])
      const texts = resultTexts(log)
      expect(texts[0]).toContain("denied by the permission rule \"Bash(rm:*)\"")
      expect(texts[2]).toContain("not interactive")
      expect(existsSync(join(ws, "keep"))).toBe(true)
      expect(existsSync(join(ws, "tests-ran"))).toBe(true)

      put(join(ws, "plan.json"), JSON.stringify({
        provider: "scripted",
        model: "demo",
        responses: [call("c1", "write", { file_path: "new.txt", content: "x" }), call("c2", "read", { file_path: "keep" }), { text: "done" }]
      }))
      const plan = yield* runCli(["run", "--provider", "scripted", "--script", "plan.json", "--json", "--yes", "--permission-mode", "plan", "go"], { cwd: ws, home, env })
      expect(plan.code, plan.stderr).toBe(0)
      const planLog = events(plan.stdout)
      expect(ofType(planLog, "permission/decision").map((e) => [e.data.tool, e.data.decision, e.data.rule])).toEqual([
        ["write", "deny", "mode:plan"],
        ["read", "allow", "mode:plan"]
      ])
      expect(existsSync(join(ws, "new.txt"))).toBe(false)
    }), 90_000)

  it.live("HB-1: a malformed settings file is a one-line startup error naming file and line", () =>
    Effect.gen(function*() {
      const { env, home, ws } = workspace()
      put(join(ws, ".claude/settings.local.json"), "{\n  \"hooks\": {\n    \"Stop\": \"nope\"\n  }\n}\n")
      const r = yield* runCli(["run", "--provider", "scripted", "--script", "none.json", "go"], { cwd: ws, home, env })
      expect(r.code).not.toBe(0)
      expect(r.stderr.trim().split("\n")).toHaveLength(1)
      expect(r.stderr).toContain(".claude/settings.local.json line 3: \"hooks.Stop\"")
    }), 60_000)
})
