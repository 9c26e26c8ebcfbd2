/**
 * `npm run docs`: regenerates `docs/reference/` (see `scripts/Catalogs.ts`).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Catalogs from "./Catalogs.js"

const root = fileURLToPath(new URL("../", import.meta.url))
for (const catalog of Catalogs.all(root)) {
  const file = Path.join(root, catalog.path)
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, catalog.content)
  process.stdout.write(`wrote ${catalog.path}\n`)
}
