import { describe, expect, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Defaults from "../../src/Cli/Defaults.js"

describe("Defaults (issue 15: settings defaults, flags win)", () => {
  it("reads --cwd / --settings values from a command line, not after --", () => {
    expect(Defaults.flagValue(["run", "--cwd", "/a", "x"], "--cwd")).toBe("/a")
    expect(Defaults.flagValue(["run", "--settings=/s.json"], "--settings")).toBe("/s.json")
    expect(Defaults.flagValue(["run", "--", "--cwd", "/a"], "--cwd")).toBeUndefined()
  })

  it.effect("the defaults answer their namespaced config; the environment does not spell it", () =>
    Effect.gen(function*() {
      const model = yield* Defaults.config(Config.String("model")).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, Defaults.provider({ model: "m1", store: "sqlite" }))
      )
      expect(model).toBe("m1")
      const missing = yield* Effect.result(Defaults.config(Config.String("provider")).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, Defaults.provider({}))
      ))
      expect(missing._tag).toBe("Failure")
    }))
})
