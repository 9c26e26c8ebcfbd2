// vitest project: integration
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)
const repo = fileURLToPath(new URL("../", import.meta.url))

/**
 * Imports `entry` in a fresh Node process where `better-sqlite3` and the SQLite client cannot be resolved, runs
 * `then` (the module is `m`), and reports the entry's export names and whether Node's built-in `node:sqlite` was
 * loaded (it is not resolved through the hooks: `process.getBuiltinModule`; `process.moduleLoadList` sees it) and
 * whether Node warned about it on stderr.
 */
const importWithoutSqlite = async (entry: string, then = "") => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "root-entry-"))
  const hook = Path.join(dir, "no-sqlite.mjs")
  Fs.writeFileSync(
    hook,
    `import { register } from "node:module"
register("data:text/javascript," + encodeURIComponent(\`export async function resolve(specifier, context, next) {
  if (specifier === "better-sqlite3" || specifier.startsWith("@effect/sql-sqlite-node")) throw new Error("unavailable: " + specifier)
  return next(specifier, context)
}\`))
`
  )
  const script = `const m = await import(${JSON.stringify(pathToFileURL(Path.join(repo, entry)).href)}); ${then}
console.log(JSON.stringify({ exports: Object.keys(m).sort(), sqliteLoaded: process.moduleLoadList.includes("NativeModule sqlite") }))`
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "--import", pathToFileURL(hook).href, "--input-type=module", "-e", script], { cwd: repo })
    const loaded = JSON.parse(stdout.trim().split("\n").at(-1)!) as { exports: Array<string>; sqliteLoaded: boolean }
    return { ok: true as const, ...loaded, warned: stderr.includes("ExperimentalWarning") }
  } catch (error) {
    return { ok: false as const, message: String((error as { stderr?: string }).stderr ?? error) }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("package entries (issue 18)", () => {
  it("the root entry loads without better-sqlite3; the SQLite backend has its own entry", async () => {
    const root = await importWithoutSqlite("src/index.ts")
    expect(root.ok).toBe(true)
    if (root.ok) {
      expect(root.exports).toContain("Jsonl")
      expect(root.exports).not.toContain("Sqlite")
    }
    // Effect 4 port: the backend runs on Node's built-in `node:sqlite` (no addon), so "without" means the root
    // entry never loads `node:sqlite`; the control: opening a database through the SQLite entry does load it
    expect(root.ok && root.sqliteLoaded).toBe(false)
    const sqlite = await importWithoutSqlite(
      "src/sqlite.ts",
      `const Effect = await import("effect/Effect"); await Effect.runPromise(Effect.scoped(m.SqliteDatabase.open({ filename: ":memory:" })))`
    )
    expect(sqlite.ok, sqlite.ok ? "" : sqlite.message).toBe(true)
    if (sqlite.ok) {
      expect(sqlite.exports).toContain("Sqlite")
      expect(sqlite.sqliteLoaded).toBe(true)
      // the driver's experimental-feature warning never reaches stderr
      expect(sqlite.warned).toBe(false)
    }
  }, 120_000)
})
