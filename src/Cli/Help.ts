/**
 * What `--help` adds to the options `@effect/cli` lists, and how it is printed.
 *
 * - {@link footer}: examples, settings files, environment variables and exit codes, after the
 *   options.
 * - {@link colour}: ANSI colour only when stdout is a terminal and `NO_COLOR` is unset;
 *   `FORCE_COLOR` (non-empty, not `0`) forces it; between the two, the settings' `colour`
 *   (`always` / `never`; `auto` = the terminal decides). {@link console} strips escape codes from what
 *   `@effect/cli` prints (help, usage errors) when colour is off.
 * - The built-in `--wizard` is not offered (`showBuiltIns: false` hides it, and `StrictArgs`
 *   rejects it); `--help`, `--version` stay, listed in the footer.
 *
 * @since 0.1.0
 */
import * as HelpDoc from "effect/cli/HelpDoc"
import * as Span from "effect/cli/HelpDoc/Span"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Defaults from "./Defaults.js"
import * as Output from "./Output.js"

/**
 * `true` when output may be coloured.
 *
 * @since 0.1.0
 * @category utils
 */
export const colour = (
  env: NodeJS.ProcessEnv = process.env,
  isTTY = process.stdout.isTTY === true,
  setting: "auto" | "always" | "never" = "auto"
): boolean => {
  const force = env["FORCE_COLOR"]
  if (force !== undefined && force !== "" && force !== "0") return true
  if (env["NO_COLOR"] !== undefined && env["NO_COLOR"] !== "") return false
  if (setting !== "auto") return setting === "always"
  return isTTY
}

const ansi = /\u001b\[[0-9;?]*[A-Za-z]/g

/**
 * Removes ANSI escape sequences.
 *
 * @since 0.1.0
 * @category utils
 */
export const plain = (text: string): string => text.replace(ansi, "")

const render = (args: ReadonlyArray<unknown>, strip: boolean): string => {
  const text = args.map((a) => typeof a === "string" ? a : String(a)).join(" ")
    .replaceAll(Defaults.helpSentence.generated, Defaults.helpSentence.replacement)
  return strip ? plain(text) : text
}

/**
 * The console `@effect/cli` prints through: help and usage errors, plain unless {@link colour}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const console = (base: Console.Console, strip: boolean = !colour()): Console.Console => ({
  ...base,
  log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => Output.processSinks.stdout(`${render(args, strip)}\n`)),
  error: (...args: ReadonlyArray<unknown>) => Effect.sync(() => Output.processSinks.stderr(`${render(args, strip)}\n`))
})

const list = (rows: ReadonlyArray<readonly [string, string]>): HelpDoc.HelpDoc =>
  HelpDoc.descriptionList(
    rows.map(([term, text]) => [Span.text(term), HelpDoc.p(text)] as [Span.Span, HelpDoc.HelpDoc]) as [
      [Span.Span, HelpDoc.HelpDoc],
      ...Array<[Span.Span, HelpDoc.HelpDoc]>
    ]
  )

/**
 * The help footer: general options, environment variables, exit codes.
 *
 * @since 0.1.0
 * @category constants
 */
export const footer: HelpDoc.HelpDoc = HelpDoc.blocks([
  HelpDoc.h1("EXAMPLES"),
  list([
    ["harness run \"fix the failing test\"", "one turn; the answer on stdout, the session id on stderr"],
    ["git diff | harness run -", "the prompt from stdin"],
    ["harness run --output-format stream-json \"…\"", "JSON Lines for scripts: init, events, result (docs/cli-json.md)"],
    ["harness run --resume 3f2a \"and now the docs\"", "continue a session (any unique id prefix)"],
    ["harness chat -c", "the interactive terminal, continuing this directory's last session"],
    ["harness sessions list", "stored sessions; show, fork --turn N, rename, rm"],
    ["harness models", "the known models, context windows and prices"]
  ]),
  HelpDoc.h1("SETTINGS"),
  list([
    ["~/.effect-harness/settings.json, .effect-harness/settings.json", "defaults: \"provider\", \"model\", \"store\", \"colour\" (auto | always | never), plus permissions and hooks; flags win"]
  ]),
  HelpDoc.h1("GENERAL OPTIONS"),
  list([["--help, -h", "show help"], ["--version", "print the version"], ["--", "ends the options: a prompt starting with - goes after it"]]),
  HelpDoc.h1("ENVIRONMENT"),
  list([
    ["DEEPSEEK_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY", "provider keys (none: the offline demo model)"],
    [
      "GEMINI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, TOGETHER_API_KEY",
      "gateway keys, used only with --provider gemini|openrouter|groq|together"
    ],
    [
      "AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT",
      "--provider azure: key and resource URL; AZURE_OPENAI_DEPLOYMENT (else --model), AZURE_OPENAI_API_VERSION"
    ],
    [
      "--provider ollama|vllm|llamacpp|lmstudio",
      "local servers on their default localhost port (--base-url to change), no key needed"
    ],
    [
      "OPENAI_COMPATIBLE_API_KEY, --api-key-env NAME",
      "--provider openai-compatible's key; --api-key-env reads any provider's key from NAME (OPENAI_API_KEY goes only to api.openai.com unless named)"
    ],
    [
      "EFFECT_HARNESS_HOME",
      "one directory for sessions, MCP approvals, settings.json and AGENTS.md (default: sessions and approvals in the per-user data directory: $XDG_DATA_HOME/effect-harness, else ~/.local/share/effect-harness; ~/Library/Application Support/effect-harness on macOS, %LOCALAPPDATA%\\effect-harness on Windows; settings.json and AGENTS.md in ~/.effect-harness)"
    ],
    ["NO_COLOR, FORCE_COLOR", "turn colour off / on"]
  ]),
  HelpDoc.h1("EXIT CODES"),
  list([
    ["0", "success"],
    ["1", "internal error"],
    ["2", "usage or configuration error"],
    ["3", "provider error"],
    ["4", "session error (not found, locked, corrupt, not saved)"],
    ["5", "the turn ended in another error"],
    ["129, 130, 143", "stopped by SIGHUP, SIGINT (Ctrl-C), SIGTERM; the turn was cancelled and saved"],
    ["141", "stdout was closed early (e.g. | head); the turn was cancelled and saved"]
  ])
])
