/**
 * Bundles a child-process script of the persistence tests (crash matrix, readers, resources) into one CommonJS
 * file that a plain `node` can run, with the SQLite native addon left external.
 */
import * as esbuild from "esbuild"

/** Bundles `entry` to `outfile`. */
export const bundleChild = (entry: string, outfile: string): Promise<unknown> =>
  esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    outfile,
    external: ["better-sqlite3"],
    logLevel: "silent"
  })
