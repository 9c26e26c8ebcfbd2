import { describe, expect, it } from "vitest"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { checkRuleIds, readTree } from "../support/ruleIds.js"

const repo = fileURLToPath(new URL("../../", import.meta.url))

describe("rule-id index (issue 18)", () => {
  it("every rule id cited in src/ and test/ resolves to exactly one heading under docs/", () => {
    const code = [
      ...readTree(Path.join(repo, "src"), [".ts", ".tsx"], repo),
      // This folder's own fixtures cite made-up ids on purpose.
      ...readTree(Path.join(repo, "test"), [".ts", ".tsx"], repo).filter((s) => !s.path.startsWith("test/docs/"))
    ]
    const docs = readTree(Path.join(repo, "docs"), [".md"], repo)
    expect(checkRuleIds(code, docs)).toEqual([])
  })

  it("the check fails on a dangling citation and on a duplicate anchor", () => {
    const code = [{ path: "src/a.ts", text: "// S-1 and L-12.14 and Z-9 (not an id) and SHA-256" }]
    const docs = [
      { path: "docs/x.md", text: "# Title\n\n### S-1 Envelope\ntext\n### L-12 Step\n" },
      { path: "docs/y.md", text: "### S-1 Again\n" }
    ]
    expect(checkRuleIds(code, docs)).toEqual([
      "L-12.14 (cited in src/a.ts) has no heading in docs/",
      "S-1 is defined 2 times (docs/x.md, docs/y.md)"
    ])
  })
})
