import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as Catalogs from "../../scripts/Catalogs.js"
import * as ErrorCatalog from "../../scripts/ErrorCatalog.js"

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

describe("error-code catalog (issue 18)", () => {
  const source = (text: string) => [{ path: "src/X.ts", text }]

  it("reads codes from a literal field, a named literal schema and a code property", () => {
    const classes = ErrorCatalog.errorClasses(source(
      [
        "/** First. More. */",
        'export class A extends Schema.TaggedError<A>()("A", {',
        '  code: Schema.Literals(["AUTH", "SERVER"]),',
        "  message: Schema.String",
        "}) {}",
        'export const BCode = Schema.Literals(["NOT_FOUND", "NO_MATCH"])',
        "/** Second. */",
        'export class B extends Schema.TaggedError<B>()("B", {',
        "  code: BCode,",
        "}) {}",
        "/** Third. */",
        'export class C extends Schema.TaggedError<C>()("C", {',
        "  message: Schema.String",
        "}) {",
        '  readonly code = "MCP_TIMEOUT" as const',
        "}",
        ""
      ].join("\n")
    ))
    expect(classes.map((c) => [c.tag, c.summary, c.codes])).toEqual([
      ["A", "First.", ["AUTH", "SERVER"]],
      ["B", "Second.", ["NOT_FOUND", "NO_MATCH"]],
      ["C", "Third.", ["MCP_TIMEOUT"]]
    ])
  })

  it("refuses to generate a code nobody has described", () => {
    const text = 'export class D extends Schema.TaggedError<D>()("D", {\n  code: Schema.Literal("BRAND_NEW_CODE"),\n}) {}\n'
    expect(() => ErrorCatalog.render([...source(text), { path: "src/Loop/Codes.ts", text: loopCodesText }])).toThrow(/BRAND_NEW_CODE/)
  })

  it("provider codes state the retry decision and the exit code the CLI uses", () => {
    const catalog = Catalogs.errorCodes(repo).content
    expect(catalog).toContain("| `RATE_LIMIT` | the provider is rate limiting (429, or its in-band rate-limit error) | yes | 3 |")
    expect(catalog).toContain("| `AUTH` | the provider rejected the API key (401/403) | no | 3 |")
    expect(catalog).toMatch(/\| `PERSISTENCE_FAILED` \| [^|]+ \| 4 \|/)
  })
})

describe("CLI reference (issue 18)", () => {
  it("lists every command with its usage and options, and the exit codes", () => {
    const reference = Catalogs.cli().content
    for (const command of ["harness run", "harness chat", "harness sessions list", "harness sessions fork", "harness mcp tools"]) {
      expect(reference).toContain(`### ${command}\n`)
    }
    expect(reference).toContain("| `--max-steps integer` |")
    expect(reference).toContain("| `141` |")
  })
})

// every loop code the catalog lists, as a source text that contains them
const loopCodesText = ["UNKNOWN_TOOL", "TOOL_TIMEOUT", "INTERRUPTED", "COMPACTION_SUMMARY_FAILED", "COMPACTION_NOTHING_TO_DO", "COMPACTION_STALLED"]
  .map((c) => `"${c}"`).join(" ")
