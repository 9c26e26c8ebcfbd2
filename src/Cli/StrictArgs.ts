/**
 * Strict argument checking before `effect/cli` parses the command line, so a usage error is the
 * project's one line (exit 2) rather than `effect/cli`'s help-and-error block. From the commands'
 * own flags (`CommandDoc`, so it never drifts from their options) it checks, per (sub)command:
 *
 * - every `-x` / `--name` / `--name=value` token is one of the command's options or `--help`,
 *   `-h`, `--version`, `--completions`; an unknown one is an error naming it, with a "did you mean"
 *   suggestion when an option is close (edit distance);
 * - an option that takes one of fixed choices (e.g. `--store jsonl|sqlite`) names the flag and the
 *   choices when the value is not one of them;
 * - `--` ends options: every later token is an argument (so a prompt starting with `-` needs it);
 *   a lone `-` is an argument (the prompt from stdin).
 *
 * @since 0.1.0
 */
import type * as Command from "effect/cli/Command"
import * as Result from "effect/Result"
import * as CommandDoc from "./CommandDoc.js"

/**
 * What a command accepts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spec {
  readonly name: string
  /** option name (with dashes) → `undefined` for a flag, the accepted values text otherwise */
  readonly options: ReadonlyMap<string, string | undefined>
  readonly subcommands: ReadonlyMap<string, Spec>
}

const builtIns: ReadonlyMap<string, string | undefined> = new Map([
  ["--help", undefined],
  ["-h", undefined],
  ["--version", undefined],
  ["--completions", "bash | zsh | fish | powershell | sh | pwsh"]
])

const specOfDoc = (doc: CommandDoc.CommandDoc): Spec => ({
  name: doc.name,
  options: new Map(doc.flags.flatMap((flag) => [flag.name, ...flag.aliases].map((name) => [name, flag.value] as const))),
  subcommands: new Map(doc.subcommands.map((sub) => [sub.name, specOfDoc(sub)]))
})

/**
 * The spec of a command tree.
 *
 * @since 0.1.0
 * @category constructors
 */
export const specOf = (command: Command.Command.Any): Spec => specOfDoc(CommandDoc.of(command))

/**
 * Levenshtein distance.
 *
 * @since 0.1.0
 * @category utils
 */
export const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

const suggestion = (token: string, candidates: Iterable<string>): string | undefined => {
  let best: { readonly name: string; readonly d: number } | undefined
  for (const name of candidates) {
    if (!name.startsWith("--")) continue
    const d = distance(token, name)
    if (best === undefined || d < best.d) best = { name, d }
  }
  return best !== undefined && best.d <= Math.max(2, Math.floor(token.length / 3)) ? best.name : undefined
}

const choicesOf = (accepted: string | undefined): ReadonlyArray<string> | undefined => {
  if (accepted === undefined || !accepted.includes(" | ")) return undefined
  return accepted.split(" | ").map((c) => c.trim())
}

/**
 * Checks `args` (the command line after the program name) against the spec; the failure is
 * the one-line usage error.
 *
 * @since 0.1.0
 * @category utils
 */
export const check = (spec: Spec, args: ReadonlyArray<string>): Result.Result<void, string> => {
  let current = spec
  let path = spec.name
  let positional = 0
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!
    if (token === "--") return Result.void
    if (token.startsWith("-") && token !== "-") {
      const eq = token.indexOf("=")
      const name = token.startsWith("--") && eq > 0 ? token.slice(0, eq) : token
      const options = new Map([...builtIns, ...current.options])
      if (!options.has(name)) {
        const near = suggestion(name, options.keys())
        const hint = near === undefined ? `; see ${path} --help` : `; did you mean ${near}?`
        const dash = /^-\d/.test(token) ? ` (an argument starting with "-" goes after --)` : ""
        return Result.fail(`unknown option ${name} for ${path}${hint}${dash}`)
      }
      const accepted = options.get(name)
      if (accepted === undefined) continue
      const value = name !== token ? token.slice(eq + 1) : args[++i]
      if (value === undefined) return Result.fail(`option ${name} of ${path} needs a value (${accepted})`)
      const choices = choicesOf(accepted)
      if (choices !== undefined && !choices.includes(value)) {
        return Result.fail(`invalid value for ${name}: ${JSON.stringify(value)} (expected one of: ${choices.join(", ")})`)
      }
      continue
    }
    const sub = positional === 0 ? current.subcommands.get(token) : undefined
    if (sub !== undefined) {
      current = sub
      path = `${path} ${token}`
      continue
    }
    positional++
  }
  return Result.void
}
