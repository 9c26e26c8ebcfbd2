/**
 * Secrets kept out of child processes (issue 16, decision 0010).
 *
 * {@link capture} runs once at start-up, before anything else reads the environment:
 *
 * 1. the provider API keys ({@link PROVIDER_KEY_VARIABLES}) are copied into `Redacted` values and
 *    removed from `process.env`, so no child process inherits them by default;
 * 2. their bytes in the process's initial environment block are overwritten in place through
 *    `/proc/self/mem`. `/proc/PID/environ` is a live view of that block (not of `process.env`):
 *    deleting a variable only unlinks it from `environ`, the text stays readable by any process of
 *    the same user (`tr '\0' '\n' </proc/$PPID/environ` from a tool). After the overwrite it reads
 *    `ANTHROPIC_API_KEY=********`. Where `/proc/self/mem` cannot be written (non-Linux, hardened
 *    kernels), this is reported by {@link Captured.environBlock} and the sandbox's own PID
 *    namespace is the remaining protection;
 * 3. the values of every secret-looking variable ({@link isSecretName}, plus the names listed in
 *    `EFFECT_HARNESS_SECRET_VARS`) are remembered as `Redacted` so tool output can be scrubbed
 *    (see `Tools/internal/Scrub`). Those other variables stay in `process.env` (hooks may need
 *    them); the `bash` tool builds its environment from an allowlist instead.
 *
 * 4. (issue 26) `0` is written to `/proc/self/coredump_filter`, so a core dump of the harness
 *    carries no anonymous or file-backed memory: no heap, hence no key (see {@link dropCoreDumpMemory}).
 *
 * Plain Node, no Effect runtime: it runs from the bin entry.
 *
 * @since 0.1.0
 */
import * as Redacted from "effect/Redacted"
import * as NodeFs from "node:fs"

/**
 * The provider API keys read by the CLI.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROVIDER_KEY_VARIABLES: ReadonlyArray<string> = [
  "DEEPSEEK_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "OPENAI_COMPATIBLE_API_KEY",
  "GEMINI_API_KEY",
  "OPENROUTER_API_KEY",
  "GROQ_API_KEY",
  "TOGETHER_API_KEY",
  "AZURE_OPENAI_API_KEY",
  "OLLAMA_API_KEY",
  "VLLM_API_KEY",
  "LLAMACPP_API_KEY",
  "LMSTUDIO_API_KEY"
]

/**
 * Names listing further secret variables (comma- or space-separated).
 *
 * @since 0.1.0
 * @category constants
 */
export const EXTRA_SECRETS_VARIABLE = "EFFECT_HARNESS_SECRET_VARS"

/**
 * Shorter values are not treated as secrets to scrub (too likely to occur by chance).
 *
 * @since 0.1.0
 * @category constants
 */
export const MIN_SECRET_LENGTH = 8

const SECRET_NAME = /(?:API_?KEY|ACCESS_KEY|PRIVATE_KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)/i

/**
 * Whether a variable name looks like it holds a secret (`*_API_KEY`, `*_TOKEN`, `*SECRET*`,
 * `*PASSWORD*`, `*_CREDENTIALS`, …).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isSecretName = (name: string): boolean => SECRET_NAME.test(name)

/**
 * What {@link capture} found and did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Captured {
  /** provider keys by variable name */
  readonly keys: ReadonlyMap<string, Redacted.Redacted<string>>
  /** every secret value to scrub from tool output (provider keys included) */
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  /** the initial environment block: keys overwritten, nothing to do, or not writable here */
  readonly environBlock: "scrubbed" | "clean" | "unavailable"
}

let captured: Captured | undefined

/**
 * Overwrites the values of `names` in this process's initial environment block; `false` when the
 * block cannot be read or written.
 *
 * @since 0.1.0
 * @category utils
 */
export const scrubEnvironBlock = (names: ReadonlyArray<string>): boolean => {
  try {
    const stat = NodeFs.readFileSync("/proc/self/stat", "utf8")
    // fields after "(comm) " start at field 3; env_start and env_end are fields 50 and 51
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const start = Number(fields[47])
    const end = Number(fields[48])
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return false
    const fd = NodeFs.openSync("/proc/self/mem", "r+")
    try {
      const block = Buffer.alloc(end - start)
      NodeFs.readSync(fd, block, 0, block.length, start)
      for (const name of names) {
        const needle = Buffer.from(`${name}=`)
        let at = block.indexOf(needle)
        while (at !== -1) {
          if (at === 0 || block[at - 1] === 0) {
            const valueEnd = block.indexOf(0, at)
            block.fill(0x2a, at + needle.length, valueEnd === -1 ? block.length : valueEnd)
          }
          at = block.indexOf(needle, at + needle.length)
        }
      }
      NodeFs.writeSync(fd, block, 0, block.length, start)
    } finally {
      NodeFs.closeSync(fd)
    }
    return true
  } catch {
    return false
  }
}

/**
 * Captures the secrets of `env` (default `process.env`) once per process; later calls return the
 * first result. Only the real process environment is scrubbed in memory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const capture = (env: NodeJS.ProcessEnv = process.env): Captured => {
  if (captured !== undefined) return captured
  const keys = new Map<string, Redacted.Redacted<string>>()
  const values = new Set<string>()
  const extra = new Set((env[EXTRA_SECRETS_VARIABLE] ?? "").split(/[\s,]+/).filter((n) => n !== ""))
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (PROVIDER_KEY_VARIABLES.includes(name)) {
      if (value.trim() !== "") keys.set(name, Redacted.make(value))
      if (value.length >= MIN_SECRET_LENGTH) values.add(value)
    } else if ((isSecretName(name) || extra.has(name)) && value.length >= MIN_SECRET_LENGTH) {
      values.add(value)
    }
  }
  const present = PROVIDER_KEY_VARIABLES.filter((name) => env[name] !== undefined)
  for (const name of present) delete env[name]
  const environBlock = present.length === 0
    ? "clean"
    : env === process.env && scrubEnvironBlock(present)
    ? "scrubbed"
    : "unavailable"
  if (env === process.env) dropCoreDumpMemory()
  captured = { keys, secrets: [...values].map((v) => Redacted.make(v)), environBlock }
  return captured
}

/**
 * Writes `0` to `/proc/self/coredump_filter` (Linux): a core dump of this process then holds no
 * memory mappings, so no heap and no provider key. Where the file does not exist or cannot be
 * written (not Linux, a read-only `/proc`), nothing is done and nothing is said; another failure
 * is said in one stderr line. `false` when nothing was written.
 * Node cannot call `prctl(PR_SET_DUMPABLE, 0)`, so the process stays dumpable and traceable by
 * its user (see docs/security.md).
 *
 * @since 0.1.0
 * @category utils
 */
export const dropCoreDumpMemory = (): boolean => {
  try {
    NodeFs.writeFileSync("/proc/self/coredump_filter", "0")
    return true
  } catch (e) {
    const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
    if (code !== "ENOENT" && code !== "EACCES" && code !== "EPERM" && code !== "EROFS") {
      process.stderr.write(
        `effect-harness: cannot keep memory out of core dumps: ${e instanceof Error ? e.message : String(e)}\n`
      )
    }
    return false
  }
}

/**
 * A captured provider key (`undefined` when {@link capture} has not run or the key was not set).
 *
 * @since 0.1.0
 * @category getters
 */
export const providerKey = (name: string): Redacted.Redacted<string> | undefined => captured?.keys.get(name)

/**
 * The captured secret values (empty when {@link capture} has not run).
 *
 * @since 0.1.0
 * @category getters
 */
export const secrets = (): ReadonlyArray<Redacted.Redacted<string>> => captured?.secrets ?? []

/**
 * Whether {@link capture} has run.
 *
 * @since 0.1.0
 * @category getters
 */
export const isCaptured = (): boolean => captured !== undefined
