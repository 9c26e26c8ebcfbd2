import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as SettingsFile from "../../src/Workspace/SettingsFile.js"

const decode = (text: string, dialect: SettingsFile.Dialect = "harness") => SettingsFile.decode("proj/settings.json", text, dialect)

describe("SettingsFile (HB-1, HB-2)", () => {
  it("HB-2: decodes hooks and permissions", () => {
    const r = decode(JSON.stringify({
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "x.sh", timeout: 5, onFailure: "block" }] }] },
      permissions: { allow: ["Read"], deny: ["Bash(rm:*)"], defaultMode: "plan" }
    }))
    expect(Result.isSuccess(r)).toBe(true)
    if (Result.isSuccess(r)) {
      expect(r.success.settings.hooks?.["PreToolUse"]?.[0]?.hooks[0]?.onFailure).toBe("block")
      expect(r.success.settings.permissions?.defaultMode).toBe("plan")
      expect(r.success.warnings).toEqual([])
    }
  })

  it("HB-1: malformed JSON is one line naming file and line", () => {
    const r = decode("{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}")
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure.message).toMatch(/^proj\/settings\.json line 3: not valid JSON$/)
    }
  })

  it("HB-1: a wrong type names file, line and key in one line", () => {
    const text = "{\n  \"permissions\": {\n    \"allow\": [\"Read\"],\n    \"deny\": \"Bash\"\n  }\n}"
    const r = decode(text)
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure.message).toContain("proj/settings.json line 4")
      expect(r.failure.message).toContain("\"permissions.deny\"")
      expect(r.failure.message).not.toContain("\n")
    }
    const bad = decode("{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"onFailure\": \"maybe\"}]}]}}")
    expect(Result.isFailure(bad) && bad.failure.message).toContain("\"hooks.Stop[0].hooks[0].onFailure\"")
  })

  it("HB-1: unknown keys warn (ours), Claude Code's other keys are ignored silently", () => {
    const ours = decode(JSON.stringify({ hooks: {}, flavour: "red" }))
    expect(Result.isSuccess(ours) && ours.success.warnings).toEqual(["proj/settings.json: unknown key \"flavour\" ignored"])
    const claude = decode(JSON.stringify({ model: "x", env: {}, permissions: { allow: [], additionalDirectories: ["/x"] } }), "claude")
    expect(Result.isSuccess(claude) && claude.success.warnings).toEqual([])
  })

  it("[issue 15] CLI defaults: provider, model, store, colour are read (ours only) and checked", () => {
    const ours = decode(JSON.stringify({ provider: "anthropic", model: "m", store: "sqlite", colour: "never" }))
    expect(Result.isSuccess(ours) && ours.success).toEqual({
      settings: { provider: "anthropic", model: "m", store: "sqlite", colour: "never" },
      warnings: []
    })
    const claude = decode(JSON.stringify({ model: "claude-x" }), "claude")
    expect(Result.isSuccess(claude) && claude.success.settings).toEqual({})
    const bad = decode("{\n  \"store\": \"csv\"\n}")
    expect(Result.isFailure(bad) && bad.failure.message).toBe("proj/settings.json line 2: \"store\" must be one of \"jsonl\", \"sqlite\" (found \"csv\")")
  })

  it("HB-2: other handler types are reported as unsupported", () => {
    const r = decode(JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "prompt", prompt: "x" }] }] } }))
    expect(Result.isSuccess(r) && r.success.warnings[0]).toContain("unsupported type \"prompt\"")
  })
})

describe("SettingsFile messages", () => {
  it("HB-1: errors are in the user's words, never a schema dump", () => {
    const cases: Array<[string, string]> = [
      ["{\"hooks\": {\"Stop\": \"nope\"}}", "\"hooks.Stop\" must be a list (found \"nope\")"],
      ["{\"permissions\": {\"defaultMode\": \"yolo\"}}", "\"permissions.defaultMode\" must be one of \"default\", \"acceptEdits\", \"plan\", \"bypassPermissions\""],
      ["{\"hooks\": {\"Stop\": [{}]}}", "\"hooks.Stop[0].hooks\" is required"],
      ["{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"timeout\": -1}]}]}}", "must be a positive number"]
    ]
    for (const [text, expected] of cases) {
      const r = SettingsFile.decode("s.json", text, "harness")
      expect(Result.isFailure(r) && r.failure.message).toContain(expected)
      expect(Result.isFailure(r) && r.failure.message).not.toMatch(/ReadonlyArray|Expected/)
    }
  })
})
