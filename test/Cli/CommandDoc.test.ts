/**
 * `CommandDoc` reads what each command accepts from the `effect/cli` commands themselves (issue 15: the
 * strict argument check and the CLI reference never drift from the options).
 */
import { describe, expect, it } from "@effect/vitest"
import * as CliError from "effect/cli/CliError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as CommandDoc from "../../src/Cli/CommandDoc.js"
import { root } from "../../src/Cli/CommandTree.js"
import * as Help from "../../src/Cli/Help.js"

const tree = CommandDoc.of(root)
const command = (...path: Array<string>): CommandDoc.CommandDoc =>
  path.reduce((doc, name) => doc.subcommands.find((c) => c.name === name)!, tree)
const flag = (doc: CommandDoc.CommandDoc, name: string) => doc.flags.find((f) => f.name === name)

describe("CommandDoc (issue 15)", () => {
  it("the tree: every command with its flags (values, optional, repeated, settings defaults) and arguments", () => {
    expect(tree.subcommands.map((c) => c.name)).toEqual(["run", "chat", "sessions", "models", "mcp", "acp"])
    const run = command("run")
    expect(flag(run, "--store")).toMatchObject({ value: "jsonl | sqlite", optional: true, repeated: false, fromSettings: true })
    expect(flag(run, "--continue")).toMatchObject({ aliases: ["-c"], value: undefined, optional: true })
    expect(flag(run, "--allowed-tools")).toMatchObject({ value: "text", optional: false, repeated: true })
    expect(flag(run, "--max-steps")).toMatchObject({ value: "integer", optional: true, fromSettings: false })
    expect(run.args).toEqual([{
      name: "prompt",
      description:
        "the prompt, or - to read it from stdin; none with --resume: continue its interrupted turn; none with --input-format stream-json",
      optional: true,
      variadic: false
    }])
    expect(command("sessions", "fork").args.map((a) => a.name)).toEqual(["id"])
    expect(CommandDoc.term(flag(run, "--yes")!)).toBe("(-y, --yes)")
    expect(CommandDoc.usage(command("models"))).toBe("[--json]")
    expect(CommandDoc.usage(command("mcp", "tools"))).toBe("[--cwd text] --mcp-config text... [--trust-workspace] <server>")
  })

  it.effect("help notes the settings default; an invalid invocation is one stderr line naming the problem", () =>
    Effect.gen(function*() {
      const written: Array<readonly [string, string]> = []
      const sinks = {
        stdout: (text: string) => void written.push(["stdout", text]),
        stderr: (text: string) => void written.push(["stderr", text])
      }
      const presenter = Help.presenter(tree, Help.formatter(false), sinks)
      const helpDoc = {
        description: "d",
        usage: "harness sessions list [flags]",
        annotations: Context.empty(),
        flags: [{ name: "store", aliases: [], type: "choice", description: Option.some("backend"), required: false }]
      }
      yield* presenter.present({ _tag: "Help", reason: "Requested", commandPath: ["harness", "sessions", "list"], helpDoc })
      expect(written).toHaveLength(1)
      expect(written[0]![0]).toBe("stdout")
      expect(written[0]![1]).toContain("backend A settings file may set the default.")
      expect(written[0]![1]).toContain("EXIT CODES")
      expect(Help.plain(written[0]![1])).toBe(written[0]![1])
      written.length = 0
      const errors = [new CliError.MissingArgument({ argument: "id" })]
      yield* presenter.present({ _tag: "InvalidInvocation", commandPath: ["harness", "sessions", "show"], helpDoc, errors })
      expect(written).toEqual([["stderr", "error: Missing required argument: id; see harness sessions show --help\n"]])
    }))
})
