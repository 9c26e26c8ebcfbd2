/**
 * Bundles a child-process script of the persistence tests (crash matrix, readers, resources) into one CommonJS
 * file that a plain `node` can run (the SQLite backend runs on Node's built-in `node:sqlite`: nothing is left
 * external).
 */
import * as esbuild from "esbuild"

/** Bundles `entry` to `outfile`. */
export const bundleChild = (entry: string, outfile: string): Promise<unknown> =>
  esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    outfile,
    logLevel: "silent"
  })
