import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as WorkspaceScripts from "../../src/Mcp/WorkspaceScripts.js"

describe("WorkspaceScripts (issue 26)", () => {
  it("words: quotes removed, project-directory variables replaced, operators split", () => {
    expect(WorkspaceScripts.shellWords("\"$CLAUDE_PROJECT_DIR\"/hooks/x.py --a 'b c' && ${EFFECT_HARNESS_PROJECT_DIR}/y.sh>out", "/w"))
      .toEqual(["/w/hooks/x.py", "--a", "b c", "/w/y.sh", "out"])
  })

  it("named paths: inside the workspace only, with a slash or an extension, also after --flag=", () => {
    const words = ["node", "./srv.js", "srv2.mjs", "--config=./c.json", "/etc/passwd", "../outside.sh", "-v", "$HOME/x.sh", "plain", "/w/abs/h.sh"]
    expect(WorkspaceScripts.namedPaths(words, "/w")).toEqual(["abs/h.sh", "c.json", "srv.js", "srv2.mjs"])
    expect(WorkspaceScripts.namedPaths(["./x.js"], "/w", "/w/sub")).toEqual(["sub/x.js"])
  })

  it.effect("digest: contents, missing, not a file; combined changes with any of them", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "scripts-"))
      writeFileSync(join(root, "a.sh"), "one")
      const first = yield* WorkspaceScripts.digest(root, [".", "a.sh", "b.sh"].filter((p) => p !== "."))
      expect(first.map((n) => n.digest.length === 64 ? "hash" : n.digest)).toEqual(["hash", "missing"])
      writeFileSync(join(root, "b.sh"), "two")
      const second = yield* WorkspaceScripts.digest(root, ["a.sh", "b.sh"])
      expect(WorkspaceScripts.combined(second)).not.toBe(WorkspaceScripts.combined(first))
      expect(WorkspaceScripts.combined([...second].reverse())).toBe(WorkspaceScripts.combined(second))
    }).pipe(Effect.provide(NodeServices.layer)))
})
