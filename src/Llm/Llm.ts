/**
 * The LLM routing service (C-7, C-9..C-11): adapters register under provider routes, requests go
 * through an ordered stream-middleware point, then to the adapter that owns the request's route,
 * under the retry policy of {@link Retry} (DEC-3).
 *
 * ```ts
 * import * as Llm from "effect-harness/Llm/Llm"
 * import * as Scripted from "effect-harness/Adapter/Scripted"
 *
 * // an Llm with one adapter registered for the lifetime of the layer
 * const LlmLive = Llm.layerWith(Scripted.layer([Scripted.text("hello")]))
 * // or: Llm.registerLayer(["deepseek"], adapter).pipe(Layer.provideMerge(Llm.layer))
 *
 * const program = Llm.stream({ provider: "scripted", model: "demo", messages: [Message.user("hi")] }).pipe(
 *   Stream.run(BlockAssembler.sink)
 * )
 * program.pipe(Effect.provide(LlmLive))
 * ```
 *
 * Rules implemented here:
 * - **C-9** `register(routes, adapter)` is atomic and scoped: an empty route list, an empty route id
 *   or an empty display name fails `INVALID_ADAPTER`; a route already owned or repeated in the list
 *   fails `DUPLICATE_ADAPTER`; nothing is registered on failure. Closing the scope frees every route
 *   of that registration. The display name defaults to the id. One route has exactly one owner.
 *   The adapter's advisory catalog (`models`) is validated at registration: every entry's provider
 *   is one of the routes, id and name are non-empty, and ids are unique per provider, else
 *   `INVALID_CATALOG`. The catalog never rejects a request.
 * - **C-10** middleware runs first, in registration order; the adapter is looked up lazily at the
 *   end of the chain with the request the chain passed on (a middleware may reroute it). An
 *   unknown route fails the stream with `RegistryError` `NO_ADAPTER`.
 * - **C-7** an assistant message's `provenance.replayState` is forwarded only when its historical
 *   route and the target route are owned by the same registered adapter object; otherwise it is
 *   stripped and `{provider, model}` kept. The input is never mutated: changed messages, the
 *   message array and the request are new objects, frozen when the original was frozen.
 * - **C-11** failures at the adapter boundary (lookup, dispatch, stream creation, iteration) are
 *   *model-request failures* and keep their error value (`ProviderError` or `RegistryError`).
 *   A defect there (an adapter that throws) becomes a `ProviderError`: code `UNKNOWN` (or the
 *   thrown error's own string `code`), the thrown value as `cause`. Failures raised by middleware,
 *   including failures of nested model calls it makes, surface as {@link MiddlewareError}: only
 *   `ProviderError` / `RegistryError` values that came out of *this* request's adapter boundary
 *   reach the consumer as such, so `isModelRequestFailure` tells the loop what request recovery
 *   (L-20, L-21) may act on.
 *
 * Decisions where the spec is silent (DEC-10):
 * - Retries happen *inside* the adapter boundary, below middleware: middleware sees one logical
 *   request and only its final outcome.
 * - Middleware may be limited to one session (`{sessionId}`), matched against the request's
 *   `sessionId`; global middleware runs before session-scoped middleware, each group in
 *   registration order (as the loop's interception points do).
 * - A middleware defect (e.g. a `TypeError` from mutating a frozen request, AC-87) is a middleware
 *   failure, not a crash: it surfaces as {@link MiddlewareError} with the defect as `cause`.
 * - `register` accepts route ids as plain strings or `{id, name?}`.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Adapter, type LlmAdapter, type ModelInfo, type ProviderInfo } from "./LlmAdapter.js"
import { type LlmError, messageOf, ProviderError, RegistryError, toCode } from "./LlmError.js"
import type * as Message from "./Message.js"
import * as Retry from "./Retry.js"
import type { StreamChunk } from "./StreamChunk.js"
import { codeOf } from "./internal/Unknown.js"

// ---------------------------------------------------------------------------------------------
// Models

/**
 * A route to register: a provider id, optionally with a display name (default = id).
 *
 * @since 0.1.0
 * @category models
 */
export type RouteInput = string | { readonly id: string; readonly name?: string }

/**
 * A failure raised by stream middleware (or by a nested model call made by middleware). Never a
 * model-request failure (C-11, L-21). `code` is the original error's string `code` when it had one.
 * Its `_tag` is its class name, `MiddlewareError` (E-1; it was `LlmMiddlewareError` before).
 *
 * @since 0.1.0
 * @category errors
 */
export class MiddlewareError extends Schema.TaggedError<MiddlewareError>()("MiddlewareError", {
  message: Schema.String,
  code: Schema.optionalKey(Schema.String),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * What `Llm.stream` may fail with: a model-request failure ({@link LlmError}) or a middleware failure.
 *
 * @since 0.1.0
 * @category errors
 */
export type StreamError = LlmError | MiddlewareError

/**
 * `true` for a model-request failure (C-11): the only failures request recovery (L-20) may act on.
 *
 * @since 0.1.0
 * @category guards
 */
export const isModelRequestFailure = (error: StreamError): error is LlmError =>
  error._tag === "ProviderError" || error._tag === "RegistryError"

/**
 * Continues the middleware chain; without an argument with the current request, else with a
 * replacement (e.g. a rerouted copy).
 *
 * @since 0.1.0
 * @category models
 */
export type Next = (options?: Message.GenerateOptions) => Stream.Stream<StreamChunk, StreamError>

/**
 * Stream middleware: wraps, observes, reroutes (`next(newOptions)`) or short-circuits (returns
 * its own stream) a model request. Any failure it raises becomes a {@link MiddlewareError}.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamMiddleware = (options: Message.GenerateOptions, next: Next) => Stream.Stream<StreamChunk, unknown>

/**
 * Options of a middleware registration.
 *
 * @since 0.1.0
 * @category models
 */
export interface MiddlewareOptions {
  /** only runs for requests carrying this `sessionId` */
  readonly sessionId?: string
}

/**
 * The `Llm` service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Llm extends Context.Service<Llm, Llm.Service>()("effect-harness/Llm/Llm") {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Llm {
  /**
   * The service interface.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Registers `adapter` under `routes` until the scope closes (C-9). Atomic. */
    readonly register: (
      routes: ReadonlyArray<RouteInput>,
      adapter: LlmAdapter
    ) => Effect.Effect<void, RegistryError, Scope.Scope>
    /** Detached `{id, name}` of every registered route, in registration order. */
    readonly listProviders: Effect.Effect<ReadonlyArray<ProviderInfo>>
    /** The advisory model catalog, optionally of one provider (detached copies). */
    readonly listModels: (provider?: string) => Effect.Effect<ReadonlyArray<ModelInfo>>
    /** Adds stream middleware until the scope closes (runs in registration order). */
    readonly addMiddleware: (
      middleware: StreamMiddleware,
      options?: MiddlewareOptions
    ) => Effect.Effect<void, never, Scope.Scope>
    /** Streams one model response through middleware, routing, replay-state rule and retries. */
    readonly stream: (options: Message.GenerateOptions) => Stream.Stream<StreamChunk, StreamError>
  }
}

// ---------------------------------------------------------------------------------------------
// Pure helpers

/**
 * Applies the replay-state rule (C-7): keeps `provenance.replayState` of an assistant message only
 * when `keep(provenance.provider)` is true; otherwise replaces the message with a copy whose
 * provenance is `{provider, model}`. Returns the input itself when nothing changes; changed
 * objects are new, and frozen when the object they replace was frozen.
 *
 * @since 0.1.0
 * @category utils
 */
export const forwardReplayState = (
  options: Message.GenerateOptions,
  keep: (provider: string) => boolean
): Message.GenerateOptions => {
  let messages: Array<Message.Message> | undefined
  const source = options.messages
  for (let i = 0; i < source.length; i++) {
    const message = source[i] as Message.Message
    const provenance = message.provenance
    if (
      message.role !== "assistant" || provenance === undefined || !("replayState" in provenance) ||
      keep(provenance.provider)
    ) {
      if (messages !== undefined) messages.push(message)
      continue
    }
    if (messages === undefined) messages = source.slice(0, i)
    const stripped = freezeLike(provenance, { provider: provenance.provider, model: provenance.model })
    messages.push(freezeLike(message, { ...message, provenance: stripped }))
  }
  if (messages === undefined) return options
  return freezeLike(options, { ...options, messages: freezeLike(source, messages) })
}

const freezeLike = <A extends object>(original: object, copy: A): A =>
  Object.isFrozen(original) ? Object.freeze(copy) : copy



/**
 * Converts a value thrown at the adapter boundary into a model-request failure (C-11): typed LLM
 * errors are kept as they are; anything else becomes a `ProviderError` with code `UNKNOWN` (or the
 * thrown error's own string `code`) and the value as `cause`.
 *
 * @since 0.1.0
 * @category utils
 */
export const fromThrown = (value: unknown, provider?: string): LlmError => {
  if (value instanceof ProviderError || value instanceof RegistryError) return value
  return new ProviderError({
    code: toCode((value instanceof Error ? codeOf(value) : undefined) ?? "UNKNOWN"),
    message: messageOf(value),
    ...(provider === undefined ? {} : { provider }),
    cause: value
  })
}

const toMiddlewareError = (value: unknown): MiddlewareError => {
  if (value instanceof MiddlewareError) return value
  const code = codeOf(value)
  return new MiddlewareError({
    message: messageOf(value),
    ...(code === undefined ? {} : { code }),
    cause: value
  })
}

// ---------------------------------------------------------------------------------------------
// Service

interface Registration {
  readonly token: number
  readonly routes: ReadonlyArray<ProviderInfo>
  readonly adapter: LlmAdapter
}

interface MiddlewareEntry {
  readonly token: number
  readonly middleware: StreamMiddleware
  readonly sessionId: string | undefined
}

interface State {
  readonly next: number
  readonly registrations: ReadonlyArray<Registration>
  readonly middleware: ReadonlyArray<MiddlewareEntry>
}

const owner = (state: State, provider: string): Registration | undefined => {
  for (const registration of state.registrations) {
    for (const route of registration.routes) if (route.id === provider) return registration
  }
  return undefined
}

const invalid = (code: RegistryError["code"], message: string) => new RegistryError({ code, message })

const validateRoutes = (
  routes: ReadonlyArray<RouteInput>,
  adapter: LlmAdapter
): { readonly _tag: "Left"; readonly error: RegistryError } | { readonly _tag: "Right"; readonly routes: ReadonlyArray<ProviderInfo> } => {
  const fail = (error: RegistryError) => ({ _tag: "Left" as const, error })
  if (!Array.isArray(routes) || routes.length === 0) {
    return fail(invalid("INVALID_ADAPTER", "an adapter must be registered under at least one route"))
  }
  const out: Array<ProviderInfo> = []
  const seen = new Set<string>()
  for (const route of routes as ReadonlyArray<RouteInput>) {
    const id = typeof route === "string" ? route : route.id
    const name = typeof route === "string" ? undefined : route.name
    if (typeof id !== "string" || id === "") return fail(invalid("INVALID_ADAPTER", "a route id must be a non-empty string"))
    if (name !== undefined && (typeof name !== "string" || name === "")) {
      return fail(invalid("INVALID_ADAPTER", `route "${id}": the display name must be a non-empty string`))
    }
    if (seen.has(id)) return fail(invalid("DUPLICATE_ADAPTER", `route "${id}" is repeated in the registration`))
    seen.add(id)
    out.push({ id, name: name ?? id })
  }
  const catalog: ReadonlyArray<ModelInfo> = adapter.models ?? []
  const models = new Set<string>()
  for (const model of catalog) {
    if (!seen.has(model.provider)) {
      return fail(invalid("INVALID_CATALOG", `model "${model.id}" names provider "${model.provider}", which is not one of the routes`))
    }
    if (typeof model.id !== "string" || model.id === "" || typeof model.name !== "string" || model.name === "") {
      return fail(invalid("INVALID_CATALOG", `a model of provider "${model.provider}" has an empty id or name`))
    }
    const key = `${model.provider}\u0000${model.id}`
    if (models.has(key)) return fail(invalid("INVALID_CATALOG", `model "${model.id}" of provider "${model.provider}" is listed twice`))
    models.add(key)
  }
  return { _tag: "Right", routes: out }
}

const classify = (marked: WeakSet<object>) => (cause: Cause.Cause<unknown>): Stream.Stream<never, StreamError> => {
  if (Cause.hasInterruptsOnly(cause)) return Stream.failCause(cause as Cause.Cause<never>)
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (typeof error === "object" && error !== null && marked.has(error)) return Stream.fail(error as LlmError)
    return Stream.fail(toMiddlewareError(error))
  }
  return Stream.fail(toMiddlewareError(Cause.squash(cause)))
}

/**
 * Builds an `Llm` service with an empty registry and no middleware.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Llm.Service> = Effect.map(
  Ref.make<State>({ next: 0, registrations: [], middleware: [] }),
  (state) => {
    const boundary = (adapter: LlmAdapter, request: Message.GenerateOptions, provider: string) =>
      Stream.suspend(() => adapter.stream(request)).pipe(
        Stream.catchCause((cause): Stream.Stream<never, LlmError> => {
          if (Cause.hasInterruptsOnly(cause)) return Stream.failCause(cause as Cause.Cause<never>)
          const failure = Cause.findErrorOption(cause)
          return Stream.fail(Option.isSome(failure) ? failure.value : fromThrown(Cause.squash(cause), provider))
        })
      )

    const terminal = (options: Message.GenerateOptions): Stream.Stream<StreamChunk, LlmError> =>
      Stream.unwrap(Effect.flatMap(Ref.get(state), (current) =>
        Effect.try({
          try: (): Stream.Stream<StreamChunk, LlmError> => {
            const provider = options.provider
            const target = owner(current, provider)
            if (target === undefined) {
              return Stream.fail(invalid("NO_ADAPTER", `no adapter is registered for provider "${provider}"`))
            }
            const request = forwardReplayState(options, (p) => owner(current, p)?.adapter === target.adapter)
            return Retry.retrying(() => boundary(target.adapter, request, provider), { provider })
          },
          catch: (thrown) => fromThrown(thrown)
        })))

    const stream = (options: Message.GenerateOptions): Stream.Stream<StreamChunk, StreamError> =>
      Stream.unwrap(Effect.map(Ref.get(state), (current) => {
        const sessionId = options.sessionId
        const chain = [
          ...current.middleware.filter((m) => m.sessionId === undefined),
          ...current.middleware.filter((m) => m.sessionId !== undefined && m.sessionId === sessionId)
        ].map((m) => m.middleware)
        if (chain.length === 0) return terminal(options)
        // errors that left THIS request's adapter boundary; everything else is a middleware failure
        const marked = new WeakSet<object>()
        const markedTerminal = (request: Message.GenerateOptions) =>
          terminal(request).pipe(Stream.tapError((error) => Effect.sync(() => marked.add(error))))
        const at = (i: number, request: Message.GenerateOptions): Stream.Stream<StreamChunk, StreamError> => {
          const middleware = chain[i]
          if (middleware === undefined) return markedTerminal(request)
          return Stream.suspend(() => middleware(request, (next) => at(i + 1, next ?? request))).pipe(
            Stream.catchCause(classify(marked))
          )
        }
        return at(0, options)
      }))

    return Llm.of({
      register: (routes, adapter) =>
        Effect.acquireRelease(
          Effect.flatMap(
            Ref.modify(state, (s): [Either<number>, State] => {
              const validated = validateRoutes(routes, adapter)
              if (validated._tag === "Left") return [validated, s]
              for (const route of validated.routes) {
                if (owner(s, route.id) !== undefined) {
                  return [{ _tag: "Left", error: invalid("DUPLICATE_ADAPTER", `route "${route.id}" is already registered`) }, s]
                }
              }
              const registration: Registration = { token: s.next, routes: validated.routes, adapter }
              return [
                { _tag: "Right", value: s.next },
                { ...s, next: s.next + 1, registrations: [...s.registrations, registration] }
              ]
            }),
            (result) => result._tag === "Left" ? Effect.fail(result.error) : Effect.succeed(result.value)
          ),
          (token) => Ref.update(state, (s) => ({ ...s, registrations: s.registrations.filter((r) => r.token !== token) }))
        ).pipe(Effect.asVoid),
      listProviders: Effect.map(Ref.get(state), (s) =>
        s.registrations.flatMap((r) => r.routes.map((route) => ({ id: route.id, name: route.name })))),
      listModels: (provider) =>
        Effect.map(Ref.get(state), (s) =>
          s.registrations.flatMap((r) =>
            (r.adapter.models ?? [])
              .filter((m) => provider === undefined || m.provider === provider)
              .map((m) => ({ provider: m.provider, id: m.id, name: m.name }))
          )),
      addMiddleware: (middleware, options) =>
        Effect.acquireRelease(
          Ref.modify(state, (s) => [
            s.next,
            {
              ...s,
              next: s.next + 1,
              middleware: [...s.middleware, { token: s.next, middleware, sessionId: options?.sessionId }]
            }
          ]),
          (token) => Ref.update(state, (s) => ({ ...s, middleware: s.middleware.filter((m) => m.token !== token) }))
        ).pipe(Effect.asVoid),
      stream
    })
  }
)

type Either<A> = { readonly _tag: "Left"; readonly error: RegistryError } | { readonly _tag: "Right"; readonly value: A }

// ---------------------------------------------------------------------------------------------
// Layers and accessors

/**
 * An `Llm` with an empty registry. Fresh: Effect 4 reuses a layer already built by an enclosing
 * `provide`, and a registry must not be shared by a nested provide (each use builds its own).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Llm> = Layer.fresh(Layer.effect(Llm, make))

/**
 * Registers `adapter` under `routes` for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const registerLayer = (
  routes: ReadonlyArray<RouteInput>,
  adapter: LlmAdapter
): Layer.Layer<never, RegistryError, Llm> => Layer.effectDiscard(register(routes, adapter))

/**
 * Registers the {@link Adapter} found in the context under its own `providers` for the lifetime
 * of the layer: `Llm.registerAdapter.pipe(Layer.provide(SomeAdapter.layer(...)))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const registerAdapter: Layer.Layer<never, RegistryError, Llm | Adapter> = Layer.fresh(
  // fresh: every use registers its own adapter (layers are otherwise memoized by reference)
  Layer.effectDiscard(Effect.flatMap(Adapter, (adapter) => register(adapter.providers, adapter)))
)

/**
 * An `Llm` with the given adapter layers registered, each under its own `providers`, in argument
 * order. Every adapter layer is built on its own, so several adapters (each providing
 * {@link Adapter}) coexist.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = <E = never, R = never>(
  ...adapters: ReadonlyArray<Layer.Layer<Adapter, E, R>>
): Layer.Layer<Llm, RegistryError | E, R> =>
  Layer.provideMerge(
    adapters.reduce<Layer.Layer<never, RegistryError | E, Llm | R>>(
      // sequential, so routes are listed in argument order
      (acc, adapter) => Layer.provideMerge(Layer.provide(registerAdapter, adapter), acc),
      Layer.empty
    ),
    layer
  )

/**
 * Adds stream middleware for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const middlewareLayer = (
  middleware: StreamMiddleware,
  options?: MiddlewareOptions
): Layer.Layer<never, never, Llm> => Layer.effectDiscard(addMiddleware(middleware, options))

/**
 * Registers an adapter under routes until the scope closes (see {@link Llm.Service.register}).
 *
 * @since 0.1.0
 * @category accessors
 */
export const register = (
  routes: ReadonlyArray<RouteInput>,
  adapter: LlmAdapter
): Effect.Effect<void, RegistryError, Llm | Scope.Scope> => Effect.flatMap(Llm, (llm) => llm.register(routes, adapter))

/**
 * Adds stream middleware until the scope closes.
 *
 * @since 0.1.0
 * @category accessors
 */
export const addMiddleware = (
  middleware: StreamMiddleware,
  options?: MiddlewareOptions
): Effect.Effect<void, never, Llm | Scope.Scope> => Effect.flatMap(Llm, (llm) => llm.addMiddleware(middleware, options))

/**
 * The registered routes, in registration order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const listProviders: Effect.Effect<ReadonlyArray<ProviderInfo>, never, Llm> = Effect.flatMap(
  Llm,
  (llm) => llm.listProviders
)

/**
 * The advisory model catalog.
 *
 * @since 0.1.0
 * @category accessors
 */
export const listModels = (provider?: string): Effect.Effect<ReadonlyArray<ModelInfo>, never, Llm> =>
  Effect.flatMap(Llm, (llm) => llm.listModels(provider))

/**
 * Streams one model response (see {@link Llm.Service.stream}).
 *
 * @since 0.1.0
 * @category accessors
 */
export const stream = (options: Message.GenerateOptions): Stream.Stream<StreamChunk, StreamError, Llm> =>
  Stream.unwrap(Effect.map(Llm, (llm) => llm.stream(options)))
