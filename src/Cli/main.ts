#!/usr/bin/env node
/**
 * The `harness` bin entry. It first checks the Node.js version (`NodeVersion`: one line and exit 2
 * below the floor), answers `--version` from `package.json` without loading Effect (cold start),
 * and otherwise loads the program (`Program.ts`) lazily. The package's bin is `bin.ts`, which does
 * the first two itself and loads this module's bundle (`dist-bundle/program.mjs`) only for a command.
 *
 * @since 0.1.0
 */
import "./NodeVersion.js"
import packageJson from "../../package.json" with { type: "json" }

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`${packageJson.version}\n`)
} else {
  (await import("../Tools/SecretEnv.js")).capture()
  await import("./Program.js")
}
