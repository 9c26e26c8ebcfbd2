/**
 * The test suite in three vitest projects (issue 28):
 *
 * - `unit`: fast, in-process tests (the edit loop: `npm run test:unit`).
 * - `integration`: tests that start child processes, network servers (even on loopback) or terminals.
 * - `stress`: the integration files that scale with `HARNESS_STRESS=1` (they read that variable), run at
 *   full size; the project exists only when the variable is set (`npm run test:stress`). Without it those
 *   files run at their default size in `integration`.
 *
 * The rule that places a file (it survives moving files between folders):
 * - `integration` when its path has an `e2e` or `attack` folder, its name ends in `.e2e.test.ts`, or one of
 *   its first lines is the marker comment `// vitest project: integration`;
 * - otherwise `unit`.
 * A new test that spawns a process, listens on a port or drives tmux gets the marker (or lives in `e2e/`).
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const root = fileURLToPath(new URL(".", import.meta.url))

const stress = process.env["HARNESS_STRESS"] === "1"
const MARKER = /^\/\/ vitest project: integration\b/m

const isIntegration = (file: string, text: string): boolean =>
  /(^|\/)(e2e|attack)\//.test(file) || file.endsWith(".e2e.test.ts") || MARKER.test(text.slice(0, 2_000))

const files = readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
  .map((file) => `test/${file.split("\\").join("/")}`)
  .filter((file) => file.endsWith(".test.ts"))
  .sort()
const unit: Array<string> = []
const integration: Array<string> = []
const scaled: Array<string> = []
for (const file of files) {
  const text = readFileSync(join(root, file), "utf8")
  if (stress && text.includes("HARNESS_STRESS")) scaled.push(file)
  else if (isIntegration(file, text)) integration.push(file)
  else unit.push(file)
}

export default defineConfig({
  test: {
    setupFiles: ["./vitest.setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      { extends: true, test: { name: "unit", include: unit } },
      { extends: true, test: { name: "integration", include: integration } },
      ...(stress ? [{ extends: true, test: { name: "stress", include: scaled } }] : [])
    ]
  }
})
