import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as NodeOs from "node:os"
import * as Help from "../../src/Cli/Help.js"
import * as Settings from "../../src/Workspace/Settings.js"
import * as DataDir from "../../src/Session/persistence/DataDir.js"

const footer = Help.renderFooter(false).replace(/\s+/g, " ")
const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))
const tilde = (path: string): string => path.replace(NodeOs.homedir(), "~")

describe("Help (issue 26: the documented default data directory is the one used)", () => {
  it.effect.skipIf(process.platform !== "linux")("EFFECT_HARNESS_HOME's documented defaults match DataDir and Settings", () =>
    Effect.gen(function*() {
      const empty = withEnv({})
      const data = yield* DataDir.harnessHome.pipe(empty)
      expect(tilde(data)).toBe("~/.local/share/effect-harness")
      // sessions live in <home>/sessions, and the help says so (issue 34)
      const sessions = yield* DataDir.sessionsRoot.pipe(empty)
      expect(footer).toContain(`$XDG_DATA_HOME/effect-harness/sessions, else ${tilde(sessions)}`)
      const xdg = yield* DataDir.harnessHome.pipe(withEnv({ XDG_DATA_HOME: "/x" }))
      expect(xdg).toBe("/x/effect-harness")
      const settings = yield* Settings.locations("/w").pipe(
        withEnv({ HOME: NodeOs.homedir() }),
        Effect.provide(NodePath.layer)
      )
      expect(footer).toContain(`settings.json and AGENTS.md in ${tilde(settings.home)}`)
      expect(footer).toContain("OPENAI_COMPATIBLE_API_KEY, --api-key-env NAME")
    }))

  it("[issue 34] the footer wraps: no line is wider than FOOTER_WIDTH columns (the longest term excepted)", () => {
    const lines = Help.renderFooter(false).split("\n")
    const terms = new Set(Help.footer.flatMap((s) => s.rows.map(([term]) => `  ${term}`)))
    const wide = lines.filter((l) => l.length > Help.FOOTER_WIDTH && !terms.has(l))
    expect(wide).toEqual([])
    expect(lines.length).toBeGreaterThan(Help.footer.length * 2)
  })
})
