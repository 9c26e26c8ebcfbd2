/**
 * How `--help` and `effect/cli`'s own output are printed.
 *
 * - {@link footer}: examples, settings files, environment variables and exit codes, after the
 *   flags of every command's help.
 * - {@link colour}: ANSI colour only when stdout is a terminal and `NO_COLOR` is unset;
 *   `FORCE_COLOR` (non-empty, not `0`) forces it; between the two, the settings' `colour`
 *   (`always` / `never`; `auto` = the terminal decides). {@link formatter} renders help plain when
 *   colour is off.
 * - {@link presenter}: help on stdout; an invalid invocation `effect/cli` finds (after
 *   `StrictArgs`, e.g. a missing argument) is ONE line on stderr, not the help and an error block.
 * - The built-in `--wizard` and `--log-level` are not offered ({@link builtIns}; `StrictArgs`
 *   rejects them); `--help`, `--version` stay, listed in the footer.
 *
 * @since 0.1.0
 */
import * as CliOutput from "effect/cli/CliOutput"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as CommandDoc from "./CommandDoc.js"
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

/**
 * The built-in global flags the CLI offers: `--help`, `--version`, `--completions`.
 *
 * @since 0.1.0
 * @category constants
 */
export const builtIns: ReadonlyArray<GlobalFlag.BuiltIn> = [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions]

/**
 * One titled list of the footer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Section {
  readonly title: string
  readonly rows: ReadonlyArray<readonly [term: string, text: string]>
}

/**
 * The help footer: examples, settings, general options, environment variables, exit codes.
 *
 * @since 0.1.0
 * @category constants
 */
export const footer: ReadonlyArray<Section> = [
  {
    title: "EXAMPLES",
    rows: [
      ["harness run \"fix the failing test\"", "one turn; the answer on stdout, the session id on stderr"],
      ["git diff | harness run -", "the prompt from stdin"],
      ["harness run --output-format stream-json \"…\"", "JSON Lines for scripts: init, events, result (docs/cli-json.md)"],
      ["harness run --resume 3f2a \"and now the docs\"", "continue a session (any unique id prefix)"],
      ["harness chat -c", "the interactive terminal, continuing this directory's last session"],
      ["harness sessions list", "stored sessions; show, fork --turn N, rename, rm"],
      ["harness models", "the known models, context windows and prices"]
    ]
  },
  {
    title: "SETTINGS",
    rows: [
      ["~/.effect-harness/settings.json, .effect-harness/settings.json", "defaults: \"provider\", \"model\", \"store\", \"colour\" (auto | always | never), plus permissions and hooks; flags win"]
    ]
  },
  {
    title: "GENERAL OPTIONS",
    rows: [["--help, -h", "show help"], ["--version", "print the version"], ["--", "ends the options: a prompt starting with - goes after it"]]
  },
  {
    title: "ENVIRONMENT",
    rows: [
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
        "one directory for sessions (in its sessions/), MCP approvals, the chat's input history, settings.json and AGENTS.md. Default: sessions in $XDG_DATA_HOME/effect-harness/sessions, else ~/.local/share/effect-harness/sessions (~/Library/Application Support/effect-harness/sessions on macOS, %LOCALAPPDATA%\\effect-harness\\sessions on Windows), MCP approvals and the input history in the directory above it; settings.json and AGENTS.md in ~/.effect-harness"
      ],
      ["NO_COLOR, FORCE_COLOR", "turn colour off / on"]
    ]
  },
  {
    title: "EXIT CODES",
    rows: [
      ["0", "success"],
      ["1", "internal error"],
      ["2", "usage or configuration error"],
      ["3", "provider error"],
      ["4", "session error (not found, locked, corrupt, not saved)"],
      ["5", "the turn ended in another error"],
      ["129, 130, 143", "stopped by SIGHUP, SIGINT (Ctrl-C), SIGTERM; the turn was cancelled and saved"],
      ["141", "stdout was closed early (e.g. | head); the turn was cancelled and saved"]
    ]
  }
]

/**
 * Columns of the footer's text (indent included): long texts wrap at word boundaries.
 *
 * @since 0.1.0
 * @category constants
 */
export const FOOTER_WIDTH = 100

const TEXT_INDENT = "      "

// greedy word wrap; a single word longer than the width stays whole
const wrapWords = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  if (line !== "") lines.push(line)
  return lines
}

const bold = (text: string, colours: boolean): string => colours ? `\u001b[1m${text}\u001b[0m` : text

/**
 * The footer as text: each title, then each term on its own line with its text indented below,
 * wrapped to {@link FOOTER_WIDTH} columns.
 *
 * @since 0.1.0
 * @category utils
 */
export const renderFooter = (colours: boolean): string =>
  footer.map((section) =>
    [bold(section.title, colours), ...section.rows.map(([term, text]) =>
      [`  ${term}`, ...wrapWords(text, FOOTER_WIDTH - TEXT_INDENT.length).map((l) => TEXT_INDENT + l)].join("\n")
    )].join("\n")
  ).join("\n\n")

/**
 * The help formatter: `effect/cli`'s layout (plain unless `colours`), then the {@link footer}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const formatter = (colours: boolean): CliOutput.Formatter => {
  const base = CliOutput.defaultFormatter({ colors: colours })
  return { ...base, formatHelpDoc: (doc) => `${base.formatHelpDoc(doc)}\n\n${renderFooter(colours)}` }
}

const find = (doc: CommandDoc.CommandDoc, path: ReadonlyArray<string>): CommandDoc.CommandDoc | undefined => {
  const [next, ...rest] = path
  if (next === undefined) return doc
  const sub = doc.subcommands.find((c) => c.name === next)
  return sub === undefined ? undefined : find(sub, rest)
}

// a flag whose default a settings file may set says so (as the Effect 3 help did)
const withSettingsNote = (root: CommandDoc.CommandDoc, help: HelpDoc.HelpDoc, path: ReadonlyArray<string>): HelpDoc.HelpDoc => {
  const command = find(root, path.slice(1))
  const noted = new Set(command?.flags.filter((f) => f.fromSettings).map((f) => f.name.slice(2)) ?? [])
  return {
    ...help,
    flags: help.flags.map((flag) =>
      noted.has(flag.name)
        ? { ...flag, description: Option.some(`${Option.getOrElse(flag.description, () => "")} ${Defaults.helpSentence.replacement}`.trim()) }
        : flag
    )
  }
}

/**
 * Prints `effect/cli`'s events: help and the version on stdout; an invalid invocation as one
 * `error: …` line on stderr (its first error; `Program` exits 2).
 *
 * @since 0.1.0
 * @category constructors
 */
export const presenter = (
  root: CommandDoc.CommandDoc,
  format: CliOutput.Formatter,
  sinks: Output.Sinks = Output.processSinks
): CliOutput.Presenter => ({
  present: (event) =>
    Effect.sync(() => {
      switch (event._tag) {
        case "Help":
          return sinks.stdout(`${format.formatHelpDoc(withSettingsNote(root, event.helpDoc, event.commandPath))}\n`)
        case "Version":
          return sinks.stdout(`${event.version}\n`)
        case "InvalidInvocation": {
          const [first] = event.errors
          const message = first === undefined ? "invalid command line" : format.formatCliError(first)
          return sinks.stderr(`error: ${message.split("\n")[0]}; see ${event.commandPath.join(" ")} --help\n`)
        }
      }
    })
})
