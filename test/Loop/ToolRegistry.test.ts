import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Tool from "../../src/Loop/Tool.js"
import * as ToolRegistry from "../../src/Loop/ToolRegistry.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import { batchEvents, call, rig, runCalls, textOf } from "../support/ToolKit.js"

const simple = (name: string, description = name) =>
  Tool.raw({ name, description, parameters: { type: "object" }, execute: () => Effect.succeed([ContentBlock.text(`${description} ran`)]) })

class Greeter extends Context.Service<Greeter, { readonly greet: (who: string) => string }>()("test/Greeter") {}

const greet = Tool.make({
  name: "greet",
  description: "Greets",
  parameters: Schema.Struct({ who: Schema.String }),
  execute: ({ who }) => Effect.map(Greeter, (g) => [ContentBlock.text(g.greet(who))])
})

const names = (view: ToolRegistry.View) => Effect.map(view.schemas(), (s) => s.map((t) => t.name))

describe("ToolRegistry (T-1)", () => {
  it.effect("[T-1] names are unique per layer: duplicate → DuplicateToolError (also for the global runtime layer)", () =>
    Effect.gen(function*() {
      const e1 = yield* Effect.flip(ToolRegistry.make([simple("a"), simple("b"), simple("a")]))
      expect(e1).toBeInstanceOf(ToolRegistry.DuplicateToolError)
      expect(e1.code).toBe("DUPLICATE_TOOL")
      expect(e1.name).toBe("a")
      const e2 = yield* Effect.flip(Effect.scoped(Layer.build(ToolRuntime.layer({ tools: [simple("x"), simple("x")] }))))
      expect(e2).toBeInstanceOf(ToolRegistry.DuplicateToolError)
    }))

  it.effect("[T-1] scoped registration: a duplicate fails and the first survives; closing the scope frees the name", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.empty
      const scope = yield* Scope.make()
      yield* ToolRegistry.register(registry, simple("a", "first")).pipe(Scope.provide(scope))
      const dup = yield* Effect.flip(ToolRegistry.register(registry, simple("a", "second")).pipe(Effect.scoped))
      expect(dup.name).toBe("a")
      const view = ToolRegistry.view({ global: registry })
      expect((yield* view.schemas()).map((s) => s.description)).toEqual(["first"])
      yield* Scope.close(scope, Exit.void)
      expect(yield* names(view)).toEqual([])
      yield* ToolRegistry.register(registry, simple("a", "second")).pipe(Effect.scoped)
    }))

  it.effect("[T-1] an agent-scoped tool shadows the same-named global (prompt and execution)", () =>
    Effect.gen(function*() {
      const global = yield* ToolRegistry.make([simple("read", "global read"), simple("ls")])
      const scoped = yield* ToolRegistry.make([simple("read", "scoped read")])
      const view = ToolRegistry.view({ global, scoped })
      expect((yield* view.schemas()).map((s) => `${s.name}: ${s.description}`)).toEqual(["read: scoped read", "ls: ls"])
      const read = yield* view.get("read")
      expect(Option.map(read, (t) => t.description)).toEqual(Option.some("scoped read"))
      const globalOnly = ToolRegistry.view({ global })
      expect(Option.map(yield* globalOnly.get("read"), (t) => t.description)).toEqual(Option.some("global read"))
    }))

  it.effect("[T-1] restrictions: allow/deny over globals, several intersect; scoped tools are not restricted", () =>
    Effect.gen(function*() {
      const global = yield* ToolRegistry.make(["a", "b", "c", "d"].map((n) => simple(n)))
      const scoped = yield* ToolRegistry.make([simple("mine")])
      expect(yield* names(ToolRegistry.view({ global, restrictions: { allow: ["a", "b", "c"], deny: ["b"] } }))).toEqual(["a", "c"])
      expect(yield* names(ToolRegistry.view({ global, restrictions: [{ allow: ["a", "b", "c"] }, { allow: ["b", "c", "d"] }, { deny: ["c"] }] })))
        .toEqual(["b"])
      const restricted = ToolRegistry.view({ global, scoped, restrictions: { allow: [] } })
      expect(yield* names(restricted)).toEqual(["mine"])
      expect(Option.isNone(yield* restricted.get("a"))).toBe(true)
      expect(ToolRegistry.isAllowed([{ deny: ["x"] }], "y")).toBe(true)
    }))

  it.effect("[T-1] a restricted tool is hidden from execution too: same result as an unknown tool", () =>
    Effect.gen(function*() {
      const r = yield* rig
      const view = yield* ToolRuntime.view({ restrictions: { deny: ["b"] } })
      yield* runCalls(r, [call("c1", "a"), call("c2", "b")], view)
      const events = yield* batchEvents(r)
      expect(textOf(events, "c1")).toBe("a ran")
      expect(textOf(events, "c2")).toBe(`Error: unknown tool "b"`)
    }).pipe(Effect.scoped, Effect.provide(ToolRuntime.layer({ tools: [simple("a"), simple("b")] }))))

  it.effect("[T-1] body requirements surface in the Layer / Effect that builds the layer, and are captured there", () =>
    Effect.gen(function*() {
      const layer = ToolRuntime.layer({ tools: [greet, simple("plain")] })
      expectTypeOf(layer).toEqualTypeOf<
        Layer.Layer<ToolRuntime.ToolRuntime, ToolRuntime.ToolConfigError | ToolRegistry.DuplicateToolError, Greeter>
      >()
      const scopedEffect = ToolRegistry.make([greet])
      expectTypeOf(scopedEffect).toEqualTypeOf<Effect.Effect<ToolRegistry.Registry, ToolRegistry.DuplicateToolError, Greeter>>()
      const GreeterLive = Layer.succeed(Greeter, { greet: (who) => `hello ${who}` })
      const events = yield* Effect.gen(function*() {
        const r = yield* rig
        // an agent-scoped layer capturing a different Greeter
        const scoped = yield* ToolRegistry.make([
          Tool.make({
            name: "greet2",
            description: "",
            parameters: Schema.Struct({}),
            execute: () => Effect.map(Greeter, (g) => [ContentBlock.text(g.greet("scoped"))])
          })
        ]).pipe(Effect.provideService(Greeter, { greet: (who) => `hi ${who}` }))
        yield* runCalls(r, [call("c1", "greet", { who: "world" }), call("c2", "greet2")], yield* ToolRuntime.view({ scoped }))
        return yield* batchEvents(r)
      }).pipe(Effect.provide(layer.pipe(Layer.provide(GreeterLive))))
      expect(textOf(events, "c1")).toBe("hello world")
      expect(textOf(events, "c2")).toBe("hi scoped")
    }))
})
