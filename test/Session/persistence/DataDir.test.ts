import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as path from "node:path"
import * as DataDir from "../../../src/Session/persistence/DataDir.js"

const withEnv = (env: Record<string, string>) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.provideService(self, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))

describe("DataDir", () => {
  it.effect("EFFECT_HARNESS_HOME wins: sessions root and database live under it", () =>
    Effect.gen(function*() {
      const env = withEnv({ EFFECT_HARNESS_HOME: "/srv/harness", XDG_DATA_HOME: "/xdg" })
      expect(yield* env(DataDir.sessionsRoot)).toBe(path.join("/srv/harness", "sessions"))
      expect(yield* env(DataDir.sqliteFile)).toBe(path.join("/srv/harness", "sessions.sqlite"))
    }))

  it.effect("per-user data directory otherwise (XDG_DATA_HOME when absolute, else ~/.local/share)", () =>
    Effect.gen(function*() {
      const xdg = yield* withEnv({ XDG_DATA_HOME: "/xdg" })(DataDir.sessionsRoot)
      const relative = yield* withEnv({ XDG_DATA_HOME: "relative/dir" })(DataDir.sessionsRoot)
      const none = yield* withEnv({})(DataDir.sessionsRoot)
      const home = os.homedir()
      if (process.platform === "darwin") {
        expect(none).toBe(path.join(home, "Library", "Application Support", "effect-harness", "sessions"))
      } else if (process.platform !== "win32") {
        expect(xdg).toBe("/xdg/effect-harness/sessions")
        expect(relative).toBe(path.join(home, ".local", "share", "effect-harness", "sessions"))
        expect(none).toBe(path.join(home, ".local", "share", "effect-harness", "sessions"))
      }
    }))
})
