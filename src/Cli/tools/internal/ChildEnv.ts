/**
 * The environment of the `bash` tool's commands: built from an allowlist, never inherited whole
 * (issue 16). Variables not listed (cloud credentials, `GITHUB_TOKEN`, provider keys, …) do not
 * reach the command unless the user lists them; provider API keys are never passed, even when
 * listed.
 *
 * @since 0.1.0
 */
import * as SecretEnv from "../../SecretEnv.js"

/**
 * Variables passed through when set.
 *
 * @since 0.1.0
 * @category constants
 */
export const ALLOWED: ReadonlyArray<string> = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "TZ",
  "TMPDIR",
  "EDITOR",
  "PAGER"
]

/**
 * Whether `name` passes by default (the list above or a locale variable `LC_*`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isAllowed = (name: string): boolean => ALLOWED.includes(name) || name.startsWith("LC_")

/**
 * The environment for a command: the allowed variables of `source` plus those named in `extra`,
 * never a provider key.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (
  source: NodeJS.ProcessEnv,
  extra: ReadonlyArray<string>
): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue
    if (SecretEnv.PROVIDER_KEY_VARIABLES.includes(name)) continue
    if (isAllowed(name) || extra.includes(name)) env[name] = value
  }
  if (env.PATH === undefined) env.PATH = "/usr/local/bin:/usr/bin:/bin"
  return env
}
