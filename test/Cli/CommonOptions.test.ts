import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as CommonOptions from "../../src/Cli/CommonOptions.js"
import * as Persona from "../../src/Cli/Persona.js"

const common = (over: Partial<CommonOptions.Common> = {}): CommonOptions.Common => ({
  provider: Option.none(),
  model: Option.none(),
  baseUrl: Option.none(),
  script: Option.none(),
  resume: Option.none(),
  continue: false,
  cwd: Option.none(),
  store: "jsonl",
  maxSteps: Option.none(),
  contextWindow: Option.none(),
  yes: false,
  verbose: false,
  permissionMode: Option.none(),
  settings: Option.none(),
  noHooks: false,
  ...over
})

describe("CommonOptions (issue 15: tool rules and system prompt flags)", () => {
  it("--allowed-tools / --disallowed-tools split on commas and spaces outside parentheses into cli rules", () => {
    expect(CommonOptions.splitRules("Read, Bash(git log:*),Edit(src/**)  Grep")).toEqual(["Read", "Bash(git log:*)", "Edit(src/**)", "Grep"])
    expect(CommonOptions.cliRules(common({ allowedTools: ["Read"], disallowedTools: ["Bash(rm:*) Write"] }))).toEqual([
      { kind: "allow", text: "Read", origin: "cli" },
      { kind: "deny", text: "Bash(rm:*)", origin: "cli" },
      { kind: "deny", text: "Write", origin: "cli" }
    ])
  })

  it.effect("a rule that does not parse and a blank appended prompt are usage errors", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.exit(CommonOptions.validate(common({ disallowedTools: ["Bash(rm"] })))
      expect(Exit.isFailure(bad)).toBe(true)
      const blank = yield* Effect.exit(CommonOptions.validate(common({ appendSystemPrompt: Option.some("  ") })))
      expect(Exit.isFailure(blank)).toBe(true)
      yield* CommonOptions.validate(common({ allowedTools: ["Read,Bash(git status)"] }))
    }))

  it("the persona by default; the user's texts as variables (kept literally), appended last", () => {
    expect(CommonOptions.systemPromptOf(common())).toEqual({ persona: Persona.persona, variables: {} })
    const options = CommonOptions.systemPromptOf(common({ systemPrompt: Option.some("{{x}}"), appendSystemPrompt: Option.some("more") }))
    expect(options.persona).toBe("{{cli_system_prompt}}")
    expect(options.sections).toEqual([{ name: "cli-append", order: 1_000, text: "{{cli_append_system_prompt}}" }])
    const ctx = {} as Parameters<NonNullable<typeof options.variables>[string]>[0]
    expect(options.variables?.["cli_system_prompt"]?.(ctx)).toBe("{{x}}")
    expect(options.variables?.["cli_append_system_prompt"]?.(ctx)).toBe("more")
    expect(CommonOptions.systemPromptOf(common({ systemPrompt: Option.some("") })).persona).toBe("")
  })
})
