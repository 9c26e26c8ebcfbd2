/**
 * The environment of the `bash` tool's commands: built from an allowlist, never inherited whole
 * (issue 16). Variables not listed (cloud credentials, `GITHUB_TOKEN`, provider keys, …) do not
 * reach the command unless the user lists them; provider API keys are never passed, even when
 * listed.
 *
 * Git (issue 26): unless the user sets `EFFECT_HARNESS_GIT_HOOKS=1`, commands get
 * `core.fsmonitor=false` and `core.hooksPath=/dev/null` through `GIT_CONFIG_COUNT` /
 * `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` (appended after any the user passes), so a
 * workspace's `.git/config` fsmonitor or a `.git/hooks` script does not run under `git status` or
 * `git commit`.
 *
 * @since 0.1.0
 */
import * as SecretEnv from "../SecretEnv.js"

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
  if (source[GIT_HOOKS_VARIABLE] !== "1") disableGitCode(env)
  return env
}

/**
 * The variable that lets git run hooks and `core.fsmonitor` in commands (`1`).
 *
 * @since 0.1.0
 * @category constants
 */
export const GIT_HOOKS_VARIABLE = "EFFECT_HARNESS_GIT_HOOKS"

/**
 * The git settings commands get unless {@link GIT_HOOKS_VARIABLE} is `1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const GIT_SETTINGS: ReadonlyArray<readonly [string, string]> = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"]
]

const disableGitCode = (env: Record<string, string>): void => {
  const given = Number(env.GIT_CONFIG_COUNT ?? "0")
  let count = Number.isSafeInteger(given) && given > 0 ? given : 0
  for (const [key, value] of GIT_SETTINGS) {
    env[`GIT_CONFIG_KEY_${count}`] = key
    env[`GIT_CONFIG_VALUE_${count}`] = value
    count += 1
  }
  env.GIT_CONFIG_COUNT = String(count)
}
