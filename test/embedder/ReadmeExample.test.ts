/**
 * The README's "Use it as a library" example is `test/embedder/readme-example.ts` (type-checked with the
 * tests): the README shows the same text, with the package's name where the file imports its source, and the
 * example runs here against a temporary workspace.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { ask } from "./readme-example.js"

const repo = fileURLToPath(new URL("../../", import.meta.url))

/** The fenced `ts` blocks of a markdown section. */
const blocksOf = (markdown: string, heading: string): ReadonlyArray<string> => {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  if (start < 0) return []
  const end = markdown.indexOf("\n## ", start + 1)
  const section = markdown.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

describe("the README's library example", () => {
  it("is the type-checked example file, word for word", () => {
    const file = Fs.readFileSync(Path.join(repo, "test/embedder/readme-example.ts"), "utf8")
    const shown = blocksOf(Fs.readFileSync(Path.join(repo, "README.md"), "utf8"), "Use it as a library")
    expect(shown).toEqual([file.replace('from "../../src/index.js"', 'from "effect-harness"')])
  })

  it("a changed example is noticed", () => {
    expect(blocksOf("# x\n\n## Use it as a library\n\n```ts\nconst a = 1\n```\n\n## Next\n```ts\nb\n```\n", "Use it as a library"))
      .toEqual(["const a = 1\n"])
  })

  it.live("runs: the agent lists the workspace and answers", () => {
    const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "readme-example-")))
    const cwd = Path.join(root, "project")
    Fs.mkdirSync(cwd)
    Fs.writeFileSync(Path.join(cwd, "notes.txt"), "x\n")
    return ask(cwd, "What is in this workspace?").pipe(
      Effect.map((answer) => expect(answer).toBe("It holds notes.txt.")),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({
        HOME: root,
        EFFECT_HARNESS_HOME: Path.join(root, ".harness")
      })),
      Effect.ensuring(Effect.sync(() => Fs.rmSync(root, { recursive: true, force: true })))
    )
  }, 30_000)
})
