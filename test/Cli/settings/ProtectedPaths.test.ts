import { describe, expect, it } from "vitest"
import * as ProtectedPaths from "../../../src/Cli/settings/ProtectedPaths.js"

describe("ProtectedPaths", () => {
  it("covers the configuration files and what lies under protected directories", () => {
    for (const path of [".claude", ".claude/settings.json", "./.claude/settings.local.json", ".codex/hooks.json",
      ".effect-harness/settings.json", ".mcp.json", ".git/hooks/pre-commit", ".git/config", ".git/modules/x/config",
      "src/../.claude/settings.json", ".CLAUDE/Settings.json", ".git\\hooks\\post-checkout"]) {
      expect(ProtectedPaths.isProtected(path), path).toBe(true)
    }
  })
  it("leaves ordinary paths alone", () => {
    for (const path of ["", ".", "src/.claude", ".claude-notes", ".mcp.json.bak", ".git/HEAD", ".gitignore", "../.claude"]) {
      expect(ProtectedPaths.isProtected(path), path).toBe(false)
    }
  })
})
