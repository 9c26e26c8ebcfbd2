import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import type { LlmAdapter } from "../../src/Llm/LlmAdapter.js"
import { ProviderError, RegistryError } from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as Retry from "../../src/Llm/Retry.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"

/** An adapter answering "<label>" as one text block and recording the requests it got. */
const recording = (label: string, seen: Array<Message.GenerateOptions> = []) => {
  const adapter: LlmAdapter = {
    providers: [{ id: label, name: label }],
    models: [],
    stream: (options) =>
      Stream.suspend(() => {
        seen.push(options)
        return Stream.fromIterable(Scripted.toChunks(Scripted.text(label)))
      })
  }
  return { adapter, seen }
}

const request = (provider: string, messages: ReadonlyArray<Message.Message> = [Message.user("hi")]): Message.GenerateOptions => ({
  provider,
  model: "m",
  messages
})

const textOf = (chunks: ReadonlyArray<StreamChunk.StreamChunk>) =>
  chunks.flatMap((c) => (c.type === "text-delta" ? [c.text] : [])).join("")

const noRetry = Retry.layer({ maxAttempts: 1 })

describe("Llm registry", () => {
  it.effect("AC-1 [C-9] register [], [\"\"], [\"a\",\"a\"] → INVALID_ADAPTER, INVALID_ADAPTER, DUPLICATE_ADAPTER; nothing listed", () =>
    Effect.gen(function*() {
      const { adapter } = recording("a")
      const codes = []
      for (const routes of [[], [""], ["a", "a"]]) {
        const error = yield* Effect.flip(Llm.register(routes, adapter))
        expect(error).toBeInstanceOf(RegistryError)
        codes.push(error.code)
      }
      expect(codes).toEqual(["INVALID_ADAPTER", "INVALID_ADAPTER", "DUPLICATE_ADAPTER"])
      expect(yield* Llm.listProviders).toEqual([])
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("[C-9] an empty display name is INVALID_ADAPTER; names default to the id; a failed registration registers nothing", () =>
    Effect.gen(function*() {
      const { adapter } = recording("a")
      const empty = yield* Effect.flip(Llm.register([{ id: "a", name: "" }], adapter))
      expect(empty.code).toBe("INVALID_ADAPTER")
      // atomic: "b" is free, "a" is repeated → nothing of the list is registered
      const dup = yield* Effect.flip(Llm.register(["b", { id: "c" }, "b"], adapter))
      expect(dup.code).toBe("DUPLICATE_ADAPTER")
      expect(yield* Llm.listProviders).toEqual([])
      yield* Llm.register(["b", { id: "c", name: "Cee" }], adapter)
      yield* Llm.register([{ id: "a", name: "Ay" }], recording("x").adapter)
      const listed = yield* Llm.listProviders
      expect(listed).toEqual([{ id: "b", name: "b" }, { id: "c", name: "Cee" }, { id: "a", name: "Ay" }])
      // detached: mutating the result changes nothing
      ;(listed as Array<{ id: string; name: string }>).pop()
      ;(listed[0] as { name: string }).name = "changed"
      expect(yield* Llm.listProviders).toEqual([{ id: "b", name: "b" }, { id: "c", name: "Cee" }, { id: "a", name: "Ay" }])
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("AC-2 [C-9] register m1 twice → DUPLICATE_ADAPTER, first survives; dispose then re-register succeeds", () =>
    Effect.gen(function*() {
      const first = recording("first")
      const second = recording("second")
      const scope = yield* Scope.make()
      yield* Llm.register(["m1"], first.adapter).pipe(Scope.provide(scope))
      const error = yield* Effect.flip(Llm.register(["m1"], second.adapter))
      expect(error.code).toBe("DUPLICATE_ADAPTER")
      const out = yield* Stream.runCollect(Llm.stream(request("m1")))
      expect(textOf(out)).toBe("first")
      expect(first.seen).toHaveLength(1)
      expect(second.seen).toHaveLength(0)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Llm.listProviders).toEqual([])
      yield* Llm.register(["m1"], second.adapter)
      expect(textOf(yield* Stream.runCollect(Llm.stream(request("m1"))))).toBe("second")
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("[C-9] the advisory catalog is validated (INVALID_CATALOG) and listed, never used to reject a request", () =>
    Effect.gen(function*() {
      const base = recording("p").adapter
      const withModels = (models: LlmAdapter["models"]): LlmAdapter => ({ ...base, models })
      const cases: ReadonlyArray<LlmAdapter["models"]> = [
        [{ provider: "other", id: "m", name: "M" }],
        [{ provider: "p", id: "", name: "M" }],
        [{ provider: "p", id: "m", name: "" }],
        [{ provider: "p", id: "m", name: "M" }, { provider: "p", id: "m", name: "M again" }]
      ]
      for (const models of cases) {
        const error = yield* Effect.flip(Llm.register(["p"], withModels(models)))
        expect(error.code).toBe("INVALID_CATALOG")
      }
      expect(yield* Llm.listProviders).toEqual([])
      yield* Llm.register(["p", "q"], withModels([
        { provider: "p", id: "m", name: "M" },
        { provider: "q", id: "m", name: "M on q" }
      ]))
      yield* Llm.register(["r"], recording("r").adapter)
      expect(yield* Llm.listModels()).toEqual([
        { provider: "p", id: "m", name: "M" },
        { provider: "q", id: "m", name: "M on q" }
      ])
      expect(yield* Llm.listModels("q")).toEqual([{ provider: "q", id: "m", name: "M on q" }])
      expect(yield* Llm.listModels("r")).toEqual([])
      // a model outside the catalog is still routed
      const out = yield* Stream.runCollect(Llm.stream({ ...request("p"), model: "not-in-catalog" }))
      expect(textOf(out)).toBe("p")
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("[C-9] layerWith registers several adapter layers in argument order; registerLayer frees its routes with the layer", () =>
    Effect.gen(function*() {
      const llm = Llm.layerWith(
        Scripted.layer([Scripted.text("one")], { provider: "one" }),
        Scripted.layer([Scripted.text("two")], { provider: "two", name: "Two" })
      )
      const providers = yield* Llm.listProviders.pipe(Effect.provide(llm))
      expect(providers).toEqual([{ id: "one", name: "Scripted" }, { id: "two", name: "Two" }])
      const both = Llm.registerLayer(["x"], recording("x").adapter).pipe(Layer.provideMerge(Llm.layer))
      expect(yield* Llm.listProviders.pipe(Effect.provide(both))).toEqual([{ id: "x", name: "x" }])
    }))
})

describe("Llm.stream routing", () => {
  it.effect("AC-3 [C-10,C-11] unknown provider → NO_ADAPTER, a model-request failure; middleware rerouting initial→routed calls routed", () =>
    Effect.gen(function*() {
      const initial = recording("initial")
      const routed = recording("routed")
      const unknown = yield* Effect.flip(Stream.runDrain(Llm.stream(request("nowhere"))))
      expect(unknown).toBeInstanceOf(RegistryError)
      expect(unknown.code).toBe("NO_ADAPTER")
      expect(Llm.isModelRequestFailure(unknown)).toBe(true)

      yield* Llm.register(["initial"], initial.adapter)
      yield* Llm.register(["routed"], routed.adapter)
      // the route is looked up lazily, after middleware: even registering "late" works
      yield* Llm.addMiddleware((options, next) => next({ ...options, provider: "routed" }))
      const out = yield* Stream.runCollect(Llm.stream(request("initial")))
      expect(textOf(out)).toBe("routed")
      expect(initial.seen).toHaveLength(0)
      expect(routed.seen.map((o) => o.provider)).toEqual(["routed"])

      // NO_ADAPTER behind middleware is still a model-request failure
      const scope = yield* Scope.make()
      yield* Llm.addMiddleware((options, next) => next({ ...options, provider: "gone" })).pipe(Scope.provide(scope))
      const gone = yield* Effect.flip(Stream.runDrain(Llm.stream(request("initial"))))
      expect(gone.code).toBe("NO_ADAPTER")
      expect(Llm.isModelRequestFailure(gone)).toBe(true)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("[C-10] a mutable one-shot request mutated by middleware is routed by its new provider", () =>
    Effect.gen(function*() {
      const routed = recording("routed")
      yield* Llm.register(["routed"], routed.adapter)
      yield* Llm.addMiddleware((options, next) => {
        ;(options as { provider: string }).provider = "routed"
        return next()
      })
      expect(textOf(yield* Stream.runCollect(Llm.stream(request("initial"))))).toBe("routed")
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("[C-10] middleware runs in registration order, can observe and short-circuit; scope close unregisters it", () =>
    Effect.gen(function*() {
      const target = recording("target")
      yield* Llm.register(["target"], target.adapter)
      const order: Array<string> = []
      yield* Llm.addMiddleware((_, next) => {
        order.push("outer")
        return next().pipe(Stream.map((c) => c.type === "text-delta" ? { ...c, text: c.text.toUpperCase() } : c))
      })
      const scope = yield* Scope.make()
      yield* Llm.addMiddleware((options) => {
        order.push("inner")
        return Stream.fromIterable(Scripted.toChunks(Scripted.text(`cached for ${options.model}`)))
      }).pipe(Scope.provide(scope))
      expect(textOf(yield* Stream.runCollect(Llm.stream(request("target"))))).toBe("CACHED FOR M")
      expect(order).toEqual(["outer", "inner"])
      expect(target.seen).toHaveLength(0)
      yield* Scope.close(scope, Exit.void)
      expect(textOf(yield* Stream.runCollect(Llm.stream(request("target"))))).toBe("TARGET")
      expect(target.seen).toHaveLength(1)
    }).pipe(Effect.provide(Llm.layer)))

  it.effect("[C-10] session-scoped middleware only sees requests of its session", () =>
    Effect.gen(function*() {
      yield* Llm.register(["p"], recording("p").adapter)
      const seen: Array<string | undefined> = []
      yield* Llm.addMiddleware((options, next) => {
        seen.push(options.sessionId)
        return next()
      }, { sessionId: "s1" })
      yield* Stream.runDrain(Llm.stream({ ...request("p"), sessionId: Message.sessionId("s1") }))
      yield* Stream.runDrain(Llm.stream({ ...request("p"), sessionId: Message.sessionId("s2") }))
      yield* Stream.runDrain(Llm.stream(request("p")))
      expect(seen).toEqual(["s1"])
    }).pipe(Effect.provide(Llm.layer)))
})

describe("Llm.stream failure provenance (C-11, L-21)", () => {
  const failing = (make: () => Stream.Stream<StreamChunk.StreamChunk, ProviderError>): LlmAdapter => ({
    providers: [{ id: "p", name: "p" }],
    models: [],
    stream: () => make()
  })

  it.effect("[C-11] an adapter's typed failure reaches the consumer as the very same error object", () =>
    Effect.gen(function*() {
      const original = new ProviderError({ code: "AUTH", message: "bad key", status: 401 })
      yield* Llm.register(["p"], failing(() => Stream.fail(original)))
      const direct = yield* Effect.flip(Stream.runDrain(Llm.stream(request("p"))))
      expect(direct).toBe(original)
      // ...also through middleware that passes it on
      yield* Llm.addMiddleware((_, next) => next())
      const through = yield* Effect.flip(Stream.runDrain(Llm.stream(request("p"))))
      expect(through).toBe(original)
      expect(Llm.isModelRequestFailure(through)).toBe(true)
    }).pipe(Effect.provide(Llm.layer), Effect.provide(noRetry)))

  it.effect("[C-11] an adapter that throws (dispatch or iteration) → ProviderError: UNKNOWN for non-Errors, the error's own code otherwise", () =>
    Effect.gen(function*() {
      const thrownString: LlmAdapter = {
        providers: [],
        models: [],
        stream: () => {
          throw "plain string"
        }
      }
      const coded = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })
      const thrownInIteration: LlmAdapter = {
        providers: [],
        models: [],
        stream: () =>
          Stream.make(1).pipe(Stream.map((): StreamChunk.StreamChunk => {
            throw coded
          }))
      }
      const getter = Object.defineProperty({ provider: "", model: "m", messages: [] }, "provider", {
        get: () => {
          throw new TypeError("hostile getter")
        }
      }) as Message.GenerateOptions
      yield* Llm.register(["s"], thrownString)
      yield* Llm.register(["i"], thrownInIteration)
      const a = yield* Effect.flip(Stream.runDrain(Llm.stream(request("s"))))
      expect(a).toBeInstanceOf(ProviderError)
      expect(a).toMatchObject({ code: "UNKNOWN", message: "plain string", cause: "plain string" })
      const b = yield* Effect.flip(Stream.runDrain(Llm.stream(request("i"))))
      expect(b).toMatchObject({ _tag: "ProviderError", code: "ECONNRESET", message: "socket hang up" })
      expect((b as ProviderError).cause).toBe(coded)
      const c = yield* Effect.flip(Stream.runDrain(Llm.stream(getter)))
      expect(c).toMatchObject({ _tag: "ProviderError", code: "UNKNOWN", message: "hostile getter" })
      expect(Llm.isModelRequestFailure(c)).toBe(true)
    }).pipe(Effect.provide(Llm.layer), Effect.provide(noRetry)))

  it.effect("AC-68 [L-21] failures raised by middleware, by a nested model call, or by mutating a frozen request are MiddlewareErrors", () =>
    Effect.gen(function*() {
      const nestedError = new ProviderError({ code: "CONTEXT_WINDOW_EXCEEDED", message: "too long" })
      yield* Llm.register(["p"], recording("p").adapter)
      yield* Llm.register(["nested"], failing(() => Stream.fail(nestedError)))
      const llm = yield* Llm.Llm
      const run = (middleware: Llm.StreamMiddleware, options = request("p")) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          yield* llm.addMiddleware(middleware).pipe(Scope.provide(scope))
          const error = yield* Effect.flip(Stream.runDrain(llm.stream(options)))
          yield* Scope.close(scope, Exit.void)
          return error
        })
      const own = yield* run(() => Stream.fail(new ProviderError({ code: "RATE_LIMIT", message: "from middleware" })))
      expect(own).toBeInstanceOf(Llm.MiddlewareError)
      expect(own).toMatchObject({ message: "from middleware", code: "RATE_LIMIT" })
      expect(Llm.isModelRequestFailure(own)).toBe(false)

      // the nested call passes through the middleware chain again: only the outer call nests
      const nested = yield* run((options, next) =>
        options.provider === "nested"
          ? next()
          : Stream.unwrap(Effect.as(Stream.runDrain(llm.stream({ ...options, provider: "nested" })), next()))
      )
      expect(nested).toBeInstanceOf(Llm.MiddlewareError)
      expect(nested.code).toBe("CONTEXT_WINDOW_EXCEEDED")
      expect((nested as Llm.MiddlewareError).cause).toBe(nestedError)

      const frozen = Object.freeze({ ...request("p"), messages: Object.freeze([Message.user("hi")]) })
      const mutation = yield* run((options, next) => {
        ;(options.messages as Array<Message.Message>).push(Message.user("sneaky"))
        return next()
      }, frozen)
      expect(mutation).toBeInstanceOf(Llm.MiddlewareError)
      expect(mutation.message).toMatch(/not extensible|read.only|frozen/i)

      const afterChunks = yield* run((_, next) =>
        Stream.concat(next(), Stream.fail("observer blew up"))
      )
      expect(afterChunks).toMatchObject({ _tag: "MiddlewareError", message: "observer blew up" })
    }).pipe(Effect.provide(Llm.layer), Effect.provide(noRetry)))
})

describe("Llm.stream replay state (C-7)", () => {
  const history = (provider: string): ReadonlyArray<Message.Message> => [
    Message.user("q"),
    Message.assistant([ContentBlock.text("a")], { provider, model: "old", replayState: { sig: "xyz", n: [1, 2] } }),
    Message.assistant([ContentBlock.text("b")], { provider: "elsewhere", model: "m2" }),
    Message.user("again")
  ]

  it.effect("AC-4 [C-7] same instance → replay state forwarded; different instances → {provider, model} only; frozen input stays frozen and untouched", () =>
    Effect.gen(function*() {
      const shared = recording("shared")
      const other = recording("other")
      yield* Llm.register(["a1"], shared.adapter)
      yield* Llm.register(["a2"], shared.adapter)
      yield* Llm.register(["b"], other.adapter)

      // same adapter instance under two routes: forwarded, identical object
      const same = request("a2", history("a1"))
      yield* Stream.runDrain(Llm.stream(same))
      expect(shared.seen[0]).toBe(same)
      expect(shared.seen[0]?.messages[1]?.provenance?.replayState).toEqual({ sig: "xyz", n: [1, 2] })

      // different instance: stripped, other messages shared, input untouched
      const input = request("b", history("a1"))
      const before = JSON.stringify(input)
      yield* Stream.runDrain(Llm.stream(input))
      const sent = other.seen[0] as Message.GenerateOptions
      expect(sent).not.toBe(input)
      expect(sent.messages[1]?.provenance).toEqual({ provider: "a1", model: "old" })
      expect("replayState" in (sent.messages[1]?.provenance ?? {})).toBe(false)
      expect(sent.messages[0]).toBe(input.messages[0])
      expect(sent.messages[2]).toBe(input.messages[2])
      expect(JSON.stringify(input)).toBe(before)
      expect(Object.isFrozen(sent)).toBe(false)

      // an unregistered historical route is never the same instance
      yield* Stream.runDrain(Llm.stream(request("a1", history("unregistered"))))
      expect(shared.seen[1]?.messages[1]?.provenance).toEqual({ provider: "unregistered", model: "old" })

      // frozen input → new frozen request, input stays frozen and untouched
      const deepFreeze = <A>(value: A): A => {
        if (typeof value === "object" && value !== null) {
          for (const v of Object.values(value)) deepFreeze(v)
          Object.freeze(value)
        }
        return value
      }
      const frozen = deepFreeze(request("b", history("a1")))
      const frozenBefore = JSON.stringify(frozen)
      yield* Stream.runDrain(Llm.stream(frozen))
      const frozenSent = other.seen[1] as Message.GenerateOptions
      expect(frozenSent).not.toBe(frozen)
      expect(Object.isFrozen(frozenSent)).toBe(true)
      expect(Object.isFrozen(frozenSent.messages)).toBe(true)
      expect(Object.isFrozen(frozenSent.messages[1])).toBe(true)
      expect(Object.isFrozen(frozenSent.messages[1]?.provenance)).toBe(true)
      expect(frozenSent.messages[1]?.provenance).toEqual({ provider: "a1", model: "old" })
      expect(JSON.stringify(frozen)).toBe(frozenBefore)
      expect(Object.isFrozen(frozen)).toBe(true)
    }).pipe(Effect.provide(Llm.layer)))

  it("[C-7] forwardReplayState returns the input itself when nothing is stripped", () => {
    const input = request("x", history("a1"))
    expect(Llm.forwardReplayState(input, () => true)).toBe(input)
    const noState = request("x", [Message.assistant("plain", { provider: "a1", model: "m" })])
    expect(Llm.forwardReplayState(noState, () => false)).toBe(noState)
  })
})

describe("Llm.stream with the scripted adapter and retries (DEC-3)", () => {
  it.effect("[E-6] a RATE_LIMIT before the first chunk is retried after Retry-After; the assembled answer is the retry's", () =>
    Effect.gen(function*() {
      const recorder = yield* Scripted.Recorder
      const fiber = yield* Effect.forkChild(Stream.run(Llm.stream(request("scripted")), BlockAssembler.sink))
      yield* TestClock.adjust("1999 millis")
      expect(yield* recorder.requests).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(fiber)
      expect(yield* recorder.requests).toHaveLength(2)
      expect(result.blocks).toEqual([ContentBlock.text("ok")])
    }).pipe(
      Effect.provide(Layer.provideMerge(
        Scripted.layerLlm([
          [Scripted.fail("RATE_LIMIT", "slow down", { status: 429, retryAfterMillis: 2_000 })],
          Scripted.text("ok")
        ]),
        Llm.layer
      ))
    ))
})
