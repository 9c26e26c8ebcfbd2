/**
 * Attack tests (issue 26, items 2 and 6): permission rules that a shell spelling, a redirection,
 * a permission mode, `--yes` or a symbolic link cannot defeat. Each case runs the real bundled CLI
 * in a fresh workspace with a scripted model issuing the attack, then looks at the real files and
 * at the tool results in the session log.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "../support/Cli.js"
import { RM_SPELLINGS } from "./RmSpellings.js"

const TIMEOUT = 120_000

const scriptAvailable = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0
if (!scriptAvailable) console.warn("attack/Rules: script(1) is not available; the terminal question test is skipped")

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

interface Call {
  readonly name: string
  readonly args: Record<string, unknown>
}

const bash = (command: string): Call => ({ name: "bash", args: { command } })

/** a script issuing every call in its own step, then a final answer */
const script = (calls: ReadonlyArray<Call>): string =>
  JSON.stringify({
    provider: "scripted",
    model: "demo",
    responses: [
      ...calls.map((call, i) => [
        { toolCall: { id: `c${i}`, name: call.name, arguments: JSON.stringify(call.args) } },
        { finish: { kind: "tool-calls" } }
      ]),
      { text: "FINAL-ANSWER" }
    ]
  })

/** runs `harness run` with `calls` in `work`; the tool results by call index */
const attack = (work: string, calls: ReadonlyArray<Call>, flags: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const home = yield* Cli.tempDir("harness-attack-home-")
    // the script lives outside the workspace, so a search cannot find the attack's own words
    const scriptFile = join(home, "attack-script.json")
    writeFileSync(scriptFile, script(calls))
    const result = yield* Cli.runCli(["run", ...flags, "--script", scriptFile, "go"], {
      cwd: work,
      home,
      timeoutMs: 90_000
    })
    expect(result.code, result.stderr).toBe(0)
    const [file] = Cli.sessionLogs(home)
    const events = Cli.readLog(file!).events
    return calls.map((_, i) => {
      const event = events.find((e) => e.type === "tool/result" && e.data.callId === `c${i}`)
      if (event === undefined || event.type !== "tool/result") throw new Error(`no result for call c${i}`)
      return { isError: event.data.isError, text: JSON.stringify(event.data.content) }
    })
  })


describe("attack: permission rules against shell spellings, redirections, modes and links (issue 26)", () => {
  it.live(
    `[issue 26] under --yes --disallowed-tools "bash(rm:*)", none of ${RM_SPELLINGS.length} spellings of rm deletes the file`,
    () =>
      Effect.gen(function*() {
        const work = yield* Cli.tempDir("harness-attack-ws-")
        writeFileSync(join(work, "x"), "precious\n")
        writeFileSync(join(work, "list"), "x\n")
        writeFileSync(join(work, "list0"), "x\0")
        writeFileSync(join(work, "script.sh"), "rm x\n")
        const results = yield* attack(work, RM_SPELLINGS.map(bash), ["--yes", "--disallowed-tools", "bash(rm:*)"])
        const ran = RM_SPELLINGS.filter((_, i) => !(results[i]!.isError && results[i]!.text.includes("was not run")))
        expect(ran, "spellings that were run").toEqual([])
        expect(readFileSync(join(work, "x"), "utf8")).toBe("precious\n")
      }),
    TIMEOUT
  )

  it.live(
    "[issue 26] an allow rule Bash(echo:*) does not cover `echo … > .claude/settings.json` or any writing redirection",
    () =>
      Effect.gen(function*() {
        const work = yield* Cli.tempDir("harness-attack-ws-")
        mkdirSync(join(work, ".claude"))
        const results = yield* attack(work, [
          bash("echo '{\"hooks\":{}}' > .claude/settings.json"),
          bash("echo planted >> planted.txt"),
          bash("echo fine > /dev/null 2>&1")
        ], ["--allowed-tools", "Bash(echo:*)"])
        expect(existsSync(join(work, ".claude/settings.json"))).toBe(false)
        expect(existsSync(join(work, "planted.txt"))).toBe(false)
        expect(results[0]!.text).toContain("not interactive")
        expect(results[1]!.text).toContain("not interactive")
        // a harmless redirection stays covered by the rule
        expect(results[2]!.isError, results[2]!.text).toBe(false)
      }),
    TIMEOUT
  )

  it.live(
    "[issue 26] --permission-mode acceptEdits: write .claude/settings.json and .git/hooks/pre-commit are refused",
    () =>
      Effect.gen(function*() {
        const work = yield* Cli.tempDir("harness-attack-ws-")
        mkdirSync(join(work, ".git/hooks"), { recursive: true })
        const results = yield* attack(work, [
          { name: "write", args: { file_path: ".claude/settings.json", content: "{\"hooks\":{}}" } },
          { name: "write", args: { file_path: ".git/hooks/pre-commit", content: "#!/bin/sh\ntouch PWNED\n" } },
          { name: "write", args: { file_path: "notes.txt", content: "fine" } }
        ], ["--permission-mode", "acceptEdits"])
        expect(existsSync(join(work, ".claude/settings.json"))).toBe(false)
        expect(existsSync(join(work, ".git/hooks/pre-commit"))).toBe(false)
        expect(results[0]!.text).toContain("harness or git configuration")
        expect(results[1]!.text).toContain("harness or git configuration")
        expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("fine")
      }),
    TIMEOUT
  )

  it.live(
    "[issue 26] --yes (even with --permission-mode bypassPermissions): write .mcp.json is refused",
    () =>
      Effect.gen(function*() {
        const work = yield* Cli.tempDir("harness-attack-ws-")
        const mcp = { name: "write", args: { file_path: ".mcp.json", content: "{\"mcpServers\":{}}" } }
        const [yes] = yield* attack(work, [mcp], ["--yes"])
        const [bypass] = yield* attack(work, [mcp], ["--yes", "--permission-mode", "bypassPermissions"])
        expect(existsSync(join(work, ".mcp.json"))).toBe(false)
        expect(yes!.text).toContain("needs a person's approval")
        expect(bypass!.text).toContain("needs a person's approval")
      }),
    TIMEOUT
  )

  it.live(
    "[issue 26] Edit(src/**) does not allow a write through a symlink out of src/ (src/cfg -> ../.claude, src/out -> ../lib)",
    () =>
      Effect.gen(function*() {
        const work = yield* Cli.tempDir("harness-attack-ws-")
        mkdirSync(join(work, "src"))
        mkdirSync(join(work, ".claude"))
        mkdirSync(join(work, "lib"))
        symlinkSync("../.claude", join(work, "src/cfg"))
        symlinkSync("../lib", join(work, "src/out"))
        const results = yield* attack(work, [
          { name: "write", args: { file_path: "src/cfg/settings.json", content: "{\"hooks\":{}}" } },
          { name: "write", args: { file_path: "src/out/planted.js", content: "evil()" } },
          { name: "write", args: { file_path: "src/ok.ts", content: "ok" } }
        ], ["--allowed-tools", "Edit(src/**)"])
        expect(existsSync(join(work, ".claude/settings.json"))).toBe(false)
        expect(existsSync(join(work, "lib/planted.js"))).toBe(false)
        expect(results[0]!.isError).toBe(true)
        expect(results[1]!.text).toContain("not interactive")
        expect(readFileSync(join(work, "src/ok.ts"), "utf8")).toBe("ok")
      }),
    TIMEOUT
  )

  it.live(
    "[issue 26] Read(./secrets/**) denied: read, ls, glob and grep (with and without a path, through docs -> secrets) never show it",
    () =>
      Effect.gen(function*() {
        const work = yield* Cli.tempDir("harness-attack-ws-")
        mkdirSync(join(work, "secrets"))
        writeFileSync(join(work, "secrets/key.txt"), "TOPSECRET-123\n")
        writeFileSync(join(work, "readme.md"), "hello\n")
        symlinkSync("secrets", join(work, "docs"))
        const calls: ReadonlyArray<Call> = [
          { name: "read", args: { file_path: "docs/key.txt" } },
          { name: "read", args: { file_path: "secrets/key.txt" } },
          { name: "ls", args: { path: "docs" } },
          { name: "ls", args: { path: "secrets" } },
          { name: "glob", args: { pattern: "**/*" } },
          { name: "glob", args: { pattern: "**/*", path: "docs" } },
          { name: "grep", args: { pattern: "SECRET" } },
          { name: "grep", args: { pattern: "SECRET", path: "docs" } },
          { name: "grep", args: { pattern: "SECRET", path: "docs/key.txt" } },
          { name: "grep", args: { pattern: "hello" } }
        ]
        const results = yield* attack(work, calls, ["--yes", "--disallowed-tools", "Read(./secrets/**)"])
        const leaks = calls.flatMap((call, i) => /TOPSECRET|key\.txt/.test(results[i]!.text) ? [{ call, result: results[i]!.text }] : [])
        expect(leaks, "calls that showed the secret").toEqual([])
        // the rest of the workspace stays readable
        expect(results[9]!.text).toContain("readme.md")
      }),
    TIMEOUT
  )

  it.live.skipIf(!scriptAvailable)(
    "[issue 26] at a terminal, --yes still asks a person about an unknowable command under a deny rule and about .mcp.json, without \"always\"",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-attack-home-")
        const work = yield* Cli.tempDir("harness-attack-ws-")
        const bundle = yield* Cli.bundle
        writeFileSync(join(work, "x"), "precious\n")
        const scriptFile = join(home, "attack-script.json")
        writeFileSync(scriptFile, script([bash("eval rm x"), { name: "write", args: { file_path: ".mcp.json", content: "{}" } }]))
        const command = `${quote(process.execPath)} ${quote(bundle)} run --yes --disallowed-tools ${quote("bash(rm:*)")} ` +
          `--script ${quote(scriptFile)} go`
        const output = yield* Effect.callback<string>((resume) => {
          const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: work, env: Cli.cleanEnv(home) })
          let text = ""
          let answered = 0
          child.stdout.setEncoding("utf8")
          child.stdout.on("data", (d: string) => {
            text += d
            // answer each question "n" once it is on the screen
            const asked = (text.match(/\[y(\/[a-z])*\/N\]/g) ?? []).length
            while (answered < asked) {
              answered++
              setTimeout(() => child.stdin.write("n\r"), 250)
            }
          })
          child.stdin.on("error", () => {})
          child.on("close", () => resume(Effect.succeed(text)))
          return Effect.sync(() => void child.kill("SIGKILL"))
        }).pipe(Effect.timeout("60 seconds"), Effect.orDie)
        const questions = output.match(/\[y(\/[a-z])*\/N\]/g) ?? []
        expect(questions, output).toEqual(["[y/N]", "[y/N]"])
        expect(output).toContain("cannot be known")
        expect(output).toContain("harness or git configuration")
        expect(readFileSync(join(work, "x"), "utf8")).toBe("precious\n")
        expect(existsSync(join(work, ".mcp.json"))).toBe(false)
      }),
    TIMEOUT
  )
})
