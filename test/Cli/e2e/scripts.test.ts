/**
 * End-to-end (issue 15, "Scripts and pipes", the options people expect): `--output-format json`
 * (one object, the documented result schema) and `stream-json` (= `--json`), conflicting format
 * flags, the settings files' defaults (model, store) with flags winning, `--allowed-tools` /
 * `--disallowed-tools` through the permission engine, `--system-prompt` /
 * `--append-system-prompt` in the request (kept literally), a script's `"model"`, `harness models`,
 * and help with examples.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Persona from "../../../src/Cli/Persona.js"
import * as Cli from "../../support/Cli.js"
import { Count, ResultLine } from "../../support/CliJson.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 120_000


/** One line of `harness models --json`. */
const ModelLine = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  context_window: Count,
  max_output_tokens: Count,
  default: Schema.Boolean,
  pricing: Schema.optional(Schema.Struct({
    input_per_mtok: Schema.Number,
    output_per_mtok: Schema.Number,
    cache_read_per_mtok: Schema.optional(Schema.Number),
    cache_write_per_mtok: Schema.optional(Schema.Number)
  }))
})

const usage = { input: 10, output: 5, cacheRead: 0 }

describe("harness CLI end to end: output formats and options (issue 15)", () => {
  it.live(
    "[issue 15] --output-format json is one result object; stream-json is --json; settings defaults apply and flags win; tool rules from flags; models; help examples",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const opts = { cwd: work, home }
        writeFileSync(join(work, "script.json"), JSON.stringify({ model: "model-from-script", responses: [{ text: "scripted answer" }] }))
        const [json, stream, conflict, denied, badRule, script, models, modelsJson, help] = yield* Effect.all([
          Cli.runCli(["run", "--output-format", "json", "list my files"], opts),
          Cli.runCli(["run", "--output-format", "stream-json", "list my files"], opts),
          Cli.runCli(["run", "--json", "--output-format", "text", "hi"], opts),
          Cli.runCli(["run", "--disallowed-tools", "Read", "--json", "list my files"], opts),
          Cli.runCli(["run", "--allowed-tools", "Bash(git", "hi"], opts),
          Cli.runCli(["run", "--script", "script.json", "--output-format", "stream-json", "hi"], opts),
          Cli.runCli(["models"], opts),
          Cli.runCli(["models", "--json"], opts),
          Cli.runCli(["run", "--help"], { ...opts, env: { NO_COLOR: "" } })
        ], { concurrency: 3 })

        // json: exactly one object on stdout, the documented result schema, nothing else
        expect(json!.code, json!.stderr).toBe(0)
        const jsonLines = Cli.linesOf(json!.stdout)
        expect(jsonLines).toHaveLength(1)
        const result = Schema.decodeUnknownSync(ResultLine, { onExcessProperty: "error" })(JSON.parse(jsonLines[0]!))
        expect(result).toMatchObject({ subtype: "success", num_steps: 2, turn_end_reason: { kind: "completed" } })
        expect(result.result).toContain("That was a complete agent turn")
        expect(result.session_id).toMatch(/^harness-session-/)
        expect(json!.stderr).not.toContain("resume with")

        // stream-json: init first, events, result last (the schema checks live in offline.test.ts)
        expect(stream!.code, stream!.stderr).toBe(0)
        const streamLines = Cli.linesOf(stream!.stdout).map((l) => JSON.parse(l) as { readonly type: string })
        expect(streamLines[0]!.type).toBe("init")
        expect(streamLines.at(-1)!.type).toBe("result")
        expect(streamLines.slice(1, -1).every((l) => l.type.includes("/"))).toBe(true)
        Schema.decodeUnknownSync(ResultLine, { onExcessProperty: "error" })(streamLines.at(-1))

        expect(conflict!.code).toBe(2)
        expect(Cli.linesOf(conflict!.stderr)).toEqual([
          "error: --json is --output-format stream-json; it cannot be combined with --output-format text"
        ])

        // --disallowed-tools: a deny rule of origin cli; the demo's ls call is refused, the turn goes on
        expect(denied!.code, denied!.stderr).toBe(0)
        const events = Cli.linesOf(denied!.stdout).map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> })
        expect(events.find((e) => e.type === "permission/decision")?.data).toMatchObject({
          tool: "ls",
          decision: "deny",
          rule: "Read",
          origin: "cli"
        })
        expect(events.find((e) => e.type === "tool/result")?.data).toMatchObject({ isError: true })
        expect(badRule!.code).toBe(2)
        expect(Cli.linesOf(badRule!.stderr)).toEqual([
          "error: --allowed-tools: \"Bash(git\" is not a tool rule (e.g. Read, Bash(git status), Edit(src/**))"
        ])

        // a script's "model" is the model
        expect(script!.code, script!.stderr).toBe(0)
        expect(JSON.parse(Cli.linesOf(script!.stdout)[0]!)).toMatchObject({ type: "init", model: "model-from-script" })

        // models: a table with a header, and one JSON line per model
        expect(models!.code, models!.stderr).toBe(0)
        expect(models!.stdout.split("\n")[0]).toMatch(/^PROVIDER\s+MODEL\s+CONTEXT/)
        expect(models!.stdout).toMatch(/deepseek\s+deepseek-v4-flash\s+128K\s+.*\(default\)/)
        const catalog = Cli.linesOf(modelsJson!.stdout).map((l) => Schema.decodeUnknownSync(ModelLine)(JSON.parse(l)))
        expect(catalog.find((m) => m.model === "claude-sonnet-4-5")).toMatchObject({
          provider: "anthropic",
          context_window: 200_000,
          default: true,
          pricing: { input_per_mtok: 3, output_per_mtok: 15 }
        })

        // help: examples, settings, the output formats; plain when piped
        expect(help!.code).toBe(0)
        for (const text of ["EXAMPLES", "SETTINGS", "--output-format", "--system-prompt", "--allowed-tools", "harness models"]) {
          expect(help!.stdout).toContain(text)
        }
        expect(help!.stdout).not.toContain("environment variables")
        // eslint-disable-next-line no-control-regex
        expect(help!.stdout).not.toMatch(/\u001b\[/)

        // settings defaults: the model and the store; flags win
        writeFileSync(join(home, "settings.json"), JSON.stringify({ model: "model-from-settings" }))
        mkdirSync(join(work, ".effect-harness"))
        writeFileSync(join(work, ".effect-harness", "settings.json"), JSON.stringify({ store: "sqlite" }))
        const [fromSettings, fromFlags] = yield* Effect.all([
          Cli.runCli(["run", "--json", "hi"], opts),
          Cli.runCli(["run", "--json", "--model", "model-from-flag", "--store", "jsonl", "hi"], opts)
        ], { concurrency: 2 })
        expect(fromSettings!.code, fromSettings!.stderr).toBe(0)
        expect(JSON.parse(Cli.linesOf(fromSettings!.stdout)[0]!)).toMatchObject({ type: "init", model: "model-from-settings" })
        expect(existsSync(join(home, "sessions.sqlite"))).toBe(true)
        expect(fromFlags!.code, fromFlags!.stderr).toBe(0)
        const flagInit = JSON.parse(Cli.linesOf(fromFlags!.stdout)[0]!) as { readonly session_id: string; readonly model: string }
        expect(flagInit.model).toBe("model-from-flag")
        const sqliteList = yield* Cli.runCli(["sessions", "list", "--json"], opts)
        const jsonlList = yield* Cli.runCli(["sessions", "list", "--json", "--store", "jsonl"], opts)
        // the settings' store is the default for sessions too; --store jsonl holds the flag's run
        expect(Cli.linesOf(sqliteList.stdout)).toHaveLength(1)
        expect(Cli.linesOf(jsonlList.stdout).map((l) => (JSON.parse(l) as { id: string }).id)).toContain(flagInit.session_id)
      }),
    TIMEOUT
  )

  it.live(
    "[issue 15] --system-prompt replaces the persona and --append-system-prompt adds a last section, both kept literally",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-e2e-home-")
        const work = yield* Cli.tempDir("harness-e2e-ws-")
        const fake = yield* FakeProvider.make({
          replies: [
            FakeProvider.sse(Wire.text("deepseek", "ok", usage)),
            FakeProvider.sse(Wire.text("deepseek", "ok", usage))
          ]
        })
        const opts = { cwd: work, home, env: { DEEPSEEK_API_KEY: "sk-e2e-prompt" } }
        const flags = ["--provider", "deepseek", "--base-url", fake.url]
        const replaced = yield* Cli.runCli(
          ["run", ...flags, "--system-prompt", "You are PIRATE-BOT {{not_a_variable}}", "--append-system-prompt", "ALWAYS-END-WITH-ARR", "hi"],
          opts
        )
        expect(replaced.code, replaced.stderr).toBe(0)
        const plain = yield* Cli.runCli(["run", ...flags, "hi"], opts)
        expect(plain.code, plain.stderr).toBe(0)
        const [withFlags, without] = yield* fake.awaitRequests(2)
        const systemOf = (body: unknown): string => {
          const messages = (body as { readonly messages: ReadonlyArray<{ role: string; content: unknown }> }).messages
          return messages.filter((m) => m.role === "system").map((m) => JSON.stringify(m.content)).join("\n")
        }
        const system = systemOf(withFlags!.body)
        expect(system).toContain("You are PIRATE-BOT {{not_a_variable}}")
        expect(system.indexOf("ALWAYS-END-WITH-ARR")).toBeGreaterThan(system.indexOf("PIRATE-BOT"))
        const persona = systemOf(without!.body)
        expect(persona).not.toContain("PIRATE-BOT")
        // the built-in persona is gone when replaced
        const personaStart = Persona.persona.split("\n")[0]!.slice(0, 40)
        expect(persona).toContain(personaStart)
        expect(system).not.toContain(personaStart)
      }),
    TIMEOUT
  )
})
