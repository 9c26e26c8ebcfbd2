/**
 * `npm run bench`: runs every `bench/*.bench.ts` module (each exports `run(): Promise<void>` that
 * prints JSON lines through `Bench.report`), in file-name order, or only those named on the
 * command line (`npm run bench -- assembler`).
 */
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()

for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { run?: () => Promise<void> }
  if (mod.run === undefined) throw new Error(`${file} does not export run()`)
  await mod.run()
}
