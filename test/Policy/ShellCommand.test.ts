import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Permissions from "../../src/Policy/Permissions.js"
import * as Settings from "../../src/Workspace/Settings.js"
import type { PermissionMode } from "../../src/Workspace/SettingsFile.js"
import * as ShellCommand from "../../src/Policy/ShellCommand.js"
import * as ShellParser from "../../src/Policy/ShellParser.js"
import type { Mode } from "../../src/Policy/Approval.js"
import { RM_SPELLINGS } from "../attack/RmSpellings.js"

const engine = (
  rules: { allow?: Array<string>; deny?: Array<string>; ask?: Array<string> },
  approval: Mode = "auto",
  mode: PermissionMode = "default"
) =>
  Effect.map(
    Permissions.make({
      cwd: "/nonexistent-ws",
      approval,
      mode,
      settings: {
        ...Settings.empty,
        rules: (["deny", "ask", "allow"] as const).flatMap((kind) => (rules[kind] ?? []).map((text) => ({ kind, text, origin: "s.json" })))
      }
    }),
    (m) => m.service
  ).pipe(Effect.provide(NodeServices.layer))

const bash = (command: string) => ({ command })

const words = (analysis: ShellCommand.Analysis): ReadonlyArray<string> =>
  analysis.invocations.map((i) => [i.spelled, ...i.args.map((a) => a ?? "?")].join(" "))

describe("ShellCommand: what a bash command runs (issue 26)", () => {
  it.effect(`[issue 26] under deny Bash(rm:*), each of ${RM_SPELLINGS.length} spellings of rm is denied or a hard ask, never allowed by --yes or bypassPermissions`, () =>
    Effect.gen(function*() {
      expect(RM_SPELLINGS.length).toBeGreaterThanOrEqual(31)
      const yes = yield* engine({ deny: ["Bash(rm:*)"], allow: ["Bash"] }, "auto")
      const bypass = yield* engine({ deny: ["Bash(rm:*)"] }, "auto", "bypassPermissions")
      const wrong: Array<string> = []
      for (const command of RM_SPELLINGS) {
        const d = yield* yes.decide("bash", bash(command))
        if (!(d.decision === "deny" || (d.decision === "ask" && d.hard === true))) wrong.push(`${command}: ${d.decision} (${d.rule})`)
        if ((yield* yes.resolve("bash", bash(command))).decision !== "deny") wrong.push(`${command}: --yes ran it`)
        if ((yield* bypass.resolve("bash", bash(command))).decision !== "deny") wrong.push(`${command}: bypassPermissions ran it`)
      }
      expect(wrong).toEqual([])
    }))

  it.effect("[issue 26] an unknowable command is a hard ask only under a bash deny rule; at a terminal it is asked without \"always\"", () =>
    Effect.gen(function*() {
      const guarded = yield* engine({ deny: ["Bash(rm:*)"] }, "ask")
      const d = yield* guarded.resolve("bash", bash("eval \"$X\""))
      expect(d).toMatchObject({ decision: "ask", hard: true, rule: "Bash(rm:*)" })
      expect(d.reason).toContain("eval runs a string as a command")
      expect(yield* guarded.suggest("bash", bash("eval \"$X\""))).toBeUndefined()
      expect(yield* guarded.suggest("bash", bash("npm test"))).toBe("Bash(npm test:*)")
      const denied = yield* (yield* engine({ deny: ["Bash(rm:*)"] }, "deny")).resolve("bash", bash("$(echo rm) x"))
      expect(denied.decision).toBe("deny")
      expect(denied.reason).toContain("needs a person's approval")
      // no bash deny rule: an ordinary question (and --yes answers it), but never an allow rule's
      const open = yield* engine({ allow: ["Bash(eval:*)"] }, "auto")
      expect(yield* open.decide("bash", bash("eval rm x"))).toMatchObject({ decision: "ask", rule: "mode:default" })
      expect((yield* open.decide("bash", bash("eval rm x"))).hard).toBeUndefined()
      // code in a file or a shell's input: an allow rule naming the command covers it, a deny rule makes it a hard ask
      const script = yield* engine({ allow: ["Bash(sh wait.sh)"] }, "deny")
      expect(yield* script.decide("bash", bash("sh wait.sh"))).toMatchObject({ decision: "allow" })
      expect(yield* script.decide("bash", bash("sh other.sh"))).toMatchObject({ decision: "ask", rule: "mode:default" })
      const guardedScript = yield* engine({ allow: ["Bash(sh wait.sh)"], deny: ["Bash(rm:*)"] }, "deny")
      expect(yield* guardedScript.decide("bash", bash("sh wait.sh"))).toMatchObject({ decision: "ask", hard: true })
    }))

  it.effect("[issue 26] allow rules never cover writing redirections, substitutions or unknowable programs", () =>
    Effect.gen(function*() {
      const p = yield* engine({ allow: ["Bash(echo:*)", "Bash(cat:*)", "Bash(git status)"] }, "deny")
      const decision = (command: string) => Effect.map(p.decide("bash", bash(command)), (d) => d.decision)
      for (const command of [
        "echo x > .claude/settings.json",
        "echo x >> a",
        "echo x &> a",
        "echo x >| a",
        "echo x >&a",
        "echo x 2> err.log",
        "echo $(rm x)",
        "cat <(rm x)",
        "echo x > >(cat)",
        "cat <<< \"$(rm x)\"",
        "$CMD <<< hi",
        "./git status",
        "git status; rm x"
      ]) {
        expect([command, yield* decision(command)]).toEqual([command, "ask"])
      }
      for (const command of ["echo x", "echo x > /dev/null 2>&1", "echo x >&2", "git status | cat", "cat < in.txt", "cat <<< hi"]) {
        expect([command, yield* decision(command)]).toEqual([command, "allow"])
      }
    }))

  it.effect("[issue 26] the analysis: assignments, quotes, paths, wrappers, find -delete, bash -c, substitutions", () =>
    Effect.gen(function*() {
      const parser = yield* ShellParser.make
      const a = (command: string) => parser.analyze(command)
      expect(words(yield* a("FOO=1 \\/bin/r''m -f \"x y\""))).toEqual(["/bin/rm -f x y"])
      expect((yield* a("/bin/rm x")).invocations[0]!.name).toBe("rm")
      expect(words(yield* a("env -i A=1 nice -n 5 timeout -k 1 5 rm x"))).toEqual([
        "env -i A=1 nice -n 5 timeout -k 1 5 rm x",
        "nice -n 5 timeout -k 1 5 rm x",
        "timeout -k 1 5 rm x",
        "rm x"
      ])
      expect(words(yield* a("find . -name '*.o' -delete"))).toEqual(["find . -name *.o -delete", "rm"])
      expect(words(yield* a("sh -c 'bash -c \"rm x\"'"))).toEqual(["sh -c bash -c \"rm x\"", "bash -c rm x", "rm x"])
      expect(words(yield* a("command -v rm"))).toEqual(["command -v rm"])
      const sub = yield* a("echo \"$(rm x)\"")
      expect(sub.substitution).toBe(true)
      expect(words(sub)).toContain("rm x")
      expect((yield* a("echo 'unterminated")).unknowable).toEqual(["the command is not valid shell syntax"])
      expect((yield* a("env --frobnicate rm x")).unknowable[0]).toContain("not understood")
      expect((yield* a("bash script.sh")).opaque[0]).toContain("runs commands from a file")
      expect((yield* a("bash script.sh")).unknowable).toEqual([])
      const deep = `${"sh -c ".repeat(1)}'${"sh -c \"".repeat(1)}rm x\"'`
      expect(words(yield* a(deep))).toContain("rm x")
      // interpreters with inline code are the documented limit: ordinary commands
      const python = yield* a("python3 -c 'import os; os.remove(\"x\")'")
      expect(python.unknowable).toEqual([])
      expect(words(python)).toEqual(["python3 -c import os; os.remove(\"x\")"])
    }))
})
