import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type * as FileSystem from "effect/FileSystem"
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
  self.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env, preserveEmptyStrings: true })), Effect.provide(NodeFileSystem.layer))

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

  it.effect("[issue 26] openai-compatible reads OPENAI_COMPATIBLE_API_KEY, never OPENAI_API_KEY; --api-key-env names another variable", () =>
    Effect.gen(function*() {
      const base = { provider: Option.some("openai-compatible" as const), baseUrl: Option.some("http://127.0.0.1:9/v1"), model: Option.some("m") }
      const keyOf = (choice: ProviderChoice.Choice) =>
        choice._tag === "Remote" && choice.apiKey !== undefined ? Redacted.value(choice.apiKey) : undefined
      const own = yield* ProviderChoice.resolve(flags(base)).pipe(
        withEnv({ OPENAI_API_KEY: "sk-openai", OPENAI_COMPATIBLE_API_KEY: "sk-compat" })
      )
      expect(keyOf(own)).toBe("sk-compat")
      const none = yield* ProviderChoice.resolve(flags(base)).pipe(withEnv({ OPENAI_API_KEY: "sk-openai" }))
      expect(keyOf(none)).toBeUndefined()
      const named = yield* ProviderChoice.resolve(flags({ ...base, apiKeyEnv: Option.some("MY_GATEWAY_KEY") })).pipe(
        withEnv({ OPENAI_API_KEY: "sk-openai", MY_GATEWAY_KEY: "sk-mine" })
      )
      expect(keyOf(named)).toBe("sk-mine")
      const unset = yield* ProviderChoice.resolve(flags({ ...base, apiKeyEnv: Option.some("NOPE_KEY") })).pipe(withEnv({}), Effect.flip)
      expect(unset.message).toBe("--api-key-env names NOPE_KEY, which is not set")
      const bad = yield* ProviderChoice.resolve(flags({ ...base, apiKeyEnv: Option.some("A-B") })).pipe(withEnv({}), Effect.flip)
      expect(bad.exitCode).toBe(2)
    }))

  it.effect("[issue 26] OPENAI_API_KEY goes to https://api.openai.com only, unless --api-key-env names it", () =>
    Effect.gen(function*() {
      const env = withEnv({ OPENAI_API_KEY: "sk-openai" })
      const elsewhere = yield* ProviderChoice.resolve(flags({ provider: Option.some("openai"), baseUrl: Option.some("http://x.test/v1") })).pipe(
        env,
        Effect.flip
      )
      expect(elsewhere.message).toBe(
        "refusing to send OPENAI_API_KEY to x.test (it only goes to api.openai.com); name the key's variable with --api-key-env NAME"
      )
      expect(elsewhere.exitCode).toBe(2)
      // detected from the environment, with a --base-url elsewhere: refused the same way
      const detected = yield* ProviderChoice.resolve(flags({ baseUrl: Option.some("https://proxy.example/v1") })).pipe(env, Effect.flip)
      expect(detected.message).toContain("refusing to send OPENAI_API_KEY to proxy.example")
      // plain http to OpenAI's host is not OpenAI's API either
      const http = yield* ProviderChoice.resolve(flags({ provider: Option.some("openai"), baseUrl: Option.some("http://api.openai.com/v1") })).pipe(env, Effect.flip)
      expect(http.message).toContain("refusing to send OPENAI_API_KEY")
      const official = yield* ProviderChoice.resolve(flags({ provider: Option.some("openai") })).pipe(env)
      expect(official._tag === "Remote" && official.provider).toBe("openai")
      const explicit = yield* ProviderChoice.resolve(flags({
        provider: Option.some("openai"),
        baseUrl: Option.some("http://x.test/v1"),
        apiKeyEnv: Option.some("OPENAI_API_KEY")
      })).pipe(env)
      expect(explicit._tag === "Remote" && explicit.baseUrl).toBe("http://x.test/v1")
      expect(ProviderChoice.isOpenAiUrl("https://api.openai.com/v1")).toBe(true)
      expect(ProviderChoice.isOpenAiUrl("https://api.openai.com.evil.test/v1")).toBe(false)
      expect(ProviderChoice.isOpenAiUrl("https://api.openai.com:8443/v1")).toBe(false)
    }))
})

