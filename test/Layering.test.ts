/**
 * The layering of `docs/architecture.md`, checked on every relative import under `src/`: each area imports only
 * the areas below it, so the layers cannot grow a cycle or an upward dependency unnoticed; and no module under
 * `src/` reaches itself through relative imports (static, `import type`, re-exports and dynamic `import()`).
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
  Mcp: ["Llm", "Adapter", "Session", "Loop"],
  Tools: ["Llm", "Session", "Loop", "Checkpoint"],
  Workspace: ["Llm", "Adapter", "Session", "Loop", "Mcp", "Tools"],
  Policy: ["Llm", "Session", "Loop", "Tools", "Workspace"],
  Hooks: ["Llm", "Session", "Loop", "Mcp", "Tools", "Workspace"],
  CodingAgent: ["Llm", "Adapter", "Session", "Loop", "Mcp", "Telemetry", "Tools", "Workspace", "Policy", "Hooks", "Checkpoint"],
  Checkpoint: ["Llm", "Session", "Loop"],
  Export: ["Llm", "Session"],
  Acp: ["Llm", "Session", "Loop"],
  Cli: ["Llm", "Adapter", "Session", "Loop", "Mcp", "Telemetry", "Tools", "Workspace", "Policy", "Hooks", "CodingAgent", "Export", "Acp", "Checkpoint"]
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

/**
 * Cycles left to the issue-28 item-5 rework of the loop (the compaction controller's mutable state): a type-only
 * cycle, listed so that no new cycle can join it unnoticed.
 */
const knownCycles: ReadonlyArray<string> = [
  "Loop/Compaction/Compactor.ts → Loop/internal/Runtime.ts → Loop/Compaction/Compactor.ts"
]

/** Every relative module a file's text names: `import`/`export … from` (types included) and `import("…")`. */
const importsOf = (file: string, text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:^(?:import|export)\b[^"';]*?from\s+|^import\s+|\bimport\(\s*)["'](\.{1,2}\/[^"']+)["']/gm)].map((m) =>
    Path.posix.normalize(Path.posix.join(Path.posix.dirname(file), m[1]!)).replace(/\.js$/, ".ts")
  )

/** The import cycles among `files` (path → source text): one entry per cycle found, as `a → b → a`. */
const cycles = (files: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const graph = new Map(files.map(([file, text]) => [file, importsOf(file, text)] as const))
  const state = new Map<string, "open" | "done">()
  const found: Array<string> = []
  const visit = (file: string, path: ReadonlyArray<string>): void => {
    state.set(file, "open")
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      const s = state.get(next)
      if (s === "open") found.push([...path.slice(path.indexOf(next)), file, next].join(" → "))
      else if (s === undefined) visit(next, [...path, file])
    }
    state.set(file, "done")
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file, [])
  return found
}

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

  it("no module under src/ imports itself through a cycle", () => {
    const files = walk(src).map((f) => [Path.relative(src, f).split(Path.sep).join("/"), Fs.readFileSync(f, "utf8")] as const)
    expect(cycles(files).filter((c) => !knownCycles.includes(c))).toEqual([])
    // a known cycle that is gone must leave this list too
    expect(knownCycles.filter((c) => !cycles(files).includes(c))).toEqual([])
  })

  it("a cycle is reported, through import type and a dynamic import too", () => {
    expect(cycles([
      ["A/a.ts", 'import type { B } from "../B/b.js"\n'],
      ["B/b.ts", 'export const f = () => import("./c.js")\n'],
      ["B/c.ts", 'import * as A from "../A/a.js"\n'],
      ["B/d.ts", 'import * as C from "./c.js"\n']
    ])).toEqual(["A/a.ts → B/b.ts → B/c.ts → A/a.ts"])
    expect(cycles([["X/x.ts", 'export * from "./x.js"\n']])).toEqual(["X/x.ts → X/x.ts"])
    expect(cycles([["X/x.ts", 'import "./y.js"\n'], ["X/y.ts", "export const y = 1\n"]])).toEqual([])
  })
})
