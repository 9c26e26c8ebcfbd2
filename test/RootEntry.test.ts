import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)
const repo = fileURLToPath(new URL("../", import.meta.url))

/** Imports `entry` in a fresh Node process where `better-sqlite3` and the SQLite client cannot be resolved. */
const importWithoutSqlite = async (entry: string) => {
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
  const script = `const m = await import(${JSON.stringify(pathToFileURL(Path.join(repo, entry)).href)}); console.log(Object.keys(m).sort().join(","))`
  try {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--import", pathToFileURL(hook).href, "--input-type=module", "-e", script], { cwd: repo })
    return { ok: true as const, exports: stdout.trim().split(",") }
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
    // the control: the SQLite entry does need the addon, so the hook really hides it
    const sqlite = await importWithoutSqlite("src/sqlite.ts")
    expect(sqlite.ok).toBe(false)
    if (!sqlite.ok) expect(sqlite.message).toContain("unavailable")
  }, 120_000)
})
