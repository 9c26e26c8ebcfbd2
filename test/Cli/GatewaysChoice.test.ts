/**
 * `--provider` over the gateway and local-server profiles (issue 11): every profile of
 * `OpenAiCompatible.profiles` is a CLI provider with its key variable, default model and route;
 * missing keys and incomplete configuration are one-line usage errors (exit 2); gateway keys never
 * pick a provider by themselves (the offline default is unchanged); every key variable is captured
 * by `SecretEnv`. The environment is a `ConfigProvider` map (no process environment involved).
 */
import type * as FileSystem from "effect/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as ProviderChoice from "../../src/Cli/ProviderChoice.js"
import * as SecretEnv from "../../src/Tools/SecretEnv.js"

const flags = (provider: ProviderChoice.ProviderName | undefined, over: Partial<ProviderChoice.Flags> = {}): ProviderChoice.Flags => ({
  provider: Option.fromNullishOr(provider),
  model: Option.none(),
  baseUrl: Option.none(),
  script: Option.none(),
  ...over
})

// the provider choice reads a script file's model through the FileSystem service
// empty values are values, as in the CLI's own provider (Defaults.provider)
const withEnv = (env: Record<string, string>) => <A, E>(effect: Effect.Effect<A, E, FileSystem.FileSystem>) =>
  effect.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env, preserveEmptyStrings: true })), Effect.provide(NodeFileSystem.layer))

const remote = (choice: ProviderChoice.Choice): ProviderChoice.Remote => {
  if (choice._tag !== "Remote") throw new Error(`expected a remote choice, got ${choice._tag}`)
  return choice
}

const keyed = [
  { provider: "gemini", keyVar: "GEMINI_API_KEY", model: "gemini-2.5-flash", route: "gemini" },
  { provider: "openrouter", keyVar: "OPENROUTER_API_KEY", model: "openai/gpt-4.1-mini", route: "openrouter" },
  { provider: "groq", keyVar: "GROQ_API_KEY", model: "llama-3.3-70b-versatile", route: "groq" },
  { provider: "together", keyVar: "TOGETHER_API_KEY", model: "meta-llama/Llama-3.3-70B-Instruct-Turbo", route: "together" }
] as const

const local = [
  { provider: "ollama", model: "llama3.2", url: "http://localhost:11434/v1", keyVar: "OLLAMA_API_KEY" },
  { provider: "vllm", model: undefined, url: "http://localhost:8000/v1", keyVar: "VLLM_API_KEY" },
  { provider: "llamacpp", model: "local", url: "http://localhost:8080/v1", keyVar: "LLAMACPP_API_KEY" },
  { provider: "lmstudio", model: undefined, url: "http://localhost:1234/v1", keyVar: "LMSTUDIO_API_KEY" }
] as const

describe("ProviderChoice over the gateway profiles (issue 11)", () => {
  it("[P-12, DEC-5] every OpenAI-compatible profile is a --provider (generic as openai-compatible) and every key variable is captured by SecretEnv", () => {
    const names = Object.keys(OpenAiCompatible.profiles).map((p) => p === "generic" ? "openai-compatible" : p)
    expect(ProviderChoice.providers).toEqual(expect.arrayContaining(names))
    for (const name of names) expect(ProviderChoice.specs[name as ProviderChoice.RemoteName].profile).toBe(name === "openai-compatible" ? "generic" : name)
    for (const variable of ProviderChoice.keyVariables) expect(SecretEnv.PROVIDER_KEY_VARIABLES).toContain(variable)
  })

  it.effect("[P-12] gateways: key from <PROFILE>_API_KEY, default model, the profile's route, adapter options of the profile", () =>
    Effect.gen(function*() {
      for (const c of keyed) {
        const choice = remote(yield* ProviderChoice.resolve(flags(c.provider)).pipe(withEnv({ [c.keyVar]: `sk-${c.provider}` })))
        expect(choice).toMatchObject({ provider: c.provider, route: c.route, model: c.model, baseUrl: undefined, azure: undefined, via: "flag" })
        expect(choice.apiKey !== undefined && Redacted.value(choice.apiKey)).toBe(`sk-${c.provider}`)
        expect(JSON.stringify(choice)).not.toContain(`sk-${c.provider}`)
        expect(ProviderChoice.adapterOptions(choice)).toMatchObject({ profile: c.provider, baseUrl: undefined })
        // --model and --base-url override the defaults
        const over = remote(yield* ProviderChoice.resolve(flags(c.provider, { model: Option.some("m2"), baseUrl: Option.some("http://127.0.0.1:9/v1") })).pipe(withEnv({ [c.keyVar]: "k" })))
        expect(over).toMatchObject({ model: "m2", baseUrl: "http://127.0.0.1:9/v1" })
      }
    }))

  it.effect("[P-12] a gateway without its key: one line naming the variable, exit 2 (another gateway's key does not stand in)", () =>
    Effect.gen(function*() {
      for (const c of keyed) {
        const error = yield* Effect.flip(ProviderChoice.resolve(flags(c.provider)).pipe(withEnv({ AZURE_OPENAI_API_KEY: "x", GROQ_API_KEY: c.provider === "groq" ? "" : "g" })))
        if (c.provider === "groq") {
          // an empty key is configuration the adapter rejects, in one line
          expect(error.message).toBe("invalid configuration for provider groq: the API key is empty")
        } else {
          expect(error.message).toBe(`missing API key for provider ${c.provider}: set ${c.keyVar}`)
        }
        expect(error.exitCode).toBe(2)
      }
    }))

  it.effect("[P-11, P-12] local servers: no key needed (an optional one is read), localhost defaults, --model required where the name must match", () =>
    Effect.gen(function*() {
      for (const c of local) {
        const model = c.model === undefined ? { model: Option.some("served-model") } : {}
        const choice = remote(yield* ProviderChoice.resolve(flags(c.provider, model)).pipe(withEnv({})))
        expect(choice).toMatchObject({ provider: c.provider, route: c.provider, model: c.model ?? "served-model", apiKey: undefined })
        const resolved = yield* OpenAiCompatible.resolve(ProviderChoice.adapterOptions(choice))
        expect(resolved.baseUrl).toBe(c.url)
        const withKey = remote(yield* ProviderChoice.resolve(flags(c.provider, model)).pipe(withEnv({ [c.keyVar]: "local-key" })))
        expect(withKey.apiKey !== undefined && Redacted.value(withKey.apiKey)).toBe("local-key")
        if (c.model === undefined) {
          const error = yield* Effect.flip(ProviderChoice.resolve(flags(c.provider)).pipe(withEnv({})))
          expect(error).toMatchObject({ message: `provider ${c.provider} needs --model`, exitCode: 2 })
        }
      }
    }))

  it.effect("[P-11, P-12] azure: endpoint from --base-url or AZURE_OPENAI_ENDPOINT, deployment from AZURE_OPENAI_DEPLOYMENT or --model, api-version env > OPENAI_API_VERSION > default", () =>
    Effect.gen(function*() {
      const key = { AZURE_OPENAI_API_KEY: "az-key" }
      const missingKey = yield* Effect.flip(ProviderChoice.resolve(flags("azure", { model: Option.some("d") })).pipe(withEnv({})))
      expect(missingKey.message).toBe("missing API key for provider azure: set AZURE_OPENAI_API_KEY")
      const noEndpoint = yield* Effect.flip(ProviderChoice.resolve(flags("azure", { model: Option.some("d") })).pipe(withEnv(key)))
      expect(noEndpoint).toMatchObject({ exitCode: 2 })
      expect(noEndpoint.message).toMatch(/^provider azure needs --base-url or AZURE_OPENAI_ENDPOINT/)
      const noDeployment = yield* Effect.flip(ProviderChoice.resolve(flags("azure")).pipe(withEnv({ ...key, AZURE_OPENAI_ENDPOINT: "https://r.openai.azure.com" })))
      expect(noDeployment.message).toBe("provider azure needs --model or AZURE_OPENAI_DEPLOYMENT (the deployment name)")

      const byModel = remote(yield* ProviderChoice.resolve(flags("azure", { model: Option.some("gpt4o-prod") })).pipe(withEnv({ ...key, AZURE_OPENAI_ENDPOINT: "https://r.openai.azure.com" })))
      expect(byModel).toMatchObject({ route: "azure-openai", model: "gpt4o-prod", baseUrl: "https://r.openai.azure.com", azure: { deployment: "gpt4o-prod", apiVersion: OpenAiCompatible.defaultAzureApiVersion } })
      expect(ProviderChoice.adapterOptions(byModel)).toMatchObject({ profile: "azure", deployment: "gpt4o-prod", apiVersion: OpenAiCompatible.defaultAzureApiVersion })

      const byEnv = remote(yield* ProviderChoice.resolve(flags("azure", { baseUrl: Option.some("https://flag.openai.azure.com") })).pipe(withEnv({
        ...key,
        AZURE_OPENAI_ENDPOINT: "https://env.openai.azure.com",
        AZURE_OPENAI_DEPLOYMENT: "dep",
        OPENAI_API_VERSION: "2024-06-01"
      })))
      expect(byEnv).toMatchObject({ model: "dep", baseUrl: "https://flag.openai.azure.com", azure: { deployment: "dep", apiVersion: "2024-06-01" } })
      const both = remote(yield* ProviderChoice.resolve(flags("azure", { model: Option.some("gpt-4o") })).pipe(withEnv({
        ...key,
        AZURE_OPENAI_ENDPOINT: "https://env.openai.azure.com",
        AZURE_OPENAI_DEPLOYMENT: "dep",
        AZURE_OPENAI_API_VERSION: "2025-04-01-preview",
        OPENAI_API_VERSION: "2024-06-01"
      })))
      expect(both).toMatchObject({ model: "gpt-4o", azure: { deployment: "dep", apiVersion: "2025-04-01-preview" } })
    }))

  it.effect("[P-12] an invalid --base-url is one line from the adapter's validation, exit 2", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ProviderChoice.resolve(flags("ollama", { baseUrl: Option.some("localhost:11434") })).pipe(withEnv({})))
      expect(error).toMatchObject({ message: "invalid configuration for provider ollama: invalid base URL \"localhost:11434\"", exitCode: 2 })
      expect(error.message).not.toMatch(/\n/)
    }))

  it.effect("[P-12, issue 7] gateway keys alone never choose a provider: the offline demo stays the default", () =>
    Effect.gen(function*() {
      const env = Object.fromEntries(ProviderChoice.keyVariables.filter((v) => !["DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"].includes(v)).map((v) => [v, "k"]))
      expect(Object.keys(env)).toContain("GEMINI_API_KEY")
      const choice = yield* ProviderChoice.resolve(flags(undefined)).pipe(withEnv(env))
      expect(choice).toEqual({ _tag: "Scripted", scriptFile: undefined, model: "demo" })
    }))
})
