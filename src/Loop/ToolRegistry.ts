/**
 * Tool registry layers (T-1): a global layer (held by `ToolRuntime`) and agent-scoped layers. A
 * {@link View} combines them for one agent: an agent-scoped tool shadows a same-named global one;
 * restrictions (allow/deny lists over the globals, several intersect) hide a global tool from the
 * prompt AND from execution, so a hidden tool is indistinguishable from an unknown one.
 *
 * Decisions where the spec is silent (DEC-10):
 * - Layers are live: tools may be registered for the lifetime of a `Scope` (closing it removes the
 *   tool), so a view always reflects the current layers; the scheduler resolves a tool when a call
 *   starts (L-14 re-classification sees a replacement).
 * - Restrictions apply to globals only; an agent's own tools are always visible to that agent.
 * - `schemas()` lists scoped tools first, then visible globals, each in registration order; the
 *   caller sorts (L-34).
 * - Requirements of tool bodies are captured when the tool enters a layer, so they surface in the
 *   Effect (or Layer) that builds the layer.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { ToolSchema } from "../Llm/Message.js"
import * as Tool from "./Tool.js"

/**
 * A tool name is already taken in a layer.
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicateToolError extends Schema.TaggedError<DuplicateToolError>()("DuplicateToolError", {
  name: Schema.String,
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "DUPLICATE_TOOL" as const
}

interface State {
  readonly next: number
  readonly entries: ReadonlyArray<Entry>
}

interface Entry {
  readonly id: number
  readonly tool: Tool.Tool<never>
}

/**
 * One layer of uniquely named tools.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry {
  readonly state: Ref.Ref<State>
}

const duplicate = (name: string) =>
  new DuplicateToolError({ name, message: `a tool named "${name}" is already registered in this layer` })

/**
 * An empty layer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Effect.Effect<Registry> = Effect.map(
  Ref.make<State>({ next: 0, entries: [] }),
  (state) => ({ state })
)

/**
 * A layer holding `tools` (names must be unique); their requirements are captured now.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any>>(
  tools: Tools
): Effect.Effect<Registry, DuplicateToolError, Tool.Requirements<Tools[number]>> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Tool.Requirements<Tools[number]>>()
    const seen = new Set<string>()
    const entries: Array<Entry> = []
    for (const tool of tools) {
      if (seen.has(tool.name)) return yield* Effect.fail(duplicate(tool.name))
      seen.add(tool.name)
      entries.push({
        id: entries.length,
        tool: Tool.provideContext(tool as Tool.Tool<Tool.Requirements<Tools[number]>>, context)
      })
    }
    const state = yield* Ref.make<State>({
      next: entries.length,
      entries
    })
    return { state }
  })

/**
 * Adds a tool to a layer for the lifetime of the current scope; fails when the name is taken.
 *
 * @since 0.1.0
 * @category combinators
 */
export const register = <R>(
  registry: Registry,
  tool: Tool.Tool<R>
): Effect.Effect<void, DuplicateToolError, R | Scope.Scope> =>
  Effect.flatMap(Tool.bind(tool), (bound) =>
    Effect.acquireRelease(
      Effect.flatMap(
        Ref.modify(registry.state, (s: State): readonly [Option.Option<number>, State] =>
          s.entries.some((e) => e.tool.name === bound.name)
            ? [Option.none(), s]
            : [Option.some(s.next), { next: s.next + 1, entries: [...s.entries, { id: s.next, tool: bound }] }]),
        Option.match({
          onNone: (): Effect.Effect<number, DuplicateToolError> => Effect.fail(duplicate(bound.name)),
          onSome: (id) => Effect.succeed(id)
        })
      ),
      (id: number) => Ref.update(registry.state, (s): State => ({ ...s, entries: s.entries.filter((e) => e.id !== id) }))
    )).pipe(Effect.asVoid)

/**
 * The tools of a layer in registration order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const tools = (registry: Registry): Effect.Effect<ReadonlyArray<Tool.Tool<never>>> =>
  Effect.map(Ref.get(registry.state), (s) => s.entries.map((e) => e.tool))

/**
 * An allow and/or deny list over global tool names.
 *
 * @since 0.1.0
 * @category models
 */
export interface Restriction {
  /** only these globals are visible (absent: all) */
  readonly allow?: ReadonlyArray<string>
  /** these globals are hidden */
  readonly deny?: ReadonlyArray<string>
}

/**
 * `true` when a global named `name` passes every restriction (they intersect).
 *
 * @since 0.1.0
 * @category utils
 */
export const isAllowed = (restrictions: ReadonlyArray<Restriction>, name: string): boolean =>
  restrictions.every((r) => (r.allow === undefined || r.allow.includes(name)) && !(r.deny?.includes(name) ?? false))

/**
 * What one agent may see and run.
 *
 * @since 0.1.0
 * @category models
 */
export interface View {
  /** the visible tool named `name`; hidden and unknown are the same `None` */
  readonly get: (name: string) => Effect.Effect<Option.Option<Tool.Tool<never>>>
  /** every visible tool: scoped first, then globals, each in registration order */
  readonly tools: () => Effect.Effect<ReadonlyArray<Tool.Tool<never>>>
  /** detached `{name, description, parameters}` of every visible tool (V-7), unsorted */
  readonly schemas: () => Effect.Effect<ReadonlyArray<ToolSchema>>
}

/**
 * Options of {@link view}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ViewOptions {
  readonly global: Registry
  readonly scoped?: Registry
  readonly restrictions?: Restriction | ReadonlyArray<Restriction>
}

/**
 * A live view over a global and an optional agent-scoped layer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const view = (options: ViewOptions): View => {
  const restrictions: ReadonlyArray<Restriction> = options.restrictions === undefined
    ? []
    : Array.isArray(options.restrictions)
    ? options.restrictions as ReadonlyArray<Restriction>
    : [options.restrictions as Restriction]
  const visible = Effect.gen(function*() {
    const scoped = options.scoped === undefined ? [] : yield* tools(options.scoped)
    const globals = yield* tools(options.global)
    const shadowed = new Set(scoped.map((t) => t.name))
    return [...scoped, ...globals.filter((t) => !shadowed.has(t.name) && isAllowed(restrictions, t.name))]
  })
  return {
    get: (name) => Effect.map(visible, (all) => Option.fromNullishOr(all.find((t) => t.name === name))),
    tools: () => visible,
    schemas: () => Effect.map(visible, (all) => all.map(Tool.toSchema))
  }
}
