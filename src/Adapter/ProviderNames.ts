/**
 * The provider names the harness knows: the remote providers of the adapters' profiles
 * (`OpenAiCompatible`, `Anthropic`) and `scripted`. Settings files (`Workspace/SettingsFile`) and the
 * CLI's provider choice validate a `provider` against this one list.
 *
 * @since 0.1.0
 */

/**
 * Providers the harness knows.
 *
 * @since 0.1.0
 * @category models
 */
export const providers = [
  "deepseek",
  "anthropic",
  "openai",
  "openai-compatible",
  "gemini",
  "openrouter",
  "groq",
  "together",
  "azure",
  "ollama",
  "vllm",
  "llamacpp",
  "lmstudio",
  "scripted"
] as const

/**
 * A provider name.
 *
 * @since 0.1.0
 * @category models
 */
export type ProviderName = (typeof providers)[number]
