/**
 * The system prompt (L-31..L-34): sections with an order, strict `{{variable}}` interpolation and
 * the model-facing tool order. Assembled and rendered on every step, before `step/start`; any
 * failure here fails the turn at that step number with no request (L-12.3).
 *
 * - **Sections** `{name, order, text | (ctx) => text}` and **variables** `name → (ctx) => string |
 *   undefined` are registered globally or per agent (`{agentId}`); an agent-scoped entry shadows
 *   a global one of the same name; a duplicate name within one layer or a non-finite order is a
 *   {@link SystemPromptError}. Registration is scoped.
 * - Sections sort by ascending `order`, ties by registration (L-32). Conventional orders: -100
 *   harness identity ({@link identity}, registered by {@link layer}), 0 deployment persona (agent
 *   option), 100–199 tool guidance.
 * - The `assembly` waterfall sees the ordered section list and may rewrite or replace it (an empty
 *   list means no `system` field); rendering then resolves texts, interpolates, drops empty
 *   sections and joins with `\n\n`. An empty result means **no** `system` field.
 * - Interpolation (L-33): names match `^[a-z][a-z0-9_]*$`; the loop provides `provider`, `model`
 *   and `cwd` (a lowest layer that registered variables may shadow). A `{{` followed later by a
 *   `}}` must form a complete group `{{name}}`; otherwise the template is malformed (`{{ model }}`,
 *   `{{}}`, `{{{model}}}`). A `{{` with no later `}}` stays literal; substituted values are not
 *   re-scanned. Unregistered names fail (own keys only); a registered name whose value is
 *   `undefined` **or empty** fails ("missing value", DEC-10: an empty value would silently produce
 *   a broken sentence).
 * - Tools (L-34) sort by name in code-unit order unless `toolOrder` lists names around exactly one
 *   {@link rest} marker (`"*"`, DEC-10); unlisted tools go at the marker, sorted. A listed unknown
 *   name fails; a tool named like the marker fails.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { ToolSchema } from "../Llm/Message.js"
import type { HookAgent } from "./Hooks.js"
import * as Interception from "./Interception.js"
import * as AgentScoped from "./internal/AgentScoped.js"

/**
 * System prompt failures. Codes: `MISSING_VARIABLE`, `UNKNOWN_VARIABLE`, `MALFORMED_TEMPLATE`,
 * `SECTION_FAILED` (a section function threw), `DUPLICATE_SECTION`, `DUPLICATE_VARIABLE`,
 * `INVALID_ORDER`, `INVALID_VARIABLE_NAME`, `INVALID_TOOL_ORDER`, `UNKNOWN_TOOL_IN_ORDER`,
 * `RESERVED_TOOL_NAME`.
 *
 * @since 0.1.0
 * @category errors
 */
export class SystemPromptError extends Schema.TaggedError<SystemPromptError>()("SystemPromptError", {
  code: Schema.Literals([
    "MISSING_VARIABLE",
    "UNKNOWN_VARIABLE",
    "MALFORMED_TEMPLATE",
    "SECTION_FAILED",
    "DUPLICATE_SECTION",
    "DUPLICATE_VARIABLE",
    "INVALID_ORDER",
    "INVALID_VARIABLE_NAME",
    "INVALID_TOOL_ORDER",
    "UNKNOWN_TOOL_IN_ORDER",
    "RESERVED_TOOL_NAME"
  ]),
  message: Schema.String
}) {}

/**
 * What a section function and a variable see.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptContext {
  readonly agentId: string
  readonly provider: string
  readonly model: string
  readonly cwd: string | undefined
  readonly turn: number
  readonly step: number
}

/**
 * A system prompt section.
 *
 * @since 0.1.0
 * @category models
 */
export interface Section {
  readonly name: string
  readonly order: number
  readonly text: string | ((ctx: PromptContext) => string)
}

/**
 * A variable: its value for a context, or `undefined` when it has none.
 *
 * @since 0.1.0
 * @category models
 */
export type Variable = (ctx: PromptContext) => string | undefined

/**
 * The `toolOrder` rest marker.
 *
 * @since 0.1.0
 * @category constants
 */
export const rest = "*" as const

/**
 * The harness identity section (order -100): one sentence naming the product.
 *
 * @since 0.1.0
 * @category constants
 */
export const identity: Section = {
  name: "identity",
  order: -100,
  text: "You are an AI agent running in effect-harness, an Effect-native LLM agent harness."
}

const variableName = /^[a-z][a-z0-9_]*$/

/**
 * A variable lookup result: its value (possibly `undefined`), or the message of its failure.
 *
 * @since 0.1.0
 * @category models
 */
export type Lookup = { readonly value: string | undefined } | { readonly failed: string }

const fail = (code: SystemPromptError["code"], message: string) => Result.fail(new SystemPromptError({ code, message }))

/**
 * Strict interpolation (L-33). `lookup(name)` returns `undefined` for an unregistered name and
 * a {@link Lookup} for a registered one.
 *
 * @since 0.1.0
 * @category rendering
 */
export const interpolate = (
  template: string,
  lookup: (name: string) => Lookup | undefined
): Result.Result<string, SystemPromptError> => {
  let out = ""
  let at = 0
  for (;;) {
    const open = template.indexOf("{{", at)
    if (open === -1) return Result.succeed(out + template.slice(at))
    const close = template.indexOf("}}", open + 2)
    if (close === -1) return Result.succeed(out + template.slice(at))
    const name = template.slice(open + 2, close)
    if (!variableName.test(name)) {
      return fail(
        "MALFORMED_TEMPLATE",
        `malformed template group ${JSON.stringify(template.slice(open, close + 2))}: expected {{name}} with name matching ^[a-z][a-z0-9_]*$`
      )
    }
    const entry = lookup(name)
    if (entry === undefined) return fail("UNKNOWN_VARIABLE", `unknown template variable "${name}"`)
    if ("failed" in entry) return fail("SECTION_FAILED", `template variable "${name}" failed: ${entry.failed}`)
    if (entry.value === undefined || entry.value === "") {
      return fail("MISSING_VARIABLE", `template variable "${name}" has no value (missing value)`)
    }
    out += template.slice(at, open) + entry.value
    at = close + 2
  }
}

/**
 * Checks a `toolOrder` list: exactly one {@link rest} marker, no duplicates.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateToolOrder = (toolOrder: ReadonlyArray<string>): Result.Result<void, SystemPromptError> => {
  const markers = toolOrder.filter((n) => n === rest).length
  if (markers !== 1) {
    return fail("INVALID_TOOL_ORDER", `toolOrder must contain exactly one rest marker "${rest}" (found ${markers})`)
  }
  const seen = new Set<string>()
  for (const name of toolOrder) {
    if (seen.has(name)) return fail("INVALID_TOOL_ORDER", `toolOrder lists "${name}" twice`)
    seen.add(name)
  }
  return Result.void
}

const byName = (a: ToolSchema, b: ToolSchema): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * Orders the model-facing tools (L-34).
 *
 * @since 0.1.0
 * @category rendering
 */
export const orderTools = (
  tools: ReadonlyArray<ToolSchema>,
  toolOrder?: ReadonlyArray<string>
): Result.Result<ReadonlyArray<ToolSchema>, SystemPromptError> => {
  for (const tool of tools) {
    if (tool.name === rest) return fail("RESERVED_TOOL_NAME", `a tool may not be named "${rest}" (the toolOrder rest marker)`)
  }
  if (toolOrder === undefined) return Result.succeed([...tools].sort(byName))
  const valid = validateToolOrder(toolOrder)
  if (Result.isFailure(valid)) return Result.fail(valid.failure)
  const byKey = new Map(tools.map((t) => [t.name, t]))
  for (const name of toolOrder) {
    if (name !== rest && !byKey.has(name)) {
      return fail("UNKNOWN_TOOL_IN_ORDER", `toolOrder names unknown tool "${name}"`)
    }
  }
  const listed = new Set(toolOrder)
  const others = tools.filter((t) => !listed.has(t.name)).sort(byName)
  const out: Array<ToolSchema> = []
  for (const name of toolOrder) {
    if (name === rest) out.push(...others)
    else out.push(byKey.get(name) as ToolSchema)
  }
  return Result.succeed(out)
}

/**
 * Renders ordered sections (L-32): resolves texts, interpolates, drops empty sections, joins with
 * a blank line. `undefined` when nothing remains.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (
  sections: ReadonlyArray<Section>,
  ctx: PromptContext,
  lookup: (name: string) => Lookup | undefined
): Result.Result<string | undefined, SystemPromptError> => {
  const parts: Array<string> = []
  for (const section of sections) {
    let template: string
    if (typeof section.text === "string") {
      template = section.text
    } else {
      try {
        template = section.text(ctx)
      } catch (e) {
        return fail("SECTION_FAILED", `system prompt section "${section.name}" failed: ${Interception.messageOf(e)}`)
      }
    }
    const text = interpolate(template, lookup)
    if (Result.isFailure(text)) return Result.fail(text.failure)
    if (text.success !== "") parts.push(text.success)
  }
  return Result.succeed(parts.length === 0 ? undefined : parts.join("\n\n"))
}

/**
 * `assembly` point input: the ordered sections about to be rendered.
 *
 * @since 0.1.0
 * @category models
 */
export interface AssemblyInput {
  readonly agent: HookAgent
  readonly turn: number
  readonly step: number
  readonly sections: ReadonlyArray<Section>
}

/**
 * What one assembly produced.
 *
 * @since 0.1.0
 * @category models
 */
export interface Assembled {
  readonly system: string | undefined
  readonly tools: ReadonlyArray<ToolSchema>
}

/**
 * What the loop hands to {@link Service.assemble}.
 *
 * @since 0.1.0
 * @category models
 */
export interface AssembleInput {
  readonly agent: HookAgent
  readonly context: PromptContext
  readonly tools: ReadonlyArray<ToolSchema>
  readonly toolOrder?: ReadonlyArray<string>
}

/**
 * Registration options: agent-scoped when `agentId` is set.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegisterOptions {
  readonly agentId?: string
}

/**
 * The system prompt service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly registerSection: (
    section: Section,
    options?: RegisterOptions
  ) => Effect.Effect<void, SystemPromptError, Scope.Scope>
  readonly registerVariable: (
    name: string,
    variable: Variable,
    options?: RegisterOptions
  ) => Effect.Effect<void, SystemPromptError, Scope.Scope>
  /** rewrite or replace the ordered section list before rendering */
  readonly assembly: Interception.Waterfall<AssemblyInput, ReadonlyArray<Section>>
  /** assembles and renders the system prompt and orders the tools for one step */
  readonly assemble: (input: AssembleInput) => Effect.Effect<Assembled, SystemPromptError | Interception.HookFailure>
  /**
   * Sections and variables looked at so far by registrations and assemblies (diagnostics: an
   * assembly touches the global ones and its agent's own only).
   */
  readonly scanned: () => number
}

/**
 * The system prompt Tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class SystemPrompt extends Context.Service<SystemPrompt, Service>()("effect-harness/Loop/SystemPrompt") {}

interface Named<A> {
  readonly name: string
  readonly value: A
}

const builtins: ReadonlyMap<string, Variable> = new Map<string, Variable>([
  ["provider", (ctx) => ctx.provider],
  ["model", (ctx) => ctx.model],
  ["cwd", (ctx) => ctx.cwd]
])

/**
 * Creates the service with no sections.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service> = Effect.gen(function*() {
  // looked up by agent id: a step touches the global entries and its agent's own only (issue 20)
  const sections = AgentScoped.make<Named<Section>>()
  const variables = AgentScoped.make<Named<Variable>>()
  const assembly = yield* Interception.waterfall<AssemblyInput, ReadonlyArray<Section>>("system-prompt-assembly")

  const register = <A>(
    registry: AgentScoped.Registry<Named<A>>,
    entry: Named<A>,
    agentId: string | undefined,
    duplicate: SystemPromptError
  ): Effect.Effect<void, SystemPromptError, Scope.Scope> =>
    Effect.asVoid(Effect.acquireRelease(
      Effect.suspend(() => {
        const layer = agentId === undefined ? registry.global() : registry.own(agentId)
        return layer.some((e) => e.value.name === entry.name)
          ? Effect.fail(duplicate)
          : Effect.succeed(registry.add(entry, agentId))
      }),
      (added) => Effect.sync(() => registry.remove(added))
    ))

  /** The agent's entries, and the global ones it does not shadow by name. */
  const visible = <A>(registry: AgentScoped.Registry<Named<A>>, agentId: string): Array<AgentScoped.Entry<Named<A>>> => {
    const own = registry.own(agentId)
    const global = registry.global()
    if (own.length === 0) return global.slice()
    const shadowed = new Set(own.map((e) => e.value.name))
    return [...global.filter((e) => !shadowed.has(e.value.name)), ...own]
  }

  const registerSection: Service["registerSection"] = (section, options) =>
    Number.isFinite(section.order)
      ? register(
        sections,
        { name: section.name, value: section },
        options?.agentId,
        new SystemPromptError({
          code: "DUPLICATE_SECTION",
          message: `system prompt section "${section.name}" is already registered in this layer`
        })
      )
      : Effect.fail(
        new SystemPromptError({
          code: "INVALID_ORDER",
          message: `system prompt section "${section.name}" has a non-finite order`
        })
      )

  const registerVariable: Service["registerVariable"] = (name, variable, options) =>
    variableName.test(name)
      ? register(
        variables,
        { name, value: variable },
        options?.agentId,
        new SystemPromptError({
          code: "DUPLICATE_VARIABLE",
          message: `template variable "${name}" is already registered in this layer`
        })
      )
      : Effect.fail(
        new SystemPromptError({
          code: "INVALID_VARIABLE_NAME",
          message: `template variable name "${name}" must match ^[a-z][a-z0-9_]*$`
        })
      )

  const assemble: Service["assemble"] = (input) =>
    Effect.gen(function*() {
      const agentId: string = input.agent.id
      const ordered = visible(sections, agentId)
        .sort((a, b) => a.value.value.order - b.value.value.order || a.id - b.id)
        .map((e) => e.value.value)
      const values = new Map<string, Variable>(builtins)
      for (const v of visible(variables, agentId)) values.set(v.value.name, v.value.value)
      const finalSections = yield* assembly.run(
        agentId,
        { agent: input.agent, turn: input.context.turn, step: input.context.step, sections: ordered },
        (i) => Effect.succeed(i.sections)
      )
      const lookup = (name: string): Lookup | undefined => {
        const variable = values.get(name)
        if (variable === undefined) return undefined
        try {
          return { value: variable(input.context) }
        } catch (e) {
          return { failed: Interception.messageOf(e) }
        }
      }
      const system = yield* Effect.fromResult(render(finalSections, input.context, lookup))
      const tools = yield* Effect.fromResult(orderTools(input.tools, input.toolOrder))
      return { system, tools }
    })

  return {
    registerSection,
    registerVariable,
    assembly,
    assemble,
    scanned: () => sections.scanned() + variables.scanned()
  }
})

/**
 * The service with the harness {@link identity} section registered globally.
 * Built afresh on every `provide` (`Layer.fresh`): Effect 4 reuses a layer an enclosing `provide` already
 * built, and two agent worlds must never share sections or variables.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SystemPrompt> = Layer.fresh(Layer.effect(
  SystemPrompt,
  Effect.gen(function*() {
    const service = yield* make
    yield* Effect.orDie(service.registerSection(identity))
    return service
  })
))

/**
 * The service with no sections at all (tests, embedders that bring their own identity). Built afresh on every
 * `provide`, as {@link layer}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmpty: Layer.Layer<SystemPrompt> = Layer.fresh(Layer.effect(SystemPrompt, make))
