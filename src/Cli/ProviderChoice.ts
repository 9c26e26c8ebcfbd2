/**
 * Which model the CLI talks to (issue 7): an explicit `--provider` wins; else the first of
 * `DEEPSEEK_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` present in the environment; else the
 * keyless offline demo model (the scripted adapter with a built-in script), announced on stderr.
 *
 * An explicit remote provider without its key is a usage error naming the variable to set. Keys
 * stay `Redacted` until the HTTP edge; they never appear in output, logs or files. Keys captured
 * at start-up by {@link SecretEnv} (and removed from the environment there) come first.
 *
 * Default models (override with `--model`): DeepSeek `deepseek-v4-flash` (the advisory default of
 * P-1), Anthropic `claude-sonnet-4-5`, OpenAI `gpt-4.1-mini`; a generic OpenAI-compatible server
 * (`--provider openai-compatible --base-url …`) has no default and needs `--model`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { CliError } from "./CliError.js"
import { ExitCode } from "./ExitCode.js"
import * as SecretEnv from "./SecretEnv.js"

/**
 * Providers the CLI knows.
 *
 * @since 0.1.0
 * @category models
 */
export const providers = ["deepseek", "anthropic", "openai", "openai-compatible", "scripted"] as const

/**
 * A provider name.
 *
 * @since 0.1.0
 * @category models
 */
export type ProviderName = (typeof providers)[number]

/**
 * The resolved choice.
 *
 * @since 0.1.0
 * @category models
 */
export type Choice =
  | {
    readonly _tag: "Remote"
    readonly provider: Exclude<ProviderName, "scripted">
    readonly apiKey: Redacted.Redacted<string> | undefined
    readonly baseUrl: string | undefined
    readonly model: string
    /** how the provider was chosen */
    readonly via: "flag" | "env"
  }
  | {
    readonly _tag: "Scripted"
    /** `undefined` = the built-in offline demo */
    readonly scriptFile: string | undefined
    readonly model: string
  }

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
}

const keyVariable: Record<Exclude<ProviderName, "scripted">, string> = {
  deepseek: "DEEPSEEK_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  "openai-compatible": "OPENAI_API_KEY"
}

/**
 * The `"model"` a script file names, if any (an unreadable or malformed script is reported when the
 * script is loaded, not here).
 *
 * @since 0.1.0
 * @category utils
 */
export const scriptModel = (file: string): Effect.Effect<string | undefined, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
    Effect.map((text) => {
      try {
        const parsed = JSON.parse(text) as unknown
        const model = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)["model"] : undefined
        return typeof model === "string" && model !== "" ? model : undefined
      } catch {
        return undefined
      }
    }),
    Effect.orElseSucceed(() => undefined)
  )

/**
 * The model each remote provider uses when no `--model` (or settings `model`) is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultModel: Record<Exclude<ProviderName, "scripted" | "openai-compatible">, string> = {
  deepseek: "deepseek-v4-flash",
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-4.1-mini"
}

const secret = (name: string): Effect.Effect<Redacted.Redacted<string> | undefined, CliError> => {
  const captured = SecretEnv.providerKey(name)
  if (captured !== undefined) return Effect.succeed(captured)
  return Config.option(Config.redacted(name)).pipe(
    Effect.map(Option.getOrUndefined),
    Effect.mapError(() => new CliError({ message: `invalid value in ${name}`, exitCode: ExitCode.Usage }))
  )
}

const remote = (
  provider: Exclude<ProviderName, "scripted">,
  flags: Flags,
  via: "flag" | "env"
): Effect.Effect<Choice, CliError> =>
  Effect.gen(function*() {
    const apiKey = yield* secret(keyVariable[provider])
    if (apiKey === undefined && provider !== "openai-compatible") {
      return yield* new CliError({
        message: `missing API key for provider ${provider}: set ${keyVariable[provider]}`,
        exitCode: ExitCode.Usage
      })
    }
    const baseUrl = Option.getOrUndefined(flags.baseUrl)
    if (provider === "openai-compatible" && baseUrl === undefined) {
      return yield* new CliError({
        message: "provider openai-compatible needs --base-url (e.g. http://localhost:8000/v1)",
        exitCode: ExitCode.Usage
      })
    }
    const model = Option.getOrUndefined(flags.model) ??
      (provider === "openai-compatible" ? undefined : defaultModel[provider])
    if (model === undefined) {
      return yield* new CliError({ message: `provider ${provider} needs --model`, exitCode: ExitCode.Usage })
    }
    return { _tag: "Remote", provider, apiKey, baseUrl, model, via } satisfies Choice
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
      const fromScript = Option.isNone(flags.model) && scriptFile !== undefined ? yield* scriptModel(scriptFile) : undefined
      return {
        _tag: "Scripted",
        scriptFile,
        model: Option.getOrElse(flags.model, () => fromScript ?? "demo")
      } satisfies Choice
    }
    if (explicit !== undefined) return yield* remote(explicit, flags, "flag")
    for (const provider of ["deepseek", "anthropic", "openai"] as const) {
      const key = yield* secret(keyVariable[provider])
      if (key !== undefined) return yield* remote(provider, flags, "env")
    }
    return { _tag: "Scripted", scriptFile: undefined, model: Option.getOrElse(flags.model, () => "demo") } satisfies Choice
  })
