import { describe, expect, it } from "@effect/vitest"
import * as GlobPattern from "../../../src/Tools/internal/GlobPattern.js"

const matches = (pattern: string, path: string) => GlobPattern.compile(pattern).test(path)

describe("GlobPattern", () => {
  it("* and ? stay within a segment", () => {
    expect(matches("*.ts", "a.ts")).toBe(true)
    expect(matches("*.ts", "src/a.ts")).toBe(false)
    expect(matches("?.ts", "a.ts")).toBe(true)
    expect(matches("?.ts", "ab.ts")).toBe(false)
    expect(matches("a.ts", "aXts")).toBe(false)
  })
  it("** matches zero or more segments", () => {
    expect(matches("**/*.ts", "a.ts")).toBe(true)
    expect(matches("**/*.ts", "x/y/a.ts")).toBe(true)
    expect(matches("src/**/a.ts", "src/a.ts")).toBe(true)
    expect(matches("src/**/a.ts", "src/p/q/a.ts")).toBe(true)
    expect(matches("src/**", "src/p/q")).toBe(true)
    expect(matches("**", "any/thing")).toBe(true)
    expect(matches("src/**/a.ts", "lib/a.ts")).toBe(false)
  })
  it("{a,b} alternatives (nested) and [..] classes", () => {
    expect(matches("*.{ts,tsx}", "a.tsx")).toBe(true)
    expect(matches("*.{ts,tsx}", "a.js")).toBe(false)
    expect(matches("{src,test/{unit,e2e}}/*.ts", "test/e2e/x.ts")).toBe(true)
    expect(matches("[ab].txt", "b.txt")).toBe(true)
    expect(matches("[!ab].txt", "b.txt")).toBe(false)
    expect(matches("[a-c].txt", "c.txt")).toBe(true)
    expect(matches("{a}.txt", "{a}.txt")).toBe(true)
  })
  it("literalPrefix", () => {
    expect(GlobPattern.literalPrefix("src/lib/**/*.ts")).toBe("src/lib")
    expect(GlobPattern.literalPrefix("**/*.ts")).toBe("")
    expect(GlobPattern.literalPrefix("a.ts")).toBe("")
  })
})
