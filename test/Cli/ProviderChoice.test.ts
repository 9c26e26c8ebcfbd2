import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ProviderChoice from "../../src/Cli/ProviderChoice.js"

const flags = (over: Partial<ProviderChoice.Flags> = {}): ProviderChoice.Flags => ({
  provider: Option.none(),
  model: Option.none(),
  baseUrl: Option.none(),
  script: Option.none(),
  ...over
})

const withEnv = (env: Record<string, string>) => <A, E>(self: Effect.Effect<A, E, FileSystem.FileSystem>) =>
  self.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.provide(NodeFileSystem.layer))

describe("ProviderChoice", () => {
  it.effect("no key and no flag → the offline demo model", () =>
    Effect.gen(function*() {
      const choice = yield* ProviderChoice.resolve(flags()).pipe(withEnv({}))
      expect(choice).toEqual({ _tag: "Scripted", scriptFile: undefined, model: "demo" })
    }))

  it.effect("first key present in the order DEEPSEEK, ANTHROPIC, OPENAI wins", () =>
    Effect.gen(function*() {
      const choice = yield* ProviderChoice.resolve(flags()).pipe(
        withEnv({ OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a" })
      )
      expect(choice._tag === "Remote" && choice.provider).toBe("anthropic")
      expect(choice._tag === "Remote" && choice.via).toBe("env")
      expect(choice._tag === "Remote" && choice.apiKey !== undefined && Redacted.value(choice.apiKey)).toBe("sk-a")
      // the key never shows in a rendering of the choice
      expect(JSON.stringify(choice)).not.toContain("sk-a")
      expect(String(choice._tag === "Remote" ? choice.apiKey : "")).not.toContain("sk-a")
    }))

  it.effect("explicit provider without its key → usage error naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* ProviderChoice.resolve(flags({ provider: Option.some("deepseek") })).pipe(
        withEnv({ ANTHROPIC_API_KEY: "x" }),
        Effect.flip
      )
      expect(error.message).toBe("missing API key for provider deepseek: set DEEPSEEK_API_KEY")
      expect(error.exitCode).toBe(2)
    }))

  it.effect("openai-compatible needs a base URL and a model, not a key", () =>
    Effect.gen(function*() {
      const noUrl = yield* ProviderChoice.resolve(flags({ provider: Option.some("openai-compatible") })).pipe(
        withEnv({}),
        Effect.flip
      )
      expect(noUrl.message).toContain("--base-url")
      const ok = yield* ProviderChoice.resolve(flags({
        provider: Option.some("openai-compatible"),
        baseUrl: Option.some("http://127.0.0.1:8000/v1"),
        model: Option.some("qwen")
      })).pipe(withEnv({}))
      expect(ok).toMatchObject({ _tag: "Remote", provider: "openai-compatible", model: "qwen", apiKey: undefined })
    }))

  it.effect("--script implies the scripted provider", () =>
    Effect.gen(function*() {
      const choice = yield* ProviderChoice.resolve(flags({ script: Option.some("s.json") })).pipe(
        withEnv({ DEEPSEEK_API_KEY: "k" })
      )
      expect(choice).toEqual({ _tag: "Scripted", scriptFile: "s.json", model: "demo" })
    }))
})
