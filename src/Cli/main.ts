#!/usr/bin/env node
/**
 * The `harness` bin entry. It first checks the Node.js version (`NodeVersion`: one line and exit 2
 * below the floor), answers `--version` from `package.json` without loading Effect (cold start),
 * and otherwise loads the program (`Program.ts`) lazily: the `bundle` script splits at that dynamic
 * import, so `dist-bundle/harness.mjs` is a small entry and the program (Effect, undici, the tools)
 * is a chunk in `dist-bundle/chunks/` that `--version` and an old Node.js never parse.
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
