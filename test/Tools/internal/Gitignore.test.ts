import { describe, expect, it } from "@effect/vitest"
import * as Gitignore from "../../../src/Tools/internal/Gitignore.js"

describe("Gitignore", () => {
  const root = Gitignore.parse("", [
    "# comment",
    "",
    "*.log",
    "!keep.log",
    "build/",
    "/dist",
    "docs/*.tmp",
    "**/cache",
    "\\#literal"
  ].join("\n"))

  it("unanchored patterns match at any depth; negation re-includes", () => {
    expect(Gitignore.isIgnored([root], "a.log", false)).toBe(true)
    expect(Gitignore.isIgnored([root], "x/y/a.log", false)).toBe(true)
    expect(Gitignore.isIgnored([root], "x/keep.log", false)).toBe(false)
    expect(Gitignore.isIgnored([root], "#literal", false)).toBe(true)
  })
  it("directory-only and anchored patterns", () => {
    expect(Gitignore.isIgnored([root], "build", true)).toBe(true)
    expect(Gitignore.isIgnored([root], "build", false)).toBe(false)
    expect(Gitignore.isIgnored([root], "sub/build", true)).toBe(true)
    expect(Gitignore.isIgnored([root], "dist", true)).toBe(true)
    expect(Gitignore.isIgnored([root], "sub/dist", true)).toBe(false)
    expect(Gitignore.isIgnored([root], "docs/a.tmp", false)).toBe(true)
    expect(Gitignore.isIgnored([root], "x/docs/a.tmp", false)).toBe(false)
    expect(Gitignore.isIgnored([root], "a/b/cache", true)).toBe(true)
  })
  it("nested files apply relative to their directory and take precedence", () => {
    const nested = Gitignore.parse("pkg", "!debug.log\n/local.txt\n")
    expect(Gitignore.isIgnored([root, nested], "pkg/debug.log", false)).toBe(false)
    expect(Gitignore.isIgnored([root, nested], "other/debug.log", false)).toBe(true)
    expect(Gitignore.isIgnored([root, nested], "pkg/local.txt", false)).toBe(true)
    expect(Gitignore.isIgnored([root, nested], "pkg/sub/local.txt", false)).toBe(false)
    expect(Gitignore.isIgnored([root, nested], "local.txt", false)).toBe(false)
  })
})

describe("hostile .gitignore patterns (issue 16)", () => {
  it("a pattern with many wildcards is matched in linear time", () => {
    expect(Gitignore.linearEngine).toBe(true)
    const set = Gitignore.parse("", `${"*a".repeat(16)}*b\n`)
    const started = Date.now()
    expect(Gitignore.isIgnored([set], "a".repeat(250), false)).toBe(false)
    expect(Gitignore.isIgnored([set], `${"a".repeat(20)}b`, false)).toBe(true)
    // the backtracking engine needs hours here; generous bound for a loaded machine
    expect(Date.now() - started).toBeLessThan(2000)
  })
})
