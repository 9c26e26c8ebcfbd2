/**
 * The agent handle (L-1..L-10) and the factory service that creates it.
 *
 * An agent is created from the Layer-provided {@link AgentFactory} with `make(options)`; it lives
 * in the caller's `Scope`: closing the scope disposes it (L-8). Embedders compose the factory into
 * their own services:
 *
 * ```ts
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const agent = yield* Agent.make({ provider: "scripted", model: "demo", tools: [echo] })
 *   yield* agent.send([ContentBlock.text("hi")])
 *   yield* agent.whenIdle
 *   return yield* agent.session.deriveMessages
 * }))
 * program.pipe(Effect.provide(Agent.layer), Effect.provide(Dependencies))
 * ```
 *
 * The factory needs `Llm` (with an adapter registered for the agent's provider), `SessionStore`
 * (live sessions + the flush checkpoint), `ToolRuntime` (global tools and tool points),
 * {@link Hooks.LoopHooks} and {@link SystemPrompt.SystemPrompt}.
 *
 * Verbs (Effects that return once the input is queued; none waits for the turn):
 * - `send` (L-1): validates `{content, source}` as lossless JSON (`INVALID_INPUT`, nothing queued,
 *   no notification), freezes a detached copy, queues it, emits `queued`, wakes the driver.
 * - `steer` (L-2): `send` unless running; while running it joins the steering FIFO (logged at the
 *   next drain point) and emits `queued{steering: true}`; after a terminal stop (L-26) it is
 *   discarded silently.
 * - `inject` (L-3): never runs the model: batch FIFO while a tool batch executes; `context/message`
 *   now while a turn is open; otherwise a one-shot injection turn with a tracked flush.
 * - `cancel(reason = "cancelled")` (L-4): a no-op unless there is work; otherwise arms the marker,
 *   discards both FIFOs and fires the active step's signal (DEC-1: active work is interrupted; the
 *   step itself observes the signal and closes the log).
 * - `whenIdle` (L-5), `status` / `statusChanges` (L-6), `dispose` (L-8).
 *
 * Decisions (DEC-10):
 * - `maxParallelToolCalls` is an agent option overriding the `ToolRuntime` cap for this agent's
 *   batches (positive integer, else `INVALID_OPTIONS` at creation).
 * - `toolOrder` is validated at creation (exactly one `"*"` rest marker, no duplicates); unknown
 *   names can only be checked per step and fail that turn (L-34).
 * - The persona (`systemPrompt.persona`) is an agent-scoped section `persona` at order 0; agent
 *   sections and variables are agent-scoped registrations (they shadow same-named globals).
 * - Session choice: `{ _tag: "New" }` (default; id `<label>-session-<uuid>` when none given),
 *   `{ _tag: "Auto", id }` (L-7: resume when stored, else create), `{ _tag: "Resume", id }`
 *   (requires stored history), `{ _tag: "Fork", from, boundary?, id? }`.
 * - Disposal waits for the running turn to observe the abort; work that is not under the step
 *   signal (e.g. a hanging `turn-continuation` listener) delays disposal until it returns.
 *   `dispose` called from inside the agent's own driver (a listener, a tool body) marks the agent
 *   disposed and aborts the step at once, and finishes in the background (no self-deadlock);
 *   closing the agent's scope still awaits the full disposal.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import type { ContentBlock } from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import * as Llm from "../Llm/Llm.js"
import * as ModelCatalog from "../Llm/ModelCatalog.js"
import { type MessageSource, userSource } from "../Llm/Message.js"
import type { SessionError } from "../Session/SessionError.js"
import type * as ResumePlan from "../Session/ResumePlan.js"
import type { SessionEvent, SessionRoute } from "../Session/SessionEvent.js"
import type * as SessionStore from "../Session/SessionStore.js"
import { AgentError, type InjectOptions, type SendOptions } from "./AgentControl.js"
import * as Compactor from "./Compaction/Compactor.js"
import * as CompactionOptions from "./Compaction/Options.js"
import * as Recall from "./Compaction/Recall.js"
import * as Driver from "./Driver.js"
import type { HookContext } from "./HookContext.js"
import * as Hooks from "./Hooks.js"
import * as Inbox from "./Inbox.js"
import * as Fairness from "./internal/Fairness.js"
import * as OutputLimit from "./internal/OutputLimit.js"
import * as Resume from "./internal/Resume.js"
import * as Runtime from "./internal/Runtime.js"
import * as Sessions from "./internal/Sessions.js"
import type * as SessionChoices from "./SessionChoice.js"
import * as StepSignal from "./StepSignal.js"
import * as SystemPrompt from "./SystemPrompt.js"
import type * as Tool from "./Tool.js"
import * as ToolRegistry from "./ToolRegistry.js"
import * as ToolRuntime from "./ToolRuntime.js"
import * as ToolScheduler from "./ToolScheduler.js"
import * as Turn from "./Turn.js"
import { inChildScope } from "../Llm/internal/ChildScope.js"

/**
 * The agent handle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Agent extends Hooks.HookAgent {
  /** the current status (L-6) */
  readonly status: Effect.Effect<Hooks.Status>
  /** the current status, then every change */
  readonly statusChanges: Stream.Stream<Hooks.Status>
  /** resolves at the next settlement out of `running` (L-5) */
  readonly whenIdle: Effect.Effect<void>
  /** every session event committed from now on */
  readonly events: Stream.Stream<SessionEvent>
  /** disposes now (idempotent); closing the agent's scope does the same (L-8) */
  readonly dispose: Effect.Effect<void>
  /**
   * Compacts the context now (K-3c; needs the `compaction` option). While idle it runs as its own
   * turn and returns when that turn ended; while a turn runs it becomes that turn's next action
   * (before its next model request) and returns at once.
   */
  readonly compact: (options?: { readonly instructions?: string }) => Effect.Effect<void, AgentError>
  /**
   * Continues the session's interrupted turn (DEC-16, `Resume`): same turn number, logged steps and
   * results kept, tool calls in doubt decided by `inDoubt` (default `"report"`). Returns when that
   * turn ended: `true`, or `false` when the log has no interrupted turn or the agent is busy.
   */
  readonly resumeTurn: (
    options?: { readonly inDoubt?: ResumePlan.InDoubtPolicy }
  ) => Effect.Effect<boolean, AgentError | SessionError>
}

/**
 * Which session the agent runs over (see the module doc).
 *
 * @since 0.1.0
 * @category models
 */
export type SessionChoice = SessionChoices.SessionChoice

/**
 * Agent-scoped system prompt inputs (L-31..L-34).
 *
 * @since 0.1.0
 * @category models
 */
export interface SystemPromptOptions {
  /** the deployment persona (order 0; a template; empty → dropped) */
  readonly persona?: string
  readonly sections?: ReadonlyArray<SystemPrompt.Section>
  readonly variables?: Readonly<Record<string, SystemPrompt.Variable>>
  /** model-facing tool order around exactly one `"*"` rest marker */
  readonly toolOrder?: ReadonlyArray<string>
}

/**
 * Options of {@link AgentFactory.make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentOptions<Tools extends ReadonlyArray<Tool.Any> = ReadonlyArray<Tool.Tool<never>>> {
  /** provider route of the first request (later requests start from the logged header, L-12.8) */
  readonly provider?: string
  readonly model?: string
  readonly session?: SessionChoice
  /** prefix of generated session ids (default `"agent"`) */
  readonly label?: string
  /** agent-scoped tools (shadow same-named globals) */
  readonly tools?: Tools
  /** only these global tools are visible */
  readonly allow?: ReadonlyArray<string>
  /** these global tools are hidden */
  readonly deny?: ReadonlyArray<string>
  readonly systemPrompt?: SystemPromptOptions
  /** cap of this agent's parallel tool pool (default: the `ToolRuntime` cap) */
  readonly maxParallelToolCalls?: number
  /**
   * Enables context compaction (K-1..K-15) with these settings (`{}` = defaults); also registers
   * the `recall` tool (K-9). The window comes from the `ModelCatalog` in context (built-ins when
   * none is provided) unless `contextWindow` is set.
   */
  readonly compaction?: CompactionOptions.Options
  /** steps per turn; a turn that would go on ends `max-steps` (resumable). Default: no budget. */
  readonly maxSteps?: number
  /**
   * bytes one step may stream (text, reasoning and tool-call arguments, UTF-8); past it the stream
   * is cut, the partial output kept in the log and the turn fails `OUTPUT_LIMIT`. Default 8 MiB.
   */
  readonly maxOutputBytes?: number
  /**
   * where this agent runs (provider, model, base URL, store, cwd), logged as `session/route` in a
   * turn whenever it differs from the last logged one, so a resume can restore it (DEC-16)
   */
  readonly route?: SessionRoute
}

/**
 * Invalid agent options.
 *
 * @since 0.1.0
 * @category errors
 */
export class AgentOptionsError extends Schema.TaggedError<AgentOptionsError>()("AgentOptionsError", {
  code: Schema.Literal("INVALID_OPTIONS"),
  message: Schema.String
}) {}

/**
 * What creating an agent may fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type CreateError =
  | AgentOptionsError
  | SessionError
  | ToolRegistry.DuplicateToolError
  | SystemPrompt.SystemPromptError

/**
 * The factory service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Creates an agent living in the current scope (closing it disposes the agent). */
  readonly make: <const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
    options?: AgentOptions<Tools>
  ) => Effect.Effect<Agent, CreateError, Scope.Scope | Tool.Requirements<Tools[number]>>
}

/**
 * The agent factory Tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class AgentFactory extends Context.Service<AgentFactory, Service>()("effect-harness/Loop/AgentFactory") {}

/**
 * Runs an agent's creation in its own child of the caller's scope: when creation fails (or is
 * interrupted) the child closes at once, releasing the session and its lock and undoing every
 * registration; on success it lives as long as the caller's scope. Creation runs on the loop's fair
 * scheduler, so a burst of concurrent creations leaves the event loop its turns.
 */
const inOwnScope = <A, E, R>(create: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope> | Scope.Scope> =>
  inChildScope(Fairness.fair(create))

/**
 * The agents whose driver the current fiber runs in (or descends from): set in the driver's context as it starts,
 * inherited by every fiber it forks (Effect 4: a `Context.Reference` instead of v3's `FiberRef`).
 */
const DriverFibers = Context.Reference<ReadonlySet<string>>("effect-harness/Loop/Agent/DriverFibers", {
  defaultValue: () => new Set()
})

/**
 * Enters the driver (as it starts, in its own fiber): puts it under the parent of `span` (the `Agent.make` span),
 * or under no span at all — the driver outlives `make`, so its turns' spans must not hang under the creation span —
 * and adds `agentId` to {@link DriverFibers}. An edit of the fiber's own context, not a wrapper around the driver
 * (`provideService`): a wrapper's frames stay on an idle driver's stack (issue 20).
 */
const enterDriver = (span: Option.Option<Tracer.Span>, agentId: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const parent = Option.flatMap(span, (s) => s.parent)
    const context = Option.isSome(parent)
      ? Context.add(fiber.context, Tracer.ParentSpan, parent.value)
      : Context.omit(Tracer.ParentSpan)(fiber.context)
    const ids = Context.get(context, DriverFibers)
    fiber.setContext(Context.add(context, DriverFibers, new Set([...ids, agentId])))
    return Effect.void
  })

const invalidInput = (what: string, message: string) =>
  new AgentError({ code: "INVALID_INPUT", message: `${what}: ${message}` })

const disposedError = (verb: string) => new AgentError({ code: "DISPOSED", message: `${verb}: the agent is disposed` })

const entryOf = (
  verb: string,
  content: ReadonlyArray<ContentBlock>,
  source: MessageSource | undefined
): Result.Result<Inbox.Entry, AgentError> =>
  Result.match(Json.snapshotOf<Inbox.Entry>({ content, source: source ?? userSource }), {
    onFailure: (e) => Result.fail(invalidInput(verb, e.message)),
    onSuccess: (entry) => {
      return Array.isArray(entry.content)
        ? Result.succeed(entry)
        : Result.fail(invalidInput(verb, "content must be a list of content blocks"))
    }
  })

const contextOf = (
  content: ReadonlyArray<ContentBlock>,
  options: InjectOptions | undefined
): Result.Result<HookContext, AgentError> => {
  const source = options?.source ?? userSource
  const plain = options?.meta === undefined ? { content, source } : { content, source, meta: options.meta }
  return Result.match(Json.snapshotOf<HookContext>(plain), {
    onFailure: (e) => Result.fail(invalidInput("inject", e.message)),
    onSuccess: (context) => {
      return Array.isArray(context.content)
        ? Result.succeed(context)
        : Result.fail(invalidInput("inject", "content must be a list of content blocks"))
    }
  })
}

const lastRouteOf = (events: ReadonlyArray<SessionEvent>): SessionRoute | undefined => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent
    if (e.type === "session/route") return e.data
  }
  return undefined
}

const lastTurnOf = (events: ReadonlyArray<SessionEvent>): number => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent
    if (e.type === "turn/start") return e.data.turn
  }
  return 0
}

const validateOptions = (options: AgentOptions<ReadonlyArray<Tool.Any>>): Effect.Effect<void, AgentOptionsError | SystemPrompt.SystemPromptError> =>
  Effect.gen(function*() {
    const cap = options.maxParallelToolCalls
    if (cap !== undefined && (!Number.isSafeInteger(cap) || cap < 1)) {
      return yield* new AgentOptionsError({
        code: "INVALID_OPTIONS",
        message: `maxParallelToolCalls must be a positive integer, got ${String(cap)}`
      })
    }
    const toolOrder = options.systemPrompt?.toolOrder
    if (toolOrder !== undefined) yield* Effect.fromResult(SystemPrompt.validateToolOrder(toolOrder))
    const maxSteps = options.maxSteps
    if (maxSteps !== undefined && (!Number.isSafeInteger(maxSteps) || maxSteps < 1)) {
      return yield* new AgentOptionsError({
        code: "INVALID_OPTIONS",
        message: `maxSteps must be a positive integer, got ${String(maxSteps)}`
      })
    }
    const maxOutputBytes = options.maxOutputBytes
    if (maxOutputBytes !== undefined && (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 1)) {
      return yield* new AgentOptionsError({
        code: "INVALID_OPTIONS",
        message: `maxOutputBytes must be a positive integer, got ${String(maxOutputBytes)}`
      })
    }
    const compaction = options.compaction === undefined ? undefined : CompactionOptions.problem(options.compaction)
    if (compaction !== undefined) return yield* new AgentOptionsError({ code: "INVALID_OPTIONS", message: compaction })
  })

/**
 * Builds the factory from the services in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFactory: Effect.Effect<
  Service,
  never,
  Llm.Llm | Hooks.LoopHooks | SystemPrompt.SystemPrompt | ToolRuntime.ToolRuntime | SessionStore.SessionStore
> = Effect.gen(function*() {
  const llm = yield* Llm.Llm
  const hooks = yield* Hooks.LoopHooks
  const prompt = yield* SystemPrompt.SystemPrompt
  const toolRuntime = yield* ToolRuntime.ToolRuntime
  const sessions = yield* Sessions.make
  // a Reference: the built-in catalog unless one is provided
  const catalog = yield* ModelCatalog.ModelCatalog

  const make = Effect.fn("Agent.make")(<const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
    options: AgentOptions<Tools> = {}
  ): Effect.Effect<Agent, CreateError, Scope.Scope | Tool.Requirements<Tools[number]>> =>
    inOwnScope(Effect.gen(function*() {
      yield* validateOptions(options)
      const acquired = yield* sessions.acquire(options.session ?? { _tag: "New" }, options.label ?? "agent")
      const session = acquired.session
      const events = yield* session.events
      const state = yield* Ref.make(Runtime.initialState(lastTurnOf(events)))
      const status = yield* SubscriptionRef.make<Hooks.Status>("idle")
      const wake = yield* Queue.sliding<void>(1)
      const instance = yield* Ref.make<Runtime.InstanceState>({ prefix: Option.none(), requested: false })
      const tracked = yield* FiberSet.make<void, never>()
      const loggedRoute = yield* Ref.make(lastRouteOf(events))
      const exited = yield* Deferred.make<void>()

      // agent-scoped tools and the view
      const controller = options.compaction === undefined
        ? undefined
        : Compactor.controller(CompactionOptions.resolve(options.compaction), catalog)
      const noTools: ReadonlyArray<Tool.Tool<never>> = []
      const ownTools = controller === undefined
        ? options.tools ?? noTools
        : [...(options.tools ?? noTools), Recall.make(session, controller.options.recallBudget)]
      const scoped = yield* ToolRegistry.make(ownTools)
      const restrictions: ToolRegistry.Restriction = {
        ...(options.allow === undefined ? {} : { allow: options.allow }),
        ...(options.deny === undefined ? {} : { deny: options.deny })
      }
      const view = ToolRegistry.view({ global: toolRuntime.globals, scoped, restrictions })
      const toolService: ToolRuntime.Service = options.maxParallelToolCalls === undefined
        ? toolRuntime
        : { ...toolRuntime, maxParallelToolCalls: options.maxParallelToolCalls }

      const send = Effect.fn("Agent.send")((content: ReadonlyArray<ContentBlock>, o?: SendOptions): Effect.Effect<void, AgentError> =>
        Effect.gen(function*() {
          const entry = yield* Effect.fromResult(entryOf("send", content, o?.source))
          const ok = yield* Ref.modify(state, (s) =>
            s.disposed ? [false, s] as const : [true, { ...s, inbox: Inbox.enqueue(s.inbox, entry) }] as const)
          if (!ok) return yield* disposedError("send")
          yield* hooks.queued.run(session.id, { agent, content: entry.content, source: entry.source, steering: false })
          yield* Queue.offer(wake, undefined)
        }))

      const steer = Effect.fn("Agent.steer")((content: ReadonlyArray<ContentBlock>, o?: SendOptions): Effect.Effect<void, AgentError> =>
        Effect.gen(function*() {
          const entry = yield* Effect.fromResult(entryOf("steer", content, o?.source))
          const route = yield* Ref.modify(state, (s) => {
            if (s.disposed) return ["disposed", s] as const
            if (s.status !== "running") return ["send", { ...s, inbox: Inbox.enqueue(s.inbox, entry) }] as const
            if (s.terminalStop) return ["discard", s] as const
            return ["steer", { ...s, inbox: Inbox.steer(s.inbox, entry) }] as const
          })
          switch (route) {
            case "disposed":
              return yield* disposedError("steer")
            case "discard":
              return
            case "send": {
              yield* hooks.queued.run(session.id, { agent, content: entry.content, source: entry.source, steering: false })
              return yield* Queue.offer(wake, undefined)
            }
            case "steer":
              return yield* hooks.queued.run(session.id, {
                agent,
                content: entry.content,
                source: entry.source,
                steering: true
              })
          }
        }))

      const inject = Effect.fn("Agent.inject")((content: ReadonlyArray<ContentBlock>, o?: InjectOptions): Effect.Effect<void, AgentError> =>
        Effect.gen(function*() {
          const context = yield* Effect.fromResult(contextOf(content, o))
          if ((yield* Ref.get(state)).disposed) return yield* disposedError("inject")
          yield* rt.run(context)
        }))

      const cancel = Effect.fn("Agent.cancel")((reason: string = "cancelled"): Effect.Effect<void> =>
        Effect.gen(function*() {
          const target = yield* Ref.modify(state, (s): readonly [
            { readonly armed: boolean; readonly signal: StepSignal.StepSignal | undefined },
            Runtime.AgentState
          ] => {
            const work = s.status === "running" || s.signal !== undefined || Inbox.hasInput(s.inbox)
            if (s.disposed || !work) return [{ armed: false, signal: undefined }, s] as const
            return [{ armed: true, signal: s.signal }, { ...s, inbox: Inbox.cancel(s.inbox, reason) }] as const
          })
          if (!target.armed) return
          if (target.signal !== undefined) yield* StepSignal.abort(target.signal, { _tag: "Cancelled", reason })
          yield* Queue.offer(wake, undefined)
        }))

      const whenIdle: Effect.Effect<void> = Runtime.awaitIdle(state, exited)

      let driver: Fiber.Fiber<void> | undefined
      // begin (uninterruptible, once): mark disposed, abort the step, publish, wake the driver;
      // the rest runs once in a daemon fiber; every caller awaits its end (except the driver
      // itself, which must not wait for itself)
      const dispose: Effect.Effect<void> = Effect.gen(function*() {
        yield* Effect.uninterruptible(Effect.gen(function*() {
          const first = yield* Ref.modify(state, (s) =>
            s.disposed
              ? [Option.none(), s] as const
              : [Option.some(s.signal), { ...s, disposed: true, status: "disposed" as const }] as const)
          if (Option.isNone(first)) return
          const signal = first.value
          if (signal !== undefined) yield* StepSignal.abort(signal, { _tag: "Disposed" })
          yield* SubscriptionRef.set(status, "disposed")
          yield* hooks.status.run(session.id, { agent, status: "disposed" })
          yield* Queue.offer(wake, undefined)
          yield* Effect.forkDetach(finish)
        }))
        if ((yield* DriverFibers).has(session.id)) return
        yield* Deferred.await(exited)
      })

      const finish: Effect.Effect<void> = Effect.gen(function*() {
        if (driver !== undefined) yield* Fiber.await(driver)
        yield* FiberSet.awaitEmpty(tracked)
        const flushed = yield* Effect.result(acquired.flush)
        if (Result.isFailure(flushed)) {
          yield* Runtime.report(rt.runtime, { step: 0, ...Runtime.describe(flushed.failure), cause: flushed.failure })
        }
        const waiters = yield* Ref.modify(state, (s) => [s.idleWaiters, { ...s, idleWaiters: [] }] as const)
        yield* Effect.forEach(waiters, (d) => Deferred.succeed(d, undefined), { discard: true })
        yield* hooks.disposed.run(session.id, { agent })
        yield* Deferred.succeed(exited, undefined)
      })

      const agent: Agent = {
        id: session.id,
        session,
        options: {
          ...(options.provider === undefined ? {} : { provider: options.provider }),
          ...(options.model === undefined ? {} : { model: options.model })
        },
        send,
        steer,
        inject,
        cancel,
        status: SubscriptionRef.get(status),
        // built when read: the stream's structure is a few KB, per idle agent (issue 20)
        statusChanges: Stream.suspend(() => SubscriptionRef.changes(status)),
        whenIdle,
        events: session.changes,
        dispose,
        compact: (o) =>
          Effect.gen(function*() {
            if (controller === undefined) {
              return yield* new AgentError({ code: "INVALID_INPUT", message: "compact: compaction is not enabled for this agent" })
            }
            if ((yield* Ref.get(state)).disposed) return yield* disposedError("compact")
            const instructions = o?.instructions === undefined || o.instructions.trim() === "" ? [] : [o.instructions]
            const ran = yield* Turn.compactionTurn(runtime, instructions)
            if (!ran) {
              yield* Ref.update(state, (s) => ({ ...s, compactionPending: [...(s.compactionPending ?? []), ...instructions] }))
            }
          }),
        resumeTurn: (o) =>
          Effect.gen(function*() {
            if ((yield* Ref.get(state)).disposed) return yield* disposedError("resumeTurn")
            return yield* Resume.resumeTurn(runtime, o?.inDoubt ?? "report")
          })
      }

      const runtime: Runtime.Runtime = {
        agent,
        session,
        hooks,
        prompt,
        llm,
        tools: view,
        runBatch: (input) =>
          ToolScheduler.runBatch(input).pipe(Effect.provideService(ToolRuntime.ToolRuntime, toolService)),
        flush: acquired.flush,
        options: {
          provider: options.provider,
          model: options.model,
          toolOrder: options.systemPrompt?.toolOrder,
          maxSteps: options.maxSteps,
          maxOutputBytes: options.maxOutputBytes ?? OutputLimit.DEFAULT_MAX_OUTPUT_BYTES
        },
        state,
        status,
        wake,
        instance,
        tracked,
        compaction: controller,
        catalog,
        route: { wanted: options.route, logged: loggedRoute }
      }
      const rt = { runtime, run: (context: HookContext) => Turn.inject(runtime, context) }

      // agent-scoped system prompt inputs
      const sp = options.systemPrompt
      if (sp?.persona !== undefined) {
        yield* prompt.registerSection({ name: "persona", order: 0, text: sp.persona }, { agentId: session.id })
      }
      for (const section of sp?.sections ?? []) yield* prompt.registerSection(section, { agentId: session.id })
      for (const [name, variable] of Object.entries(sp?.variables ?? {})) {
        yield* prompt.registerVariable(name, variable, { agentId: session.id })
      }

      // L-7: publish, session-start, then the driver
      yield* hooks.created.run(session.id, { agent })
      yield* hooks.sessionStart.run(session.id, { agent, source: acquired.source })
      // a daemon interrupted when the scope closes (what `forkScoped` does, without its observer that keeps the
      // creating fiber alive as long as the driver runs: an agent made in a short-lived fiber, issue 20)
      const span = yield* Effect.option(Effect.currentSpan)
      const body = Effect.andThen(enterDriver(span, session.id), Driver.run(runtime))
      driver = yield* Effect.uninterruptibleMask((restore) =>
        Effect.tap(Effect.forkDetach(restore(body)), (fiber) =>
          Effect.addFinalizer(() =>
            Effect.withFiber((current) => current.id === fiber.id ? Effect.void : Fiber.interrupt(fiber))
          ))
      )
      yield* Effect.addFinalizer(() => dispose)
      return agent
    })))

  return { make }
})

/**
 * The factory as a Layer.
 * Built afresh on every `provide` (`Layer.fresh`): Effect 4 reuses a layer an enclosing `provide` already
 * built, and two agent worlds must never share a factory (its live sessions).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  AgentFactory,
  never,
  Llm.Llm | Hooks.LoopHooks | SystemPrompt.SystemPrompt | ToolRuntime.ToolRuntime | SessionStore.SessionStore
> = Layer.fresh(Layer.effect(AgentFactory, makeFactory))

/**
 * Creates an agent with the factory from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any> = readonly []>(
  options?: AgentOptions<Tools>
): Effect.Effect<Agent, CreateError, AgentFactory | Scope.Scope | Tool.Requirements<Tools[number]>> =>
  Effect.flatMap(AgentFactory, (factory) => factory.make(options))
