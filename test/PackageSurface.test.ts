// vitest project: integration
/**
 * The embedder's view of the package (issue 18): the declarations of every exported entry name no
 * `internal/` module, and a package outside this one can augment the event, block and message maps
 * through the subpaths the docs name, type-checked with `tsc` against the emitted declarations.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Surface from "./support/PackageSurface.js"

const repo = fileURLToPath(new URL("../", import.meta.url))
const fixture = Path.join(repo, "test/fixtures/augment-package")
const packageJson = Fs.readFileSync(Path.join(repo, "package.json"), "utf8")
const entries = Surface.exportsOf(packageJson)

let dir = ""
let pkg = ""
let emitted: { readonly ok: boolean; readonly output: string } = { ok: false, output: "not run" }

beforeAll(async () => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "package-surface-"))
  pkg = Path.join(dir, "pkg")
  Fs.mkdirSync(pkg)
  emitted = await Surface.emitPackage(repo, pkg)
}, 240_000)

afterAll(() => {
  if (dir !== "") Fs.rmSync(dir, { recursive: true, force: true })
})

const readIn = (root: string) => (file: string): string | undefined => {
  const full = Path.join(root, file)
  return Fs.existsSync(full) ? Fs.readFileSync(full, "utf8") : undefined
}

describe("the package surface (issue 18)", () => {
  it("every module the docs tell users to import or augment is a package export", () => {
    const subpaths = new Set(entries.map((e) => e.subpath))
    const named = new Set<string>()
    const walk = (d: string): void => {
      for (const entry of Fs.readdirSync(d, { withFileTypes: true })) {
        const full = Path.join(d, entry.name)
        if (entry.isDirectory()) walk(full)
        else if (entry.name.endsWith(".ts")) {
          for (const m of Fs.readFileSync(full, "utf8").matchAll(/(?:declare module|from) "effect-harness(\/[A-Za-z/]+)?"/g)) {
            named.add(`.${m[1] ?? ""}`)
          }
        }
      }
    }
    walk(Path.join(repo, "src"))
    expect([...named].length).toBeGreaterThan(3)
    expect([...named].filter((s) => !subpaths.has(s))).toEqual([])
    for (const e of entries) expect(Fs.existsSync(Path.join(repo, Surface.sourceOf(e.types))), e.subpath).toBe(true)
  })

  it("the declarations of every export load no internal/ module", () => {
    expect(emitted.output).toBe("")
    expect(emitted.ok).toBe(true)
    const loaded = Surface.closure(entries.map((e) => e.types.replace(/^\.\//, "")), readIn(pkg))
    expect(loaded.size).toBeGreaterThan(40)
    expect(Surface.internalLeaks(loaded)).toEqual([])
  })

  it("the leak check finds an internal module reached through a public one", () => {
    const files: Record<string, string> = {
      "dist/index.d.ts": `export * as Agent from "./Loop/Agent.js";`,
      "dist/Loop/Agent.d.ts": `import type { Runtime } from "./Step.js";\nexport declare const make: () => void;`,
      "dist/Loop/Step.d.ts": `import type { Runtime } from "./internal/Runtime.js";\nexport type { Runtime };`,
      "dist/Loop/internal/Runtime.d.ts": `export interface Runtime {}`
    }
    const loaded = Surface.closure(["dist/index.d.ts"], (f) => files[f])
    expect(Surface.internalLeaks(loaded)).toEqual(["dist/Loop/internal/Runtime.d.ts (imported by dist/Loop/Step.d.ts)"])
  })

  it("a package outside this one augments the maps through the subpath exports and type-checks", async () => {
    expect(emitted.ok).toBe(true)
    const consumer = Surface.installFixture(repo, fixture, dir, pkg)
    const good = await Surface.tsc(repo, Path.join(consumer, "tsconfig.json"))
    expect(good.output).toBe("")
    expect(good.ok).toBe(true)

    // (a payload against the merged declaration is rejected: the fixture's `@ts-expect-error` line)
    // able to fail: without the subpath export the augmentation has no module to merge into
    const manifest = JSON.parse(packageJson) as { exports: Record<string, unknown> }
    delete manifest.exports["./Session/SessionEvent"]
    Fs.writeFileSync(Path.join(pkg, "package.json"), JSON.stringify(manifest))
    try {
      const unexported = await Surface.tsc(repo, Path.join(consumer, "tsconfig.json"))
      expect(unexported.ok).toBe(false)
      expect(unexported.output).toContain("effect-harness/Session/SessionEvent")
    } finally {
      Fs.writeFileSync(Path.join(pkg, "package.json"), packageJson)
    }
  }, 240_000)
})
