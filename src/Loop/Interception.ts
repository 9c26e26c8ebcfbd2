/**
 * Interception-point primitives (DEC-2, §8.11, L-36, L-37): the three shapes every loop and tool
 * point is built from.
 *
 * - {@link Waterfall}: ordered middleware `(input, next) => Effect<Output>`. A listener either
 *   delegates (`next()`, optionally with a rewritten input) or short-circuits with its own output.
 *   Registration order = call order; the last `next` reaches the point's terminal (the default).
 * - {@link Serial}: listeners run one at a time in registration order and are awaited; the first
 *   failure stops the run and is returned.
 * - {@link Notify}: contained observers: every observer runs in order; a failing observer is
 *   logged (warning) and never propagates.
 *
 * Registration is scoped (closing the scope unregisters) and may be agent-scoped: a listener
 * registered for an agent id sees only that agent's runs (L-36). Global listeners run before
 * agent-scoped ones, each group in registration order. Listeners are looked up by agent id
 * (`AgentScoped`): a run touches the global listeners and that agent's own, never another agent's,
 * so its cost does not grow with the number of agents (issue 20); `scanned` counts what lookups
 * touched.
 *
 * Listener failures are surfaced as {@link HookFailure} (never defects); each point decides what a
 * failure means (an ordinary turn failure, a `fail` decision, a tool error result, …).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as GenAi from "../Llm/GenAi.js"
import * as LlmError from "../Llm/LlmError.js"
import * as AgentScoped from "./internal/AgentScoped.js"

/**
 * A listener failed (its error is kept as `cause`). `message` is the listener's error message.
 *
 * @since 0.1.0
 * @category errors
 */
export class HookFailure extends Schema.TaggedError<HookFailure>()("HookFailure", {
  point: Schema.String,
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * Options of a registration.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegisterOptions {
  /** only runs for this agent (session) id */
  readonly agentId?: string
}

/**
 * Renders any failure value as a message (T-6); shared with the `Llm` service.
 *
 * @since 0.1.0
 * @category utils
 */
export const messageOf: (value: unknown) => string = LlmError.messageOf

const toFailure = (point: string) => (cause: Cause.Cause<unknown>): Effect.Effect<never, HookFailure> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Cause.findErrorOption(cause)
  const value = failure._tag === "Some" ? failure.value : Cause.squash(cause)
  if (value instanceof HookFailure) return Effect.fail(value)
  return Effect.fail(new HookFailure({ point, message: messageOf(value), cause: value }))
}

/**
 * A run with listeners in an `effect_harness.hook {point}` span (issue 19); a run without any opens no span. A
 * waterfall's span also covers its terminal (the default outcome it wraps, e.g. a tool body for `tool/execute`).
 */
const traced = <A, E, R>(
  point: string,
  agentId: string | undefined,
  listeners: number,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  listeners === 0 ? effect : Effect.withSpan(effect, GenAi.SpanName.hook(point), {
    kind: "internal",
    attributes: {
      [GenAi.Attr.hookPoint]: point,
      [GenAi.Attr.hookListeners]: listeners,
      ...(agentId === undefined ? {} : { [GenAi.Attr.agentId]: agentId })
    }
  })

// runs `each` on every listener of the agent's view, in order, in one hook span (when there are listeners)
const runEach = <L, E>(
  registry: { readonly values: (agentId: string | undefined) => ReadonlyArray<L> },
  name: string,
  agentId: string | undefined,
  each: (listener: L) => Effect.Effect<void, E>
): Effect.Effect<void, E> =>
  Effect.suspend(() => {
    const listeners = registry.values(agentId)
    return listeners.length === 0
      ? Effect.void
      : traced(name, agentId, listeners.length, Effect.forEach(listeners, each, { discard: true }))
  })

const makeRegistry = <L>() =>
  Effect.sync(() => {
    const registry = AgentScoped.make<L>()
    return {
      register: (listener: L, options?: RegisterOptions): Effect.Effect<void, never, Scope.Scope> =>
        Effect.asVoid(Effect.acquireRelease(
          Effect.sync(() => registry.add(listener, options?.agentId)),
          (entry) => Effect.sync(() => registry.remove(entry))
        )),
      values: registry.values,
      active: (agentId: string | undefined): boolean => registry.values(agentId).length > 0,
      scanned: registry.scanned
    }
  })

/**
 * A waterfall listener. `next()` continues with the current input, `next(i)` with a rewritten one.
 *
 * unknown-error: user callback. Any failure (or defect) becomes a {@link HookFailure} naming the point.
 *
 * @since 0.1.0
 * @category models
 */
export type Middleware<I, O> = (input: I, next: (input?: I) => Effect.Effect<O, HookFailure>) => Effect.Effect<O, unknown>

/**
 * An ordered-middleware point.
 *
 * @since 0.1.0
 * @category models
 */
export interface Waterfall<I, O> {
  readonly name: string
  readonly register: (middleware: Middleware<I, O>, options?: RegisterOptions) => Effect.Effect<void, never, Scope.Scope>
  /** Registrations looked at by lookups so far (diagnostics: global ones and the running agent's own only). */
  readonly scanned: () => number
  /** `true` when a listener would run for `agentId` now (a loop skips the point's plumbing otherwise). */
  readonly active: (agentId: string | undefined) => boolean
  /** Runs the chain for `agentId`; `terminal` is the default outcome at the end of the chain. */
  readonly run: <E>(
    agentId: string | undefined,
    input: I,
    terminal: (input: I) => Effect.Effect<O, E>
  ) => Effect.Effect<O, HookFailure | E>
}

/**
 * Creates a waterfall point.
 *
 * @since 0.1.0
 * @category constructors
 */
export const waterfall = <I, O>(name: string): Effect.Effect<Waterfall<I, O>> =>
  Effect.map(makeRegistry<Middleware<I, O>>(), (registry) => ({
    name,
    register: registry.register,
    scanned: registry.scanned,
    active: registry.active,
    run: <E>(agentId: string | undefined, input: I, terminal: (input: I) => Effect.Effect<O, E>) =>
      Effect.suspend(() => {
        const listeners = registry.values(agentId)
        // no listener: the terminal alone (the chain would return its outcome and error unchanged)
        if (listeners.length === 0) return terminal(input)
        return traced(name, agentId, listeners.length, Effect.suspend(() => {
        let terminalError: { readonly error: E } | undefined
        const at = (i: number, current: I): Effect.Effect<O, HookFailure> => {
          const listener = listeners[i]
          if (listener === undefined) {
            return Effect.catch(terminal(current), (error) => {
              terminalError = { error }
              return Effect.fail(new HookFailure({ point: name, message: messageOf(error), cause: error }))
            })
          }
          return Effect.suspend(() => listener(current, (next) => at(i + 1, next === undefined ? current : next)))
            .pipe(Effect.catchCause(toFailure(name)))
        }
        return Effect.catch(at(0, input), (failure): Effect.Effect<never, HookFailure | E> =>
          terminalError !== undefined && failure.cause === terminalError.error
            ? Effect.fail(terminalError.error)
            : Effect.fail(failure))
        }))
      })
  }))

/**
 * A serial-checkpoint listener.
 *
 * unknown-error: user callback. Any failure (or defect) becomes a {@link HookFailure} naming the point.
 *
 * @since 0.1.0
 * @category models
 */
export type Listener<I> = (input: I) => Effect.Effect<void, unknown>

/**
 * A serial checkpoint: listeners in order, awaited; the first failure stops the run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Serial<I> {
  readonly name: string
  readonly register: (listener: Listener<I>, options?: RegisterOptions) => Effect.Effect<void, never, Scope.Scope>
  /** Registrations looked at by lookups so far (diagnostics: global ones and the running agent's own only). */
  readonly scanned: () => number
  /** `true` when a listener would run for `agentId` now (a loop skips the point's plumbing otherwise). */
  readonly active: (agentId: string | undefined) => boolean
  readonly run: (agentId: string | undefined, input: I) => Effect.Effect<void, HookFailure>
}

/**
 * Creates a serial checkpoint.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serial = <I>(name: string): Effect.Effect<Serial<I>> =>
  Effect.map(makeRegistry<Listener<I>>(), (registry) => ({
    name,
    register: registry.register,
    scanned: registry.scanned,
    active: registry.active,
    run: (agentId, input) =>
      runEach(registry, name, agentId, (listener) =>
        Effect.suspend(() => listener(input)).pipe(Effect.catchCause(toFailure(name))))
  }))

/**
 * A notification point: contained observers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Notify<I> {
  readonly name: string
  readonly register: (listener: Listener<I>, options?: RegisterOptions) => Effect.Effect<void, never, Scope.Scope>
  /** Registrations looked at by lookups so far (diagnostics: global ones and the running agent's own only). */
  readonly scanned: () => number
  /** `true` when a listener would run for `agentId` now (a loop skips the point's plumbing otherwise). */
  readonly active: (agentId: string | undefined) => boolean
  /** Runs every observer; failures are logged and contained. Interruption still propagates. */
  readonly run: (agentId: string | undefined, input: I) => Effect.Effect<void>
}

/**
 * Creates a notification point.
 *
 * @since 0.1.0
 * @category constructors
 */
export const notify = <I>(name: string): Effect.Effect<Notify<I>> =>
  Effect.map(makeRegistry<Listener<I>>(), (registry) => ({
    name,
    register: registry.register,
    scanned: registry.scanned,
    active: registry.active,
    run: (agentId, input) =>
      runEach(registry, name, agentId, (listener) =>
        Effect.suspend(() => listener(input)).pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.failCause(cause as Cause.Cause<never>)
              : Effect.logWarning(`observer of ${name} failed (contained)`, cause)
          )
        ))
  }))
