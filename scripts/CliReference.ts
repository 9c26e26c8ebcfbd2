/**
 * The CLI reference (issue 18): every command of the `harness` command tree with its usage, arguments and
 * options (from the `effect/cli` commands themselves, through `CommandDoc`), then the environment variables and
 * exit codes of `Help.footer` — the same text `--help` prints.
 */
import * as CommandDoc from "../src/Cli/CommandDoc.js"
import type * as Help from "../src/Cli/Help.js"

/** A command of the tree: its full name (`harness sessions list`), its doc, and whether it only groups others. */
interface Entry {
  readonly name: string
  readonly doc: CommandDoc.CommandDoc
  readonly group: boolean
}

const entries = (doc: CommandDoc.CommandDoc, prefix: string): ReadonlyArray<Entry> => {
  const name = prefix === "" ? doc.name : `${prefix} ${doc.name}`
  const group = doc.subcommands.length > 0
  return [{ name, doc, group }, ...doc.subcommands.flatMap((sub) => entries(sub, name))]
}

// what the Effect 3 reference said of an option with a settings-file default, kept so the reference does not change
const settingsSentence = " This option can be set from environment variables."

const optionText = (flag: CommandDoc.FlagDoc): string =>
  `${flag.description}${flag.fromSettings ? settingsSentence : ""}${flag.optional ? " (optional)" : ""}`

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

const table = (rows: ReadonlyArray<readonly [string, string]>, head: string): string =>
  rows.length === 0 ? "" : `| ${head} | |\n|---|---|\n${rows.map(([t, d]) => `| \`${escapeCell(t)}\` | ${escapeCell(d)} |`).join("\n")}\n\n`

const leaf = (entry: Entry): string => {
  const usage = CommandDoc.usage(entry.doc)
  return `### ${entry.name}\n\n${entry.doc.description}\n\n\`\`\`\n${usage === "" ? entry.name : `${entry.name} ${usage}`}\n\`\`\`\n\n` +
    table(entry.doc.args.map((arg) => [`<${arg.name}>`, arg.description] as const), "argument") +
    table(entry.doc.flags.map((flag) => [CommandDoc.term(flag), optionText(flag)] as const), "option")
}

const title = (text: string): string => text.charAt(0) + text.slice(1).toLowerCase()

/** The reference's markdown body for the command tree `root` and the help `footer`. */
export const render = (root: CommandDoc.CommandDoc, footer: ReadonlyArray<Help.Section>): string => {
  const body = entries(root, "").filter((entry) => entry.doc !== root).map((entry) =>
    entry.group ? `## ${entry.name}\n\n${entry.doc.description}\n` : leaf(entry)
  )
  const general = footer.map((section) =>
    `## ${title(section.title)}\n\n${table(section.rows, section.title === "EXIT CODES" ? "code" : "name")}`
  )
  return [...body, ...general].join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n"
}
