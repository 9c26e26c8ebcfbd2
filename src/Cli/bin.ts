#!/usr/bin/env node
/**
 * The `harness` bin of the package (`dist-bundle/harness.mjs`): a small entry that checks the Node.js
 * version (`NodeVersion`: one line and exit 2 below the floor), answers `--version` from
 * `package.json`, and otherwise loads the program bundle beside it (`dist-bundle/program.mjs`, the
 * bundle of `main.ts`). Two bundles, not one: `--version` and an old Node.js never parse the
 * program (Effect, undici, the tools: about 4 MB); esbuild's code splitting is not used because it
 * loses the names a module re-exports from a CommonJS package (`@effect/platform-node/Undici`).
 *
 * @since 0.1.0
 */
import "./NodeVersion.js"
import packageJson from "../../package.json" with { type: "json" }

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`${packageJson.version}\n`)
} else {
  // a computed specifier: esbuild leaves it to Node at run time
  const load = (specifier: string): Promise<unknown> => import(specifier)
  await load(new URL("./program.mjs", import.meta.url).href)
}
