import { describe, expect, it } from "vitest"
import * as ProtectedPaths from "../../src/Tools/ProtectedPaths.js"

describe("ProtectedPaths", () => {
  it("covers the configuration files and what lies under protected directories", () => {
    for (const path of [".claude", ".claude/settings.json", "./.claude/settings.local.json", ".codex/hooks.json",
      ".effect-harness/settings.json", ".mcp.json", ".git/hooks/pre-commit", ".git/config", ".git/modules/x/config",
      "src/../.claude/settings.json", ".CLAUDE/Settings.json", ".git\\hooks\\post-checkout"]) {
      expect(ProtectedPaths.isProtected(path), path).toBe(true)
    }
  })
  it("covers git's hooks and configuration of nested repositories, and extra hook directories", () => {
    for (const path of ["vendor/lib/.git/hooks/pre-commit", "a/b/.git/config", "x/.git/commondir"]) {
      expect(ProtectedPaths.isProtected(path), path).toBe(true)
    }
    expect(ProtectedPaths.isProtected(".husky/pre-commit")).toBe(false)
    expect(ProtectedPaths.isProtected(".husky/pre-commit", [".husky"])).toBe(true)
    expect(ProtectedPaths.isProtected("vendor/.git/objects/ab/cd")).toBe(false)
  })
  it("leaves ordinary paths alone", () => {
    for (const path of ["", ".", "src/.claude", ".claude-notes", ".mcp.json.bak", ".git/HEAD", ".gitignore", "../.claude"]) {
      expect(ProtectedPaths.isProtected(path), path).toBe(false)
    }
  })
})
