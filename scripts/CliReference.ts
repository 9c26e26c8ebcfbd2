/**
 * The CLI reference (issue 18): every command of the `harness` command tree with its usage, arguments and
 * options (from the `@effect/cli` descriptors themselves), then the environment variables and exit codes of
 * `Help.footer` — the same text `--help` prints.
 */
import type * as CliConfig from "effect/cli/CliConfig"
import * as CommandDescriptor from "effect/cli/CommandDescriptor"
import * as HelpDoc from "effect/cli/HelpDoc"
import type * as Span from "effect/cli/HelpDoc/Span"
import * as Usage from "effect/cli/Usage"
import * as HashSet from "effect/HashSet"

/** A leaf command: its full name (`harness sessions list`) and descriptor. */
interface Leaf {
  readonly name: string
  readonly descriptor: CommandDescriptor.Command<unknown>
  readonly group: boolean
}

// `CommandDescriptor.getSubcommands` of a command with subcommands returns itself, so the tree is walked through
// the descriptor's own shape (as `StrictArgs.specOf` does)
const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined

const nameOf = (descriptor: CommandDescriptor.Command<unknown>): string =>
  [...HashSet.values(CommandDescriptor.getNames(descriptor))][0] ?? ""

const leaves = (descriptor: CommandDescriptor.Command<unknown>, prefix: string): ReadonlyArray<Leaf> => {
  switch (field(descriptor, "_tag")) {
    case "Map":
      return leaves(field(descriptor, "command") as CommandDescriptor.Command<unknown>, prefix)
    case "Subcommands": {
      const [parent] = leaves(field(descriptor, "parent") as CommandDescriptor.Command<unknown>, prefix)
      const name = parent?.name ?? prefix
      const children = (field(descriptor, "children") as ReadonlyArray<CommandDescriptor.Command<unknown>>)
        .flatMap((child) => leaves(child, name))
      return parent === undefined ? children : [{ ...parent, group: true }, ...children]
    }
    default: {
      const own = nameOf(descriptor)
      return [{ name: prefix === "" ? own : `${prefix} ${own}`, descriptor, group: false }]
    }
  }
}

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Highlight":
    case "Weak":
    case "Strong":
      return spanText(span.value)
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
  }
}

const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Paragraph":
      return [spanText(doc.value)]
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    case "DescriptionList":
      return doc.definitions.flatMap(([term, d]) => [`${spanText(term)}: ${paragraphs(d).join(" ")}`])
    default:
      return []
  }
}

// the type sentences @effect/cli adds to every option; the reference states the values in the option's term
const boilerplate = /^(A user-defined piece of text\.|A true or false value\.|An integer\.|A floating point number\.|One of the following: .*|This setting is optional\.|This argument may be repeated.*|This option may be repeated.*|An? (file|directory|path).*)$/

const definitionsOf = (doc: HelpDoc.HelpDoc): ReadonlyArray<readonly [string, string]> => {
  switch (doc._tag) {
    case "DescriptionList":
      return doc.definitions.map(([term, d]) => {
        const text = paragraphs(d).filter((p) => !boilerplate.test(p.trim()))
        const optional = paragraphs(d).some((p) => p.trim() === "This setting is optional.")
        return [spanText(term), `${text.join(" ")}${optional ? " (optional)" : ""}`] as const
      })
    case "Sequence":
      return [...definitionsOf(doc.left), ...definitionsOf(doc.right)]
    default:
      return []
  }
}

/** The sections of a leaf's help, by header. */
const sections = (doc: HelpDoc.HelpDoc): Map<string, HelpDoc.HelpDoc> => {
  const out = new Map<string, HelpDoc.HelpDoc>()
  let current: string | undefined
  const visit = (d: HelpDoc.HelpDoc): void => {
    if (d._tag === "Sequence") {
      visit(d.left)
      visit(d.right)
    } else if (d._tag === "Header") current = spanText(d.value)
    else if (current !== undefined) {
      const before = out.get(current)
      out.set(current, before === undefined ? d : HelpDoc.sequence(before, d))
    }
  }
  visit(doc)
  return out
}

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

const table = (rows: ReadonlyArray<readonly [string, string]>, head: string): string =>
  rows.length === 0 ? "" : `| ${head} | |\n|---|---|\n${rows.map(([t, d]) => `| \`${escapeCell(t)}\` | ${escapeCell(d)} |`).join("\n")}\n\n`

/** The reference's markdown body for the command tree `root` and the help `footer`. */
export const render = (root: CommandDescriptor.Command<unknown>, footer: HelpDoc.HelpDoc, config: CliConfig.CliConfig): string => {
  const commands = leaves(root, "").filter((leaf) => !leaf.group || leaf.name !== "harness")
  const body = commands.map((leaf) => {
    const help = sections(CommandDescriptor.getHelp(leaf.descriptor, config))
    const description = paragraphs(help.get("DESCRIPTION") ?? HelpDoc.empty).join(" ")
    if (leaf.group) return `## ${leaf.name}\n\n${description}\n`
    const usage = paragraphs(Usage.getHelp(CommandDescriptor.getUsage(leaf.descriptor))).join(" ").trim()
    // the usage starts with the command's own name
    const parent = leaf.name.slice(0, leaf.name.lastIndexOf(" "))
    return `### ${leaf.name}\n\n${description}\n\n\`\`\`\n${parent} ${usage}\n\`\`\`\n\n` +
      table(definitionsOf(help.get("ARGUMENTS") ?? HelpDoc.empty), "argument") +
      table(definitionsOf(help.get("OPTIONS") ?? HelpDoc.empty), "option")
  })
  const tail = sections(footer)
  const general = [...tail.entries()].map(([title, doc]) =>
    `## ${title.charAt(0) + title.slice(1).toLowerCase()}\n\n${table(definitionsOf(doc), title === "EXIT CODES" ? "code" : "name")}`
  )
  return [...body, ...general].join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n"
}
