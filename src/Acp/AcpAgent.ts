/**
 * An Agent Client Protocol agent (the protocol Zed, JetBrains and other editors speak) over the
 * agent factory, built on the protocol maintainers' SDK (`@agentclientprotocol/sdk`, protocol v1).
 * The session log stays the source of truth: an ACP session IS a harness session (same id), every
 * update the editor sees is derived from logged events (`AcpUpdates`), and `session/load` resumes
 * the stored session and replays it.
 *
 * Methods:
 * - `initialize`: protocol 1, `loadSession`, embedded-context prompts, the agent's name and version;
 * - `session/new` (the workspace must be the directory the agent serves), `session/load` (resume +
 *   replay as `session/update`s before the answer);
 * - `session/prompt`: one turn; message and thought chunks stream as they are logged, each tool call
 *   is a `tool_call` (with a `diff` for `edit`/`write`), an `in_progress` update when its body starts
 *   (the one update not made from a logged event) and a `tool_call_update` with its result; the
 *   answer's stop reason comes from the turn's end (`completed` → `end_turn`, `aborted` →
 *   `cancelled`, `max-steps` → `max_turn_requests`, `max-tokens`, `rejected` → `refusal`; a failed
 *   turn is a JSON-RPC error naming its code). A prompt while one runs is refused;
 * - `session/cancel`: cancels the running turn (the log ends it `aborted`);
 * - `session/request_permission` (agent → editor): every approval the permission engine asks for
 *   goes to the editor with "Allow" / "Reject" options; the editor's "cancelled" denies the call;
 * - modes (`session/set_mode`): `default` (the permission rules; questions go to the editor),
 *   `acceptEdits` (`edit` and `write` calls the rules would ask about run without a question, unless
 *   only a person may approve them, see {@link Options.autoApprove}), `plan` (only read-only tools
 *   run; the rest are denied with a reason the model reads);
 * - models: a `model` session config option (`session/set_config_option`), switching between
 *   turns by reopening the session on the new model (the session goes on).
 *
 * Decisions (DEC-10): `mcpServers` of a session request are ignored (the harness reads its own MCP
 * configuration); a prompt's images and audio are named, not sent (text-only prompt capabilities);
 * the editor's file-system and terminal capabilities are not used (tools act on the workspace
 * directly, sandboxed as in the CLI).
 *
 * @since 0.1.0
 */
import * as Acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as NodePath from "node:path"
import * as ContentBlock from "../Llm/ContentBlock.js"
import * as Agent from "../Loop/Agent.js"
import * as LoopApproval from "../Loop/Approval.js"
import * as ToolHooks from "../Loop/ToolHooks.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import type { SessionEvent, TurnEndReason } from "../Session/SessionEvent.js"
import type * as AcpApprovals from "./AcpApprovals.js"
import * as AcpUpdates from "./AcpUpdates.js"

/**
 * The session modes.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "default" | "acceptEdits" | "plan"

/**
 * The modes offered, in order.
 *
 * @since 0.1.0
 * @category constants
 */
export const modes: ReadonlyArray<Acp.SessionMode & { readonly id: Mode }> = [
  { id: "default", name: "Default", description: "the permission rules decide; questions are asked in the editor" },
  { id: "acceptEdits", name: "Accept edits", description: "file edits run without a question" },
  { id: "plan", name: "Plan", description: "read-only: only read, ls, glob and grep run" }
]

const READ_ONLY: ReadonlySet<string> = new Set(["read", "ls", "glob", "grep", "recall"])

/**
 * An ACP request that failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class AcpError extends Schema.TaggedError<AcpError>()("AcpError", {
  reason: Schema.Literals(["invalid-params", "invalid-request", "not-found", "turn-failed"]),
  message: Schema.String
}) {
  /** Stable code. */
  readonly code = "ACP_REQUEST_FAILED" as const
}

/**
 * Options of {@link serve}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** the absolute workspace directory the agent serves */
  readonly cwd: string
  readonly provider: string
  readonly model: string
  /** models offered in the `model` config option (the current one is always offered) */
  readonly models?: ReadonlyArray<string>
  readonly agentInfo: { readonly name: string; readonly version: string }
  /** prefix of new session ids (default `"harness"`) */
  readonly label?: string
  /** further agent options (limits, compaction, …) */
  readonly agentOptions?: Omit<Agent.AgentOptions, "provider" | "model" | "session" | "label">
  /** the registry the harness's approval service was built from */
  readonly approvals: AcpApprovals.Approvals
  /**
   * In `acceptEdits` mode: `true` approves the request without asking the editor. Default: `edit`
   * and `write` calls. A policy that knows which questions only a person may answer excludes them.
   */
  readonly autoApprove?: (request: LoopApproval.ApprovalRequest) => boolean
}

interface Live {
  readonly agent: Agent.Agent
  readonly scope: Scope.Closeable
  readonly model: string
}

/** what the running prompt forwards to the editor, in order */
type Item = SessionEvent | { readonly _tag: "Started"; readonly callId: string } | "idle"

interface Session {
  readonly id: string
  readonly client: Acp.AgentContext
  readonly mode: Ref.Ref<Mode>
  readonly live: Ref.Ref<Live>
  readonly running: Ref.Ref<boolean>
  /** the running prompt's queue (a tool body starting is reported through it, after its logged call) */
  readonly turn: Ref.Ref<Queue.Queue<Item> | undefined>
}

const defaultAutoApprove = (request: LoopApproval.ApprovalRequest): boolean => request.name === "edit" || request.name === "write"

/**
 * The ACP stop reason of a turn end (`undefined` for a failed turn).
 *
 * @since 0.1.0
 * @category utils
 */
export const stopReasonOf = (reason: TurnEndReason | undefined): Acp.StopReason | undefined => {
  switch (reason?.kind) {
    case undefined:
    case "completed":
      return "end_turn"
    case "max-tokens":
      return "max_tokens"
    case "max-steps":
      return "max_turn_requests"
    case "rejected":
      return "refusal"
    case "error":
      return undefined
    default:
      return "cancelled"
  }
}

const toRequestError = (e: unknown): Acp.RequestError => {
  if (e instanceof AcpError) {
    switch (e.reason) {
      case "invalid-params":
        return Acp.RequestError.invalidParams({ code: e.code }, e.message)
      case "invalid-request":
        return Acp.RequestError.invalidRequest({ code: e.code }, e.message)
      case "not-found":
        return Acp.RequestError.invalidParams({ code: "SESSION_NOT_FOUND" }, e.message)
      case "turn-failed":
        return Acp.RequestError.internalError({ code: e.code }, e.message)
    }
  }
  return Acp.RequestError.internalError(undefined, e instanceof Error ? e.message : String(e))
}

// an update that cannot be sent (the editor went away) is reported on the log, the turn goes on
const notify = (client: Acp.AgentContext, sessionId: string, update: Acp.SessionUpdate): Effect.Effect<void> =>
  Effect.tryPromise(() => client.notify("session/update", { sessionId, update })).pipe(
    Effect.catch((e) => Effect.logWarning(`acp: cannot send a session update to the editor: ${e.message}`))
  )

/**
 * Serves one ACP connection over `stream` until the editor closes it; every session's agent is
 * disposed (its running turn cancelled and logged) when the connection or the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (
  stream: Acp.Stream,
  options: Options
): Effect.Effect<void, never, Agent.AgentFactory | ToolRuntime.ToolRuntime | Scope.Scope> =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntimePromise<Agent.AgentFactory | ToolRuntime.ToolRuntime>()
    const sessions = yield* Ref.make<ReadonlyMap<string, Session>>(new Map())
    const serverScope = yield* Effect.scope
    const autoApprove = options.autoApprove ?? defaultAutoApprove
    const models = [...new Set([options.model, ...(options.models ?? [])])]
    const handle = <A>(effect: Effect.Effect<A, AcpError, Agent.AgentFactory | ToolRuntime.ToolRuntime>): Promise<A> =>
      run(effect).catch((e: unknown) => Promise.reject(toRequestError(e)))

    const find = (id: string) =>
      Effect.flatMap(Ref.get(sessions), (map) => {
        const s = map.get(id)
        return s === undefined ? Effect.fail(new AcpError({ reason: "not-found", message: `no session ${id} on this connection` })) : Effect.succeed(s)
      })

    const asker = (session: Session): AcpApprovals.Asker => (request) =>
      Effect.gen(function*() {
        if ((yield* Ref.get(session.mode)) === "acceptEdits" && autoApprove(request)) return "allow-once" as const
        const toolCall = AcpUpdates.describeCall(request.callId, request.name, JSON.stringify(request.arguments))
        const response = yield* Effect.tryPromise({
          try: (signal) =>
            session.client.request("session/request_permission", {
              sessionId: session.id,
              toolCall,
              options: [
                { optionId: "allow", name: "Allow", kind: "allow_once" },
                { optionId: "reject", name: "Reject", kind: "reject_once" }
              ]
            }, { cancellationSignal: signal }),
          catch: (e) => new LoopApproval.ApprovalError({ message: `the editor did not answer: ${e instanceof Error ? e.message : String(e)}` })
        })
        const outcome = response.outcome
        if (outcome.outcome === "cancelled") return "cancelled" as const
        return outcome.optionId === "allow" ? "allow-once" as const : "reject" as const
      })

    /** opens the agent of a session in its own scope (closed when the session is reopened or the server stops) */
    const openAgent = (choice: Agent.SessionChoice, model: string, mode: Ref.Ref<Mode>) =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(serverScope, "sequential")
        const agent = yield* Agent.make({
          ...options.agentOptions,
          provider: options.provider,
          model,
          session: choice,
          label: options.label ?? "harness"
        }).pipe(
          Scope.provide(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
          Effect.mapError((e) =>
            new AcpError({ reason: e._tag === "SessionError" ? "not-found" : "invalid-params", message: e.message })
          )
        )
        // plan mode: only read-only tools run (a denial the model reads)
        yield* ToolRuntime.onPreExecute((input, next) =>
          Effect.flatMap(Ref.get(mode), (m) =>
            m === "plan" && !READ_ONLY.has(input.name)
              ? Effect.succeed(ToolHooks.PreExecuteDecision.Deny({
                reason: `plan mode allows only read-only tools (read, ls, glob, grep); "${input.name}" was not run`
              }))
              : next()), { agentId: agent.id }).pipe(Scope.provide(scope))
        return { agent, scope, model } satisfies Live
      })

    const register = (session: Session) =>
      Effect.gen(function*() {
        const live = yield* Ref.get(session.live)
        yield* options.approvals.register(session.id, asker(session)).pipe(Scope.provide(live.scope))
        // a tool body starting: `in_progress` (the call's `tool_call` was queued when it was logged)
        yield* ToolRuntime.onExecute((input, next) =>
          Effect.andThen(
            Effect.flatMap(Ref.get(session.turn), (q) => q === undefined ? Effect.void : Queue.offer(q, { _tag: "Started", callId: input.callId })),
            next()
          ), { agentId: session.id }).pipe(Scope.provide(live.scope))
        yield* Ref.update(sessions, (map) => new Map([...map, [session.id, session]]))
      })

    const sessionState = (session: Session) =>
      Effect.gen(function*() {
        const live = yield* Ref.get(session.live)
        return {
          modes: { currentModeId: yield* Ref.get(session.mode), availableModes: [...modes] },
          configOptions: [{
            id: "model",
            name: "Model",
            category: "model",
            type: "select" as const,
            currentValue: live.model,
            options: models.map((m) => ({ value: m, name: m }))
          }]
        }
      })

    const checkCwd = (cwd: string) =>
      NodePath.resolve(cwd) === NodePath.resolve(options.cwd)
        ? Effect.void
        : Effect.fail(new AcpError({ reason: "invalid-params", message: `this agent serves ${options.cwd}; start it in ${cwd} for that workspace` }))

    const open = (client: Acp.AgentContext, choice: Agent.SessionChoice) =>
      Effect.gen(function*() {
        const mode = yield* Ref.make<Mode>("default")
        const live = yield* openAgent(choice, options.model, mode)
        const session: Session = {
          id: live.agent.id,
          client,
          mode,
          live: yield* Ref.make(live),
          running: yield* Ref.make(false),
          turn: yield* Ref.make<Queue.Queue<Item> | undefined>(undefined)
        }
        yield* register(session)
        return session
      })

    const prompt = (params: Acp.PromptRequest) =>
      Effect.gen(function*() {
        const session = yield* find(params.sessionId)
        const busy = yield* Ref.getAndSet(session.running, true)
        if (busy) return yield* new AcpError({ reason: "invalid-request", message: "a prompt is already running in this session" })
        return yield* Effect.ensuring(runTurn(session, params.prompt), Ref.set(session.running, false))
      })

    const runTurn = (session: Session, blocks: ReadonlyArray<Acp.ContentBlock>) =>
      Effect.scoped(Effect.gen(function*() {
        const { agent } = yield* Ref.get(session.live)
        const queue = yield* Queue.unbounded<Item>()
        const ended = yield* Ref.make<TurnEndReason | undefined>(undefined)
        yield* Effect.acquireRelease(Ref.set(session.turn, queue), () => Ref.set(session.turn, undefined))
        yield* agent.session.observe((event) => Queue.offer(queue, event))
        // one fiber forwards the updates in log order; the turn's end closes it
        const forward: Effect.Effect<void> = Effect.flatMap(Queue.take(queue), (item) => {
          if (item === "idle") return Effect.void
          const updates: ReadonlyArray<Acp.SessionUpdate> = "_tag" in item
            ? [{ sessionUpdate: "tool_call_update", toolCallId: item.callId, status: "in_progress" }]
            : AcpUpdates.live(item)
          const sent = Effect.forEach(updates, (u) => notify(session.client, session.id, u), { discard: true })
          return Effect.andThen(
            !("_tag" in item) && item.type === "turn/end" ? Effect.andThen(Ref.set(ended, item.data.reason), sent) : sent,
            forward
          )
        })
        const forwarder = yield* Effect.forkScoped(forward)
        yield* agent.send([ContentBlock.text(AcpUpdates.promptText(blocks))]).pipe(
          Effect.mapError((e) => new AcpError({ reason: "invalid-params", message: e.message }))
        )
        yield* agent.whenIdle
        yield* Queue.offer(queue, "idle")
        yield* Fiber.await(forwarder)
        const reason = yield* Ref.get(ended)
        const stop = stopReasonOf(reason)
        if (stop === undefined) {
          const message = reason?.kind === "error" ? `${reason.code === undefined ? "" : `${reason.code}: `}${reason.message}` : "the turn failed"
          return yield* new AcpError({ reason: "turn-failed", message })
        }
        return { stopReason: stop }
      }))

    const reopenOnModel = (session: Session, model: string) =>
      Effect.gen(function*() {
        if (yield* Ref.get(session.running)) {
          return yield* new AcpError({ reason: "invalid-request", message: "the model can change between prompts, not while one runs" })
        }
        const old = yield* Ref.get(session.live)
        if (old.model === model) return
        yield* Scope.close(old.scope, Exit.void)
        const live = yield* openAgent({ _tag: "Resume", id: session.id }, model, session.mode)
        yield* Ref.set(session.live, live)
        yield* register(session)
      })

    const app = Acp.agent({ name: options.agentInfo.name })
      .onRequest("initialize", () => ({
        protocolVersion: Acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true }
        },
        agentInfo: { name: options.agentInfo.name, version: options.agentInfo.version },
        authMethods: []
      }))
      .onRequest("session/new", ({ client, params }) =>
        handle(Effect.gen(function*() {
          yield* checkCwd(params.cwd)
          const session = yield* open(client, { _tag: "New", cwd: options.cwd })
          return { sessionId: session.id, ...(yield* sessionState(session)) }
        })))
      .onRequest("session/load", ({ client, params }) =>
        handle(Effect.gen(function*() {
          yield* checkCwd(params.cwd)
          const existing = (yield* Ref.get(sessions)).get(params.sessionId)
          const session = existing ?? (yield* open(client, { _tag: "Resume", id: params.sessionId }))
          const { agent } = yield* Ref.get(session.live)
          const events = yield* agent.session.events.pipe(
            Effect.mapError((e) => new AcpError({ reason: "not-found", message: e.message }))
          )
          for (const update of AcpUpdates.replay(events)) yield* notify(client, session.id, update)
          return yield* sessionState(session)
        })))
      .onRequest("session/prompt", ({ params }) => handle(prompt(params)))
      .onNotification("session/cancel", ({ params }) =>
        // a notification has no answer: a cancel for an unknown session is reported on the log
        handle(find(params.sessionId).pipe(
          Effect.flatMap((s) => Ref.get(s.live)),
          Effect.flatMap((live) => live.agent.cancel("cancelled by the editor")),
          Effect.catch((e) => Effect.logWarning(`acp: session/cancel: ${e.message}`))
        )))
      .onRequest("session/set_mode", ({ params }) =>
        handle(Effect.gen(function*() {
          const session = yield* find(params.sessionId)
          const mode = modes.find((m) => m.id === params.modeId)
          if (mode === undefined) {
            return yield* new AcpError({ reason: "invalid-params", message: `unknown mode ${params.modeId} (${modes.map((m) => m.id).join(", ")})` })
          }
          yield* Ref.set(session.mode, mode.id)
          yield* notify(session.client, session.id, { sessionUpdate: "current_mode_update", currentModeId: mode.id })
          return {}
        })))
      .onRequest("session/set_config_option", ({ params }) =>
        handle(Effect.gen(function*() {
          const session = yield* find(params.sessionId)
          if (params.configId !== "model" || !("value" in params) || typeof params.value !== "string") {
            return yield* new AcpError({ reason: "invalid-params", message: `unknown option ${params.configId} (model)` })
          }
          if (!models.includes(params.value)) {
            return yield* new AcpError({ reason: "invalid-params", message: `unknown model ${params.value} (${models.join(", ")})` })
          }
          yield* reopenOnModel(session, params.value)
          return { configOptions: (yield* sessionState(session)).configOptions }
        })))
    const connection = app.connect(stream)
    yield* Effect.addFinalizer(() => Effect.sync(() => connection.close()))
    yield* Effect.promise(() => connection.closed)
  })
