import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Scripted from "../../src/Adapter/Scripted.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import { echo, tool } from "../support/LoopKit.js"
import * as Reconstruction from "../support/Reconstruction.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"

const of = <K extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: K) =>
  events.filter((e): e is Extract<SessionEvent, { type: K }> => e.type === type)

const vars: Record<string, string | undefined> = { model: "m1", provider: "p1", empty: "", none: undefined }
const lookup = (name: string) => (Object.hasOwn(vars, name) ? { value: vars[name] } : undefined)
const render = (template: string) => SystemPrompt.interpolate(template, lookup)

describe("SystemPrompt (pure)", () => {
  it("[L-33] substitutes registered names; literal text stays; values are not re-scanned", () => {
    expect(render("model {{model}} via {{provider}}")).toEqual(Result.succeed("model m1 via p1"))
    expect(render("open {{ but never closed")).toEqual(Result.succeed("open {{ but never closed"))
    expect(render("no braces")).toEqual(Result.succeed("no braces"))
    const nested = SystemPrompt.interpolate("{{a}}", (n) => (n === "a" ? { value: "{{b}}" } : undefined))
    expect(nested).toEqual(Result.succeed("{{b}}"))
  })

  it("[L-33] malformed groups, unknown names (own keys only), missing and empty values fail", () => {
    const code = (template: string) => Result.match(render(template), { onFailure: (e) => e.code, onSuccess: () => "ok" })
    expect(code("{{ model }}")).toBe("MALFORMED_TEMPLATE")
    expect(code("{{}}")).toBe("MALFORMED_TEMPLATE")
    expect(code("{{{model}}}")).toBe("MALFORMED_TEMPLATE")
    expect(code("{{Model}}")).toBe("MALFORMED_TEMPLATE")
    expect(code("{{constructor}}")).toBe("UNKNOWN_VARIABLE")
    expect(code("{{nope}}")).toBe("UNKNOWN_VARIABLE")
    expect(code("{{none}}")).toBe("MISSING_VARIABLE")
    expect(code("{{empty}}")).toBe("MISSING_VARIABLE")
  })

  it("[L-34] tools sort by code unit; toolOrder with exactly one rest marker; unknown or reserved names fail", () => {
    const t = (name: string) => ({ name, description: name, parameters: { type: "object" } })
    const names = (r: ReturnType<typeof SystemPrompt.orderTools>) =>
      Result.match(r, { onFailure: (e) => e.code, onSuccess: (ts) => ts.map((x) => x.name).join(",") })
    expect(names(SystemPrompt.orderTools([t("zulu"), t("alpha"), t("Mike"), t("mike")]))).toBe("Mike,alpha,mike,zulu")
    expect(names(SystemPrompt.orderTools([t("zulu"), t("alpha"), t("mike")], ["zulu", "*"]))).toBe("zulu,alpha,mike")
    expect(names(SystemPrompt.orderTools([t("zulu"), t("alpha"), t("mike")], ["*", "alpha"]))).toBe("mike,zulu,alpha")
    expect(names(SystemPrompt.orderTools([t("a")], ["a"]))).toBe("INVALID_TOOL_ORDER")
    expect(names(SystemPrompt.orderTools([t("a")], ["*", "a", "a"]))).toBe("INVALID_TOOL_ORDER")
    expect(names(SystemPrompt.orderTools([t("a")], ["*", "*"]))).toBe("INVALID_TOOL_ORDER")
    expect(names(SystemPrompt.orderTools([t("a")], ["ghost", "*"]))).toBe("UNKNOWN_TOOL_IN_ORDER")
    expect(names(SystemPrompt.orderTools([t("*")]))).toBe("RESERVED_TOOL_NAME")
  })

  it.effect("[L-31] duplicate names within a layer, non-finite orders and bad variable names are errors; scoped shadows global", () =>
    Effect.gen(function*() {
      const sp = yield* SystemPrompt.make
      yield* sp.registerSection({ name: "a", order: 1, text: "global a" })
      expect((yield* Effect.flip(sp.registerSection({ name: "a", order: 2, text: "again" }))).code).toBe("DUPLICATE_SECTION")
      yield* sp.registerSection({ name: "a", order: 1, text: "scoped a" }, { agentId: "x" })
      expect((yield* Effect.flip(sp.registerSection({ name: "b", order: Number.NaN, text: "" }))).code).toBe("INVALID_ORDER")
      expect((yield* Effect.flip(sp.registerSection({ name: "c", order: Infinity, text: "" }))).code).toBe("INVALID_ORDER")
      expect((yield* Effect.flip(sp.registerVariable("Bad", () => "x"))).code).toBe("INVALID_VARIABLE_NAME")
      yield* sp.registerVariable("v", () => "1")
      expect((yield* Effect.flip(sp.registerVariable("v", () => "2"))).code).toBe("DUPLICATE_VARIABLE")
    }))
})

describe("SystemPrompt (loop)", () => {
  it.effect("AC-83 [L-33] persona `In {{cwd}}.` without cwd → no request, missing value, turn error; once supplied → `In /rescued.`", () =>
    Effect.gen(function*() {
      const sp = yield* SystemPrompt.SystemPrompt
      const t = yield* TestKit.agent({ systemPrompt: { persona: "In {{cwd}}." } })
      yield* t.prompt("hi")
      expect(yield* t.requests).toHaveLength(0)
      const [end] = yield* t.turnEnds
      expect(end).toMatchObject({ kind: "error", step: 1 })
      expect(end?.kind === "error" ? end.message : "").toContain("missing value")
      expect(of(yield* t.events, "step/start")).toHaveLength(0)
      yield* sp.registerVariable("cwd", () => "/rescued", { agentId: t.agent.id })
      yield* t.prompt("again")
      const [request] = yield* t.requests
      expect(request?.system?.endsWith("In /rescued.")).toBe(true)
      expect(yield* Reconstruction.check(t)).toBe(1)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("ok")] }))))

  it.effect("AC-84 [L-32] identity + persona {{model}} + guidance → three paragraphs; assembly replaced by empty → no system", () =>
    Effect.gen(function*() {
      const sp = yield* SystemPrompt.SystemPrompt
      const t = yield* TestKit.agent({
        systemPrompt: {
          persona: "You are {{model}}.",
          sections: [{ name: "guidance", order: 150, text: (ctx) => `Step ${ctx.step}: use tools wisely.` }]
        }
      })
      yield* t.prompt("hi")
      const [first] = yield* t.requests
      expect(first?.system).toBe(`${SystemPrompt.identity.text as string}\n\nYou are test.\n\nStep 1: use tools wisely.`)
      yield* sp.assembly.register(() => Effect.succeed([]))
      yield* t.prompt("again")
      const second = (yield* t.requests)[1]
      expect(second).not.toHaveProperty("system")
      expect(yield* Reconstruction.check(t)).toBe(2)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b")], identity: true }))))

  it.effect("AC-85 [L-34] tools zulu, alpha, mike → sorted; toolOrder [zulu, *]; an unknown listed name → error{step 1}, no step/start", () =>
    Effect.gen(function*() {
      const noop = (name: string) => tool(name, () => Effect.succeed([ContentBlock.text(name)]))
      const tools = [noop("zulu"), noop("alpha"), noop("mike")] as const
      const sorted = yield* TestKit.agent({ tools })
      yield* sorted.prompt("hi")
      expect((yield* sorted.requests)[0]?.tools?.map((x) => x.name)).toEqual(["alpha", "mike", "zulu"])
      expect(yield* Reconstruction.check(sorted)).toBe(1)
      const ordered = yield* TestKit.agent({ tools, systemPrompt: { toolOrder: ["zulu", "*"] } })
      yield* ordered.prompt("hi")
      expect((yield* ordered.requests)[1]?.tools?.map((x) => x.name)).toEqual(["zulu", "alpha", "mike"])
      expect(yield* Reconstruction.check(ordered)).toBe(1)
      const unknown = yield* TestKit.agent({ tools: [echo], systemPrompt: { toolOrder: ["ghost", "*"] } })
      yield* unknown.prompt("hi")
      const [end] = yield* unknown.turnEnds
      expect(end).toMatchObject({ kind: "error", step: 1 })
      expect(end?.kind === "error" ? end.message : "").toContain("\"ghost\"")
      expect(of(yield* unknown.events, "step/start")).toHaveLength(0)
      expect(yield* unknown.requests).toHaveLength(2)
      expect(yield* Reconstruction.check(unknown)).toBe(0)
    }).pipe(Effect.provide(TestKit.layer({ script: [Scripted.text("a"), Scripted.text("b")] }))))
})
