/**
 * The slash commands of the chat terminal UI (issue 34): one table for `/help` and for Tab
 * completion, and the completion provider of the input editor.
 *
 * Completion (Tab, or as you type after `/` and `@`):
 * - `/` at the start of the input: the commands, filtered as you type;
 * - `@path`: files and directories under the workspace, one directory level at a time
 *   (`@src/` then Tab lists `src/`); dot-files only when the typed name starts with a dot;
 * - else pi-tui's path completion for a word that looks like a path (`./`, `../`, `~/`).
 *
 * @since 0.1.0
 */
import type {
  AutocompleteItem,
  AutocompleteProvider,
  AutocompleteSuggestions,
  SlashCommand
} from "@mariozechner/pi-tui/dist/autocomplete.js"
import { CombinedAutocompleteProvider } from "@mariozechner/pi-tui/dist/autocomplete.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * One slash command: its name (without `/`), argument hint and one-line description.
 *
 * @since 0.1.0
 * @category models
 */
export interface Command {
  readonly name: string
  readonly args?: string
  readonly description: string
}

/**
 * Every slash command, in the order `/help` lists them.
 *
 * @since 0.1.0
 * @category constants
 */
export const commands: ReadonlyArray<Command> = [
  { name: "help", description: "this help" },
  { name: "model", args: "[id]", description: "pick or switch the model (the session goes on)" },
  { name: "resume", args: "[id prefix]", description: "continue this session's interrupted turn, else pick a stored session; or continue the one this id prefix names" },
  { name: "sessions", description: "list stored sessions" },
  { name: "new", description: "start a new session" },
  { name: "clear", description: "clear the screen and start a new session" },
  { name: "compact", args: "[instructions]", description: "summarise the conversation so far to free context" },
  { name: "rewind", args: "[N [code|conversation|both] [force]]", description: "list the changes by turn, or go back to the end of turn N (files and/or conversation)" },
  { name: "cost", description: "tokens and cost of this session" },
  { name: "status", description: "session, model, workspace, approvals and context use" },
  { name: "mcp", description: "configured MCP servers and their tools" },
  { name: "exit", description: "quit" }
]

const KEYS = [
  "Enter sends. Enter while the agent works steers the running turn (read before its next step;",
  "  if the turn ends first, the message starts the next turn). Shift+Enter or Alt+Enter: new line.",
  "  A paste stays one message, however many lines it has.",
  "Up/Down: earlier inputs (kept across chats). Ctrl-R: search them. Tab: complete /commands and @paths.",
  "!command runs a shell command in the workspace and shows its output (the model sees it too).",
  "Esc or Ctrl-C interrupts the running turn. While idle Ctrl-C clears the input; Ctrl-C twice exits;",
  "  Ctrl-D on an empty input exits. Ctrl-T shows or hides the model's thinking."
]

/**
 * The text of `/help`.
 *
 * @since 0.1.0
 * @category utils
 */
export const help = (): string => {
  const usage = commands.map((c) => `/${c.name}${c.args === undefined ? "" : ` ${c.args}`}`)
  const width = Math.max(...usage.map((u) => u.length)) + 2
  return [...KEYS, ...commands.map((c, i) => `${usage[i]!.padEnd(width)}${c.description}`)].join("\n")
}

const MAX_ENTRIES = 50

/**
 * Suggestions for an `@path` prefix (`@` included): the entries of the prefix's directory whose
 * names start with its last segment, directories first, each with a trailing `/`.
 *
 * @since 0.1.0
 * @category utils
 */
export const pathSuggestions = (cwd: string, prefix: string): ReadonlyArray<AutocompleteItem> => {
  const typed = prefix.slice(1)
  const slash = typed.lastIndexOf("/")
  const dir = slash < 0 ? "" : typed.slice(0, slash + 1)
  const stem = typed.slice(slash + 1)
  let entries: Array<NodeFs.Dirent>
  try {
    entries = NodeFs.readdirSync(NodePath.resolve(cwd, dir === "" ? "." : dir), { withFileTypes: true })
  } catch {
    return [] // not a directory (yet): nothing to offer
  }
  return entries
    .filter((e) => e.name.startsWith(stem) && (stem.startsWith(".") || !e.name.startsWith(".")))
    .filter((e) => e.name !== "node_modules" || stem !== "")
    .map((e) => ({ name: e.name, directory: e.isDirectory() }))
    .sort((a, b) => Number(b.directory) - Number(a.directory) || a.name.localeCompare(b.name))
    .slice(0, MAX_ENTRIES)
    .map((e) => {
      const path = `${dir}${e.name}${e.directory ? "/" : ""}`
      return { value: `@${path}`, label: `${e.name}${e.directory ? "/" : ""}` }
    })
}

const atPrefix = (before: string): string | undefined => /(?:^|\s)(@[^\s@]*)$/.exec(before)?.[1]

/**
 * The input editor's completion provider (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const provider = (cwd: string): AutocompleteProvider => {
  const slash: Array<SlashCommand> = commands.map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.args === undefined ? {} : { argumentHint: c.args })
  }))
  const base = new CombinedAutocompleteProvider(slash, cwd)
  return {
    getSuggestions: async (lines, cursorLine, cursorCol, options): Promise<AutocompleteSuggestions | null> => {
      const prefix = atPrefix((lines[cursorLine] ?? "").slice(0, cursorCol))
      if (prefix === undefined) return base.getSuggestions(lines, cursorLine, cursorCol, options)
      const items = pathSuggestions(cwd, prefix)
      return items.length === 0 ? null : { items: [...items], prefix }
    },
    applyCompletion: (lines, cursorLine, cursorCol, item, prefix) => {
      if (!prefix.startsWith("@")) return base.applyCompletion(lines, cursorLine, cursorCol, item, prefix)
      const line = lines[cursorLine] ?? ""
      const start = cursorCol - prefix.length
      // a directory stays open for the next level; a file ends with a space
      const inserted = item.value.endsWith("/") ? item.value : `${item.value} `
      const next = [...lines]
      next[cursorLine] = line.slice(0, start) + inserted + line.slice(cursorCol)
      return { lines: next, cursorLine, cursorCol: start + inserted.length }
    },
    shouldTriggerFileCompletion: (lines, cursorLine, cursorCol) =>
      atPrefix((lines[cursorLine] ?? "").slice(0, cursorCol)) !== undefined ||
      (base.shouldTriggerFileCompletion?.(lines, cursorLine, cursorCol) ?? false)
  }
}
