import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as Catalogs from "../../scripts/Catalogs.js"

const repo = fileURLToPath(new URL("../../", import.meta.url))
const read = (path: string): string | undefined => {
  const file = Path.join(repo, path)
  return Fs.existsSync(file) ? Fs.readFileSync(file, "utf8") : undefined
}

describe("generated catalogs (issue 18)", () => {
  it("every committed catalog under docs/reference equals a fresh generation (run `npm run docs` after a change)", () => {
    expect(Catalogs.drift(Catalogs.all(repo), read)).toEqual([])
  })

  it("the drift check reports a stale or missing catalog", () => {
    const generated = Catalogs.all(repo)
    const stale = generated[0]!.path
    expect(Catalogs.drift(generated, (path) => (path === stale ? "# edited by hand\n" : read(path)))).toEqual([stale])
    expect(Catalogs.drift(generated, () => undefined)).toEqual(generated.map((c) => c.path))
  })
})
