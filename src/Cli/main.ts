#!/usr/bin/env node
/**
 * The `harness` bin entry. It first checks the Node.js version (`NodeVersion`: one line and exit 2
 * below the floor), answers `--version` from `package.json` without loading Effect (cold start),
 * and otherwise loads the program (`Program.ts`) lazily: in the esbuild bundle the dynamic import
 * keeps the program's module initialisation off the `--version` path and off an old Node.js.
 *
 * @since 0.1.0
 */
import "./NodeVersion.js"
import packageJson from "../../package.json" with { type: "json" }

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`${packageJson.version}\n`)
} else {
  (await import("./SecretEnv.js")).capture()
  await import("./Program.js")
}
