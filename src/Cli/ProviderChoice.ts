/**
 * Which model the CLI talks to (issues 7 and 11), rule P-12: an explicit `--provider` wins; else the first of
 * `DEEPSEEK_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` present in the environment; else the
 * keyless offline demo model (the scripted adapter with a built-in script), announced on stderr.
 * The gateway and local-server providers are only ever chosen with `--provider` (their keys are
 * often set for other tools; a prompt is never sent to one by surprise).
 *
 * Providers ({@link specs}): `deepseek`, `anthropic`, `openai`, a generic `openai-compatible`
 * server, and every gateway profile of `OpenAiCompatible.profiles` under its profile name:
 * `gemini` (`GEMINI_API_KEY`), `openrouter` (`OPENROUTER_API_KEY`), `groq` (`GROQ_API_KEY`),
 * `together` (`TOGETHER_API_KEY`), `azure` (`AZURE_OPENAI_API_KEY`, see below) and the local
 * servers `ollama`, `vllm`, `llamacpp` (llama.cpp server), `lmstudio`, which need no key (an
 * optional one is read from `VLLM_API_KEY`, `LLAMACPP_API_KEY`, `OLLAMA_API_KEY`,
 * `LMSTUDIO_API_KEY` and sent as a bearer token) and default to their usual `localhost` port.
 * `--base-url` overrides every default base URL.
 *
 * Azure OpenAI: the resource endpoint from `--base-url` or `AZURE_OPENAI_ENDPOINT`
 * (`https://<resource>.openai.azure.com`, required), the deployment from `AZURE_OPENAI_DEPLOYMENT`
 * or else `--model` (Azure routes by deployment; the body's `model` is informational), the
 * `api-version` from `AZURE_OPENAI_API_VERSION`, else `OPENAI_API_VERSION` (the SDKs' name), else
 * `OpenAiCompatible.defaultAzureApiVersion`. The key travels in the `api-key` header.
 *
 * Keys and hosts (issue 26): `--api-key-env NAME` reads the key from the variable `NAME` instead of
 * the provider's own (`openai-compatible` reads `OPENAI_COMPATIBLE_API_KEY`, never
 * `OPENAI_API_KEY`). `OPENAI_API_KEY` read by default is sent only to `https://api.openai.com`:
 * with a `--base-url` elsewhere (e.g. `--provider openai --base-url http://x`, or the provider
 * detected from `OPENAI_API_KEY` with a `--base-url`) the choice is refused with one line, unless
 * `--api-key-env` names the variable (the user's explicit wish).
 *
 * An explicit provider without its required key is a usage error (exit 2) naming the variable to
 * set; any other invalid configuration (bad base URL, no model, no Azure endpoint) is checked here
 * with the adapter's own validation and reported in one line. Keys stay `Redacted` until the HTTP
 * edge; they never appear in output, logs or files. Keys captured at start-up by {@link SecretEnv}
 * (and removed from the environment there) come first.
 *
 * Default models (override with `--model`, advisory): DeepSeek `deepseek-v4-flash` (P-1),
 * Anthropic `claude-sonnet-4-5`, OpenAI `gpt-4.1-mini`, Gemini `gemini-2.5-flash`, OpenRouter
 * `openai/gpt-4.1-mini`, Groq `llama-3.3-70b-versatile`, Together
 * `meta-llama/Llama-3.3-70B-Instruct-Turbo`, Ollama `llama3.2`, llama.cpp `local` (the server
 * answers with the one model it loaded, whatever the name). A generic `openai-compatible` server,
 * vLLM and LM Studio (the name must match what the server serves) and Azure (the deployment) have
 * no default and need `--model`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as OpenAiCompatible from "../Adapter/OpenAiCompatible.js"
import type { ProviderName } from "../Adapter/ProviderNames.js"
import { CliError } from "./CliError.js"
import { ExitCode } from "./ExitCode.js"
import * as SecretEnv from "../Tools/SecretEnv.js"

/**
 * Providers the CLI knows (the one list, `Adapter/ProviderNames`).
 *
 * @since 0.1.0
 * @category models
 */
export { providers, type ProviderName } from "../Adapter/ProviderNames.js"

/**
 * A provider reached over HTTP.
 *
 * @since 0.1.0
 * @category models
 */
export type RemoteName = Exclude<ProviderName, "scripted">

/**
 * Azure OpenAI's addressing: the deployment (URL path) and the `api-version` (query).
 *
 * @since 0.1.0
 * @category models
 */
export interface AzureTarget {
  readonly deployment: string
  readonly apiVersion: string
}

/**
 * The resolved choice.
 *
 * @since 0.1.0
 * @category models
 */
export type Choice =
  | {
    readonly _tag: "Remote"
    readonly provider: RemoteName
    /** the route the adapter registers and the agent uses (e.g. `azure-openai` for `azure`) */
    readonly route: string
    readonly apiKey: Redacted.Redacted<string> | undefined
    readonly baseUrl: string | undefined
    readonly model: string
    /** Azure only */
    readonly azure: AzureTarget | undefined
    /** how the provider was chosen */
    readonly via: "flag" | "env"
  }
  | {
    readonly _tag: "Scripted"
    /** `undefined` = the built-in offline demo */
    readonly scriptFile: string | undefined
    /** the script file's text, read once by {@link resolve} (absent when it could not be read) */
    readonly scriptText?: string
    readonly model: string
  }

/**
 * A remote choice.
 *
 * @since 0.1.0
 * @category models
 */
export type Remote = Extract<Choice, { readonly _tag: "Remote" }>

/**
 * The flags that influence the choice.
 *
 * @since 0.1.0
 * @category models
 */
export interface Flags {
  readonly provider: Option.Option<ProviderName>
  readonly model: Option.Option<string>
  readonly baseUrl: Option.Option<string>
  readonly script: Option.Option<string>
  /** `--api-key-env NAME`: read the key from this variable instead of the provider's own */
  readonly apiKeyEnv?: Option.Option<string>
}

/**
 * How the CLI configures one remote provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spec {
  /** the adapter profile (`undefined`: the Anthropic adapter) */
  readonly profile: OpenAiCompatible.ProfileName | undefined
  /** environment variable of the key */
  readonly keyVariable: string
  /** a missing key is a usage error */
  readonly keyRequired: boolean
  /** `undefined`: `--model` is required */
  readonly defaultModel: string | undefined
  /** `undefined`: the profile's default base URL */
  readonly baseUrlVariable?: string | undefined
}

const gatewaySpec = (
  profile: OpenAiCompatible.ProfileName,
  defaultModel: string | undefined
): Spec => {
  const p = OpenAiCompatible.profiles[profile]
  return { profile, keyVariable: `${p.envPrefix}_API_KEY`, keyRequired: p.keyRequired, defaultModel }
}

/**
 * Reads a script file once (issue 26: `--script <(…)` is a pipe that can be read only once):
 * `undefined` when it cannot be read (the adapter's loader then reports why).
 *
 * @since 0.1.0
 * @category utils
 */
export const readScript = (file: string): Effect.Effect<string | undefined, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(Effect.orElseSucceed(() => undefined))

/**
 * The `"model"` a script's text names, if any (a malformed script is reported when the script is
 * loaded, not here).
 *
 * @since 0.1.0
 * @category utils
 */
export const scriptModel = (text: string): string | undefined => {
  try {
    const parsed = JSON.parse(text) as unknown
    const model = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)["model"] : undefined
    return typeof model === "string" && model !== "" ? model : undefined
  } catch {
    return undefined
  }
}

/**
 * The remote providers' configuration.
 *
 * @since 0.1.0
 * @category constants
 */
export const specs: { readonly [K in RemoteName]: Spec } = {
  deepseek: { profile: "deepseek", keyVariable: "DEEPSEEK_API_KEY", keyRequired: true, defaultModel: "deepseek-v4-flash" },
  anthropic: { profile: undefined, keyVariable: "ANTHROPIC_API_KEY", keyRequired: true, defaultModel: "claude-sonnet-4-5" },
  openai: { profile: "openai", keyVariable: "OPENAI_API_KEY", keyRequired: true, defaultModel: "gpt-4.1-mini" },
  "openai-compatible": {
    profile: "generic",
    keyVariable: "OPENAI_COMPATIBLE_API_KEY",
    keyRequired: false,
    defaultModel: undefined
  },
  gemini: gatewaySpec("gemini", "gemini-2.5-flash"),
  openrouter: gatewaySpec("openrouter", "openai/gpt-4.1-mini"),
  groq: gatewaySpec("groq", "llama-3.3-70b-versatile"),
  together: gatewaySpec("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
  azure: { ...gatewaySpec("azure", undefined), baseUrlVariable: "AZURE_OPENAI_ENDPOINT" },
  ollama: gatewaySpec("ollama", "llama3.2"),
  vllm: gatewaySpec("vllm", undefined),
  llamacpp: gatewaySpec("llamacpp", "local"),
  lmstudio: gatewaySpec("lmstudio", undefined)
}

/**
 * Every environment variable a provider key is read from (each is captured by `SecretEnv`).
 *
 * @since 0.1.0
 * @category constants
 */
export const keyVariables: ReadonlyArray<string> = [...new Set(Object.values(specs).map((s) => s.keyVariable))]

const usage = (message: string) => new CliError({ message, exitCode: ExitCode.Usage })

const secret = (name: string): Effect.Effect<Redacted.Redacted<string> | undefined, CliError> => {
  const captured = SecretEnv.providerKey(name)
  if (captured !== undefined) return Effect.succeed(captured)
  return Config.option(Config.Redacted(name)).pipe(
    Effect.map(Option.getOrUndefined),
    Effect.mapError(() => usage(`invalid value in ${name}`))
  )
}

const plain = (name: string): Effect.Effect<string | undefined, CliError> =>
  Config.option(Config.String(name)).pipe(
    Effect.map((value) => Option.getOrUndefined(Option.filter(value, (v) => v.trim() !== ""))),
    Effect.mapError(() => usage(`invalid value in ${name}`))
  )

const azureTarget = (model: string | undefined): Effect.Effect<{ model: string; azure: AzureTarget }, CliError> =>
  Effect.gen(function*() {
    const deployment = (yield* plain("AZURE_OPENAI_DEPLOYMENT")) ?? model
    if (deployment === undefined) {
      return yield* usage("provider azure needs --model or AZURE_OPENAI_DEPLOYMENT (the deployment name)")
    }
    const apiVersion = (yield* plain("AZURE_OPENAI_API_VERSION")) ?? (yield* plain("OPENAI_API_VERSION")) ??
      OpenAiCompatible.defaultAzureApiVersion
    return { model: model ?? deployment, azure: { deployment, apiVersion } }
  })

/**
 * The adapter options of an OpenAI-compatible remote choice (every provider but `anthropic`).
 *
 * @since 0.1.0
 * @category utils
 */
export const adapterOptions = (
  choice: Remote
): OpenAiCompatible.Options => ({
  profile: specs[choice.provider].profile ?? "generic",
  apiKey: choice.apiKey,
  baseUrl: choice.baseUrl,
  ...(choice.azure === undefined ? {} : { deployment: choice.azure.deployment, apiVersion: choice.azure.apiVersion })
})

// the adapter's own validation, reported as one line in the user's words
const configMessage = (error: Config.ConfigError): string =>
  error.cause._tag === "SourceError" ? error.cause.message : error.message

/**
 * The only host `OPENAI_API_KEY` is sent to when the user did not name it with `--api-key-env`.
 *
 * @since 0.1.0
 * @category constants
 */
export const OPENAI_HOST = "api.openai.com"

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * Whether a base URL is OpenAI's own API (`https://api.openai.com`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isOpenAiUrl = (url: string): boolean => {
  if (!URL.canParse(url)) return false
  const parsed = new URL(url)
  return parsed.protocol === "https:" && parsed.hostname === OPENAI_HOST && parsed.port === ""
}

const hostOf = (url: string): string => URL.canParse(url) ? new URL(url).host : url

const remote = (
  provider: RemoteName,
  flags: Flags,
  via: "flag" | "env"
): Effect.Effect<Choice, CliError> =>
  Effect.gen(function*() {
    const spec = specs[provider]
    const named = flags.apiKeyEnv === undefined ? undefined : Option.getOrUndefined(flags.apiKeyEnv)
    if (named !== undefined && !ENV_NAME.test(named)) {
      return yield* usage(`--api-key-env needs an environment variable name, not "${named}"`)
    }
    const keyVariable = named ?? spec.keyVariable
    const apiKey = yield* secret(keyVariable)
    if (named !== undefined && apiKey === undefined) {
      return yield* usage(`--api-key-env names ${named}, which is not set`)
    }
    if (apiKey === undefined && spec.keyRequired) {
      return yield* usage(`missing API key for provider ${provider}: set ${spec.keyVariable}`)
    }
    const baseUrl = Option.getOrUndefined(flags.baseUrl) ??
      (spec.baseUrlVariable === undefined ? undefined : yield* plain(spec.baseUrlVariable))
    const target = baseUrl ?? (spec.profile === undefined ? undefined : OpenAiCompatible.profiles[spec.profile].baseUrl)
    if (named === undefined && keyVariable === "OPENAI_API_KEY" && apiKey !== undefined && target !== undefined && !isOpenAiUrl(target)) {
      return yield* usage(
        `refusing to send OPENAI_API_KEY to ${hostOf(target)} (it only goes to ${OPENAI_HOST}); name the key's variable with --api-key-env NAME`
      )
    }
    if (provider === "openai-compatible" && baseUrl === undefined) {
      return yield* usage("provider openai-compatible needs --base-url (e.g. http://localhost:8000/v1)")
    }
    if (provider === "azure" && baseUrl === undefined) {
      return yield* usage(
        "provider azure needs --base-url or AZURE_OPENAI_ENDPOINT (e.g. https://my-resource.openai.azure.com)"
      )
    }
    const flagModel = Option.getOrUndefined(flags.model)
    const azure = provider === "azure" ? yield* azureTarget(flagModel) : undefined
    const model = azure?.model ?? flagModel ?? spec.defaultModel
    if (model === undefined) return yield* usage(`provider ${provider} needs --model`)
    const route = spec.profile === undefined ? provider : OpenAiCompatible.profiles[spec.profile].route
    const choice: Remote = { _tag: "Remote", provider, route, apiKey, baseUrl, model, azure: azure?.azure, via }
    if (spec.profile !== undefined) {
      yield* OpenAiCompatible.resolve(adapterOptions(choice)).pipe(
        Effect.mapError((error) => usage(`invalid configuration for provider ${provider}: ${configMessage(error)}`))
      )
    }
    return choice
  })

/**
 * Resolves the provider from flags and environment (through `Config`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (flags: Flags): Effect.Effect<Choice, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const explicit = Option.getOrUndefined(flags.provider)
    if (explicit === "scripted" || (explicit === undefined && Option.isSome(flags.script))) {
      const scriptFile = Option.getOrUndefined(flags.script)
      const scriptText = scriptFile === undefined ? undefined : yield* readScript(scriptFile)
      const fromScript = scriptText === undefined ? undefined : scriptModel(scriptText)
      return {
        _tag: "Scripted",
        scriptFile,
        ...(scriptText === undefined ? {} : { scriptText }),
        model: Option.getOrElse(flags.model, () => fromScript ?? "demo")
      } satisfies Choice
    }
    if (explicit !== undefined) return yield* remote(explicit, flags, "flag")
    for (const provider of ["deepseek", "anthropic", "openai"] as const) {
      const key = yield* secret(specs[provider].keyVariable)
      if (key !== undefined) return yield* remote(provider, flags, "env")
    }
    return { _tag: "Scripted", scriptFile: undefined, model: Option.getOrElse(flags.model, () => "demo") } satisfies Choice
  })
