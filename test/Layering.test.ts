/**
 * The layering of `docs/architecture.md`, checked on every relative import under `src/`: each area imports only
 * the areas below it, so the layers cannot grow a cycle or an upward dependency unnoticed.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const src = fileURLToPath(new URL("../src/", import.meta.url))

/** What each top-level area of `src/` may import (besides itself). */
const allowed: Readonly<Record<string, ReadonlyArray<string>>> = {
  Llm: [],
  Adapter: ["Llm"],
  Session: ["Llm"],
  Telemetry: ["Llm"],
  Loop: ["Llm", "Session"],
  Mcp: ["Llm", "Session", "Loop"],
  Checkpoint: ["Llm", "Session", "Loop"],
  Cli: ["Llm", "Adapter", "Session", "Loop", "Mcp", "Telemetry", "Checkpoint"]
}

/** Documented exceptions: file → areas it may import beyond its area's list. */
const exceptions: Readonly<Record<string, ReadonlyArray<string>>> = {
  // the embedders' test kit wires the scripted adapter for them
  "Loop/TestKit.ts": ["Adapter"]
}

const walk = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(Path.join(dir, e.name)) : e.name.endsWith(".ts") ? [Path.join(dir, e.name)] : []
  )

/** The violations of `allowed` among `files` (path relative to `src/` → source text). */
const violations = (files: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> =>
  files.flatMap(([file, text]) => {
    const area = file.split("/")[0]!
    const ok = allowed[area]
    if (ok === undefined) return [] // the root entries (index.ts, sqlite.ts) re-export every area
    return [...text.matchAll(/^(?:import|export)\b[^"']*?from\s+["'](\.{1,2}\/[^"']+)["']/gm)].flatMap((m) => {
      const target = Path.posix.normalize(Path.posix.join(Path.posix.dirname(file), m[1]!)).split("/")[0]!
      if (target === area || !(target in allowed)) return []
      return ok.includes(target) || (exceptions[file] ?? []).includes(target) ? [] : [`${file} imports ${m[1]} (${area} → ${target})`]
    })
  })

describe("layering (docs/architecture.md)", () => {
  it("every import under src/ points down the layers", () => {
    const files = walk(src).map((f) => [Path.relative(src, f).split(Path.sep).join("/"), Fs.readFileSync(f, "utf8")] as const)
    expect(files.length).toBeGreaterThan(100)
    expect(violations(files)).toEqual([])
  })

  it("an upward import is reported", () => {
    expect(violations([["Session/X.ts", 'import * as Agent from "../Loop/Agent.js"\n']])).toEqual([
      "Session/X.ts imports ../Loop/Agent.js (Session → Loop)"
    ])
    expect(violations([["Llm/Y.ts", 'export { a } from "../Cli/Z.js"\n']])).toHaveLength(1)
    expect(violations([["Loop/TestKit.ts", 'import * as S from "../Adapter/Scripted.js"\n']])).toEqual([])
  })
})
