/**
 * The command-hook bridge (HB-3..HB-11): Claude Code / Codex command hooks from the settings files,
 * run as child processes at the loop's existing interception points (H-1). The bridge is an
 * ordinary listener: it can do nothing a native listener cannot.
 *
 * | event | point | effect |
 * |---|---|---|
 * | `SessionStart` | `session-start` | context → `inject` |
 * | `UserPromptSubmit` | `prompt-submit` | block, context |
 * | `PreToolUse` | tool `pre-execute` (+ `execute` for `updatedInput`) | allow / ask / deny (can only tighten), `updatedInput` |
 * | `PostToolUse`, `PostToolUseFailure` | tool `post-execute` | block with feedback, context, `updatedToolOutput` |
 * | `Stop` | `turn-continuation` (when the turn is about to stop) | block = continue with the reason as steering |
 * | `SessionEnd` | `disposed` | notify only |
 *
 * `continue:false` from any event ends the turn with `hook-stopped` at the next continuation
 * decision (a PreToolUse call is denied meanwhile; a UserPromptSubmit prompt is blocked).
 *
 * Logging (HB-11): per run, `hook/invoked` for every matching handler (configuration order), then
 * after all finished `hook/result` for each (configuration order: deterministic whatever the
 * timing), then `hook/decision` with the merged decision. SessionStart and SessionEnd run outside
 * any turn and are not logged (the log keeps every event inside a turn); their context is injected. `updatedInput` / `updatedToolOutput`
 * are logged as `tool/input-updated` / `tool/output-updated` citing the handler. Added context is
 * a `context/message` with the source `{kind: "plugin", plugin: "hooks"}`.
 *
 * Stop-loop guard (HB-10): the number of consecutive blocking Stop runs is read from the log
 * (`hook/decision` events of the turn, reset by a `tool/result`); when it reaches the limit
 * (default 8, `stopHookLimit`) the turn ends with `hook-loop`.
 *
 * [DECISION] (0008) A PreToolUse `allow` does not skip the permission rules: the bridge delegates
 * first and only tightens (deny > ask > allow), like every other policy listener here.
 * `PreCompact` / `PostCompact` are accepted in settings but not fired yet (no compaction points in
 * this tree).
 *
 * Environment (issue 26): hooks from the workspace's own files (`project`, installed only after the
 * user approved the workspace, see `Workspace/WorkspaceTrust`) run with the allowlisted environment
 * of the `bash` tool (`Tools/internal/ChildEnv`, plus `EFFECT_HARNESS_PASS_ENV`) and the hook
 * protocol's variables: no `GITHUB_TOKEN`, no cloud credentials. Hooks from the user's own files
 * keep the harness's environment (minus the provider keys, removed at start-up).
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as ContentBlock from "../Llm/ContentBlock.js"
import type { Json } from "../Llm/Json.js"
import * as GenAi from "../Llm/GenAi.js"
import type { MessageSource } from "../Llm/Message.js"
import type { HookContext } from "../Loop/HookContext.js"
import * as Hooks from "../Loop/Hooks.js"
import * as StepSignal from "../Loop/StepSignal.js"
import type * as Tool from "../Loop/Tool.js"
import * as ToolHooks from "../Loop/ToolHooks.js"
import * as ToolPipeline from "../Loop/ToolPipeline.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import type { SessionEvent } from "../Session/SessionEvent.js"
import * as SessionPersistence from "../Session/SessionPersistence.js"
import * as SessionStore from "../Session/SessionStore.js"
import * as AgentSessions from "../Workspace/AgentSessions.js"
import * as Bash from "../Tools/Bash.js"
import * as ChildEnv from "../Tools/internal/ChildEnv.js"
import type * as Settings from "../Workspace/Settings.js"
import type { PermissionMode } from "../Workspace/SettingsFile.js"
import * as Notice from "../Tools/Notice.js"
import * as HookOutcome from "./HookOutcome.js"
import * as HookProcess from "./HookProcess.js"
import * as Matcher from "./Matcher.js"
import * as ScriptGuard from "./ScriptGuard.js"

declare module "../Session/SessionEvent.js" {
  interface SessionEventMap {
    readonly "hook/invoked": {
      readonly turn?: number
      readonly event: string
      readonly dialect: string
      readonly matcher?: string
      readonly handlerId: string
    }
    readonly "hook/result": {
      readonly turn?: number
      readonly event: string
      readonly handlerId: string
      readonly decision: HookOutcome.Decision
      readonly exitCode?: number
      readonly stderrSummary?: string
      readonly durationMs: number
    }
    readonly "hook/decision": {
      readonly turn?: number
      readonly event: string
      readonly decision: HookOutcome.Decision
      readonly reason?: string
    }
    readonly "tool/input-updated": {
      readonly turn: number
      readonly step: number
      readonly callId: string
      readonly tool: string
      readonly original: Json
      readonly updated: Json
      readonly handlerId: string
    }
    readonly "tool/output-updated": {
      readonly turn: number
      readonly step: number
      readonly callId: string
      readonly tool: string
      readonly original: ReadonlyArray<ContentBlock.ContentBlock>
      readonly updated: Json
      readonly handlerId: string
    }
  }
  interface TurnEndReasonMap {
    readonly "hook-stopped": { readonly kind: "hook-stopped"; readonly reason: string }
    readonly "hook-loop": { readonly kind: "hook-loop"; readonly blocks: number }
  }
}

/**
 * The source of everything the bridge adds to the log.
 *
 * @since 0.1.0
 * @category constants
 */
export const source: MessageSource = { kind: "plugin", plugin: "hooks" }

/**
 * The default number of consecutive Stop blocks before the turn ends with `hook-loop`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_STOP_LIMIT = 8

/**
 * Options of the bridge.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** workspace root (`CLAUDE_PROJECT_DIR`, the hooks' working directory) */
  readonly cwd: string
  readonly settings: Settings.Loaded
  readonly permissionMode: PermissionMode
  /** shows a line to the user (default: stderr) */
  readonly notice?: (line: string) => Effect.Effect<void>
  /** SIGTERM → SIGKILL grace for killed hooks (ms) */
  readonly graceMs?: number
}

interface Handler {
  readonly entry: Settings.HookEntry
  readonly matcher: Matcher.Matcher
}

const withKey = (env: Readonly<Record<string, string>>, key: string | undefined): Readonly<Record<string, string>> =>
  key === undefined ? env : { ...env, HARNESS_IDEMPOTENCY_KEY: key }

interface Fire {
  readonly event: string
  /** tool name, source or trigger; undefined for events that ignore the matcher */
  readonly subject?: string
  readonly agent: Hooks.HookAgent | undefined
  readonly turn?: number
  readonly payload: Record<string, Json>
  /** a tool event's call key, as `HARNESS_IDEMPOTENCY_KEY` in the command's environment (DEC-16) */
  readonly idempotencyKey?: string
  /** `false` outside a turn (SessionStart, SessionEnd): the log keeps every event inside a turn */
  readonly log?: boolean
}

const textOf = (content: ReadonlyArray<ContentBlock.ContentBlock>): string =>
  content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n")

const context = (event: string, text: string): HookContext => ({
  content: [ContentBlock.text(`${event} hook additional context:\n${text}`)],
  source
})

const summary = (text: string): string | undefined => {
  const t = text.trim()
  return t === "" ? undefined : t.length > 500 ? `${t.slice(0, 499)}…` : t
}

/**
 * Consecutive blocking Stop runs at the end of the current turn's log (reset by a tool result).
 *
 * @since 0.1.0
 * @category utils
 */
export const consecutiveStopBlocks = (events: ReadonlyArray<SessionEvent>): number => {
  let count = 0
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    if (e === undefined || e.type === "turn/start" || e.type === "tool/result") break
    if (e.type === "hook/decision" && e.data.event === "Stop") {
      if (e.data.decision === "block") count++
      else break
    }
  }
  return count
}

const lastAssistantText = (events: ReadonlyArray<SessionEvent>): string => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    if (e?.type === "assistant/message") return textOf(e.data.content)
    if (e?.type === "turn/start") break
  }
  return ""
}

const normalizeOutput = (output: unknown): Tool.ToolExecutionResult => {
  if (Array.isArray(output)) return { content: output as ReadonlyArray<ContentBlock.ContentBlock>, isError: false }
  if (typeof output === "object" && output !== null && Array.isArray((output as { content?: unknown }).content)) {
    const o = output as { content: ReadonlyArray<ContentBlock.ContentBlock>; meta?: Json }
    return o.meta === undefined ? { content: o.content, isError: false } : { content: o.content, isError: false, meta: o.meta }
  }
  return ToolPipeline.errorResult("tool returned an invalid result (expected content blocks)")
}

/** The bridge's state and its one way to run an event's handlers, shared by the points it listens on. */
interface Runner {
  readonly notice: (line: string) => Effect.Effect<void>
  readonly limit: number
  readonly pendingStop: Ref.Ref<Map<string, string>>
  readonly rewrites: Ref.Ref<Map<string, { readonly value: Json; readonly handlerId: string }>>
  readonly append: (
    agent: Hooks.HookAgent | undefined,
    inputs: ReadonlyArray<Parameters<Hooks.HookAgent["session"]["append"]>[0]>
  ) => Effect.Effect<void>
  readonly fire: (f: Fire) => Effect.Effect<{ readonly merged: HookOutcome.Merged; readonly ids: ReadonlyArray<string> }>
  readonly markStop: (agentId: string, reason: string) => Effect.Effect<void>
  readonly agentOf: (id: string) => Effect.Effect<Hooks.HookAgent | undefined>
}

/** Compiles the handlers, guards the project hooks' scripts, prepares their environments and `fire`. */
const makeRunner = (options: Options) =>
  Effect.gen(function*() {
    const sessions = yield* AgentSessions.AgentSessions
    const store = yield* SessionStore.SessionStore
    const persistence = yield* Effect.serviceOption(SessionPersistence.SessionPersistence)
    const notice = options.notice ?? (yield* Notice.Notice)
    const limit = options.settings.stopHookLimit ?? DEFAULT_STOP_LIMIT
    const handlers: Array<Handler> = options.settings.hooks.map((entry) => ({
      entry,
      matcher: Matcher.compile(entry.matcher, entry.dialect)
    }))
    for (const h of handlers) {
      if (h.matcher.warning !== undefined) yield* notice(`${h.entry.id}: ${h.matcher.warning}`)
    }
    // a project hook runs only while the scripts it names are the approved ones (issue 26)
    const fs = yield* FileSystem.FileSystem
    const guards = new Map<string, Effect.Effect<boolean>>()
    for (const h of handlers) {
      if (h.entry.project !== true) continue
      const check = yield* ScriptGuard.make(h.entry.command, options.cwd)
      guards.set(h.entry.id, Effect.provideService(check, FileSystem.FileSystem, fs))
    }
    const unchanged = (entry: Settings.HookEntry) => guards.get(entry.id) ?? Effect.succeed(true)
    const changedScript = (entry: Settings.HookEntry): Effect.Effect<HookProcess.Raw> =>
      Effect.as(notice(`${entry.id}: not run: a file its command names changed since the workspace was approved`), {
        exitCode: null,
        stdout: "",
        stderr: "",
        timedOut: false,
        spawnError: "a file its command names changed since the workspace was approved",
        durationMs: 0
      })
    const pendingStop = yield* Ref.make(new Map<string, string>())
    const rewrites = yield* Ref.make(new Map<string, { readonly value: Json; readonly handlerId: string }>())
    const baseEnv: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) baseEnv[k] = v
    const protocol = { CLAUDE_PROJECT_DIR: options.cwd, EFFECT_HARNESS_PROJECT_DIR: options.cwd }
    const userEnv = { ...baseEnv, ...protocol }
    const projectEnv = { ...ChildEnv.build(process.env, Bash.passEnvFromEnvironment()), ...protocol }

    const append = (agent: Hooks.HookAgent | undefined, inputs: ReadonlyArray<Parameters<Hooks.HookAgent["session"]["append"]>[0]>) =>
      agent === undefined || inputs.length === 0
        ? Effect.void
        : agent.session.appendAll(inputs).pipe(
          Effect.asVoid,
          Effect.catch((e) => notice(`cannot log hook events: ${e.message}`))
        )

    const matching = (fire: Fire): ReadonlyArray<Handler> => {
      const seen = new Set<string>()
      return handlers.filter((h) => {
        if (h.entry.event !== fire.event) return false
        if (fire.subject !== undefined) {
          const subjects = fire.event === "PreToolUse" || fire.event === "PostToolUse" || fire.event === "PostToolUseFailure"
            ? Matcher.toolSubjects(fire.subject, h.entry.dialect)
            : [fire.subject]
          if (!h.matcher.test(subjects)) return false
        }
        if (seen.has(h.entry.command)) return false
        seen.add(h.entry.command)
        return true
      })
    }

    /** Runs every matching handler of an event concurrently; logs in configuration order. */
    const fire = (f: Fire): Effect.Effect<{ readonly merged: HookOutcome.Merged; readonly ids: ReadonlyArray<string> }> =>
      Effect.gen(function*() {
        const chosen = matching(f)
        if (chosen.length === 0) return { merged: HookOutcome.merge([]), ids: [] }
        const agent = f.agent
        const logTo = f.log === false ? undefined : agent
        let transcript = ""
        if (agent !== undefined) {
          yield* Effect.ignore(store.flush(agent.session.id))
          const located = Option.isSome(persistence) ? persistence.value.locate(agent.session.header) : undefined
          transcript = located?.path ?? ""
        }
        const turnField = f.turn === undefined ? {} : { turn: f.turn }
        const common: Record<string, Json> = {
          session_id: agent?.session.id ?? "",
          transcript_path: transcript,
          cwd: options.cwd,
          hook_event_name: f.event,
          permission_mode: options.permissionMode,
          prompt_id: agent === undefined || f.turn === undefined ? "" : `${agent.session.id}:${f.turn}`
        }
        // the Claude dialect sees built-in tools under their Claude Code names (`Bash`, `Edit`, …)
        const stdinFor = (dialect: string): string => {
          const name = f.payload["tool_name"]
          const alias = typeof name === "string" && dialect === "claude" ? Matcher.claudeNames[name] : undefined
          return JSON.stringify({ ...common, ...f.payload, ...(alias === undefined ? {} : { tool_name: alias }) })
        }
        yield* append(logTo, chosen.map((h) => ({
          type: "hook/invoked" as const,
          data: {
            ...turnField,
            event: f.event,
            dialect: h.entry.dialect,
            ...(h.entry.matcher === undefined ? {} : { matcher: h.entry.matcher }),
            handlerId: h.entry.id
          }
        })))
        const raws = yield* Effect.forEach(
          chosen,
          (h) =>
            Effect.flatMap(unchanged(h.entry), (ok) => !ok ? changedScript(h.entry) : HookProcess.run({
              command: h.entry.command,
              cwd: options.cwd,
              env: withKey(h.entry.project === true ? projectEnv : userEnv, f.idempotencyKey),
              stdin: stdinFor(h.entry.dialect),
              timeoutMs: (h.entry.timeout ?? (f.event === "UserPromptSubmit" ? 30 : 600)) * 1000,
              ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs })
            }).pipe(
              // one span per command run (never its command line: it may hold a token)
              Effect.tap((raw) =>
                raw.exitCode === null ? Effect.void : Effect.annotateCurrentSpan(GenAi.Attr.hookExitCode, raw.exitCode)
              ),
              Effect.withSpan(GenAi.SpanName.hookCommand(f.event), {
                kind: "internal",
                attributes: {
                  [GenAi.Attr.hookEvent]: f.event,
                  [GenAi.Attr.hookHandler]: h.entry.id,
                  ...(agent === undefined ? {} : { [GenAi.Attr.conversationId]: agent.session.id }),
                  ...(f.turn === undefined ? {} : { [GenAi.Attr.turn]: f.turn })
                }
              })
            )),
          { concurrency: "unbounded" }
        )
        const outcomes = chosen.map((h, i) => HookOutcome.interpret(f.event, raws[i]!, h.entry.onFailure, h.entry.id))
        const merged = HookOutcome.merge(outcomes)
        yield* append(logTo, [
          ...chosen.map((h, i) => {
            const raw = raws[i]!
            const stderrSummary = summary(raw.stderr)
            return {
              type: "hook/result" as const,
              data: {
                ...turnField,
                event: f.event,
                handlerId: h.entry.id,
                decision: outcomes[i]!.decision,
                ...(raw.exitCode === null ? {} : { exitCode: raw.exitCode }),
                ...(stderrSummary === undefined ? {} : { stderrSummary }),
                durationMs: raw.durationMs
              }
            }
          }),
          {
            type: "hook/decision" as const,
            data: {
              ...turnField,
              event: f.event,
              decision: merged.decision,
              ...(merged.reason === undefined ? {} : { reason: merged.reason })
            }
          }
        ])
        for (const o of outcomes) for (const n of o.notices) yield* notice(n)
        return { merged, ids: chosen.map((h) => h.entry.id) }
      })

    const markStop = (agentId: string, reason: string) => Ref.update(pendingStop, (m) => new Map(m).set(agentId, reason))
    const agentOf = (id: string) => sessions.get(id)
    const runner: Runner = { notice, limit, pendingStop, rewrites, append, fire, markStop, agentOf }
    return runner
  })

/** SessionStart and SessionEnd. */
const onSession = (r: Runner) =>
  Effect.gen(function*() {
    const hooks = yield* Hooks.LoopHooks
    const { fire } = r
    // SessionStart
    yield* hooks.sessionStart.register(({ agent, source: origin }) =>
      Effect.gen(function*() {
        const { merged } = yield* fire({
          event: "SessionStart",
          subject: origin,
          agent,
          payload: { source: origin, model: agent.options.model ?? "" },
          log: false
        })
        for (const c of merged.contexts) yield* Effect.ignore(agent.inject(context("SessionStart", c).content, { source }))
      })
    )

    // SessionEnd
    yield* hooks.disposed.register(({ agent }) =>
      Effect.asVoid(fire({ event: "SessionEnd", agent, payload: { reason: "exit" }, log: false }))
    )
  })

/** UserPromptSubmit: block, or add contexts after the prompt. */
const onPromptSubmit = (r: Runner) =>
  Effect.gen(function*() {
    const hooks = yield* Hooks.LoopHooks
    const { fire, pendingStop } = r
    // UserPromptSubmit
    yield* hooks.promptSubmit.register((input, next) =>
      Effect.gen(function*() {
        yield* Ref.update(pendingStop, (m) => {
          const n = new Map(m)
          n.delete(input.agent.id)
          return n
        })
        const { merged } = yield* fire({
          event: "UserPromptSubmit",
          agent: input.agent,
          turn: input.turn,
          payload: { prompt: textOf(input.content) }
        })
        if (merged.stop !== undefined) return Hooks.PromptDecision.Block({ reason: merged.stop })
        if (merged.decision === "block") return Hooks.PromptDecision.Block({ reason: merged.reason ?? "blocked by a hook" })
        const downstream = yield* next()
        if (downstream._tag !== "Allow" || merged.contexts.length === 0) return downstream
        return Hooks.PromptDecision.Allow({
          ...(downstream.content === undefined ? {} : { content: downstream.content }),
          additionalContexts: [...(downstream.additionalContexts ?? []), ...merged.contexts.map((c) => context("UserPromptSubmit", c))]
        })
      })
    )
  })

/** PreToolUse: deny, ask, or rewrite the input the permission rules then judge. */
const onPreToolUse = (r: Runner) =>
  Effect.gen(function*() {
    const rt = yield* ToolRuntime.ToolRuntime
    const { fire, agentOf, markStop, rewrites } = r
    // PreToolUse
    yield* rt.hooks.preExecute.register((input, next) =>
        Effect.gen(function*() {
          const agent = yield* agentOf(input.agent.id)
          const { ids, merged } = yield* fire({
            event: "PreToolUse",
            subject: input.name,
            agent,
            turn: input.turn,
            idempotencyKey: input.idempotencyKey,
            payload: { tool_name: input.name, tool_input: input.arguments, tool_use_id: input.callId }
          })
          if (merged.stop !== undefined) {
            yield* markStop(input.agent.id, merged.stop)
            return ToolHooks.PreExecuteDecision.Deny({ reason: `stopped by a hook: ${merged.stop}` })
          }
          if (merged.decision === "deny") return ToolHooks.PreExecuteDecision.Deny({ reason: merged.reason ?? "denied by a hook" })
          const rewritten = merged.updatedInput
          const downstream = yield* next(rewritten === undefined ? input : { ...input, arguments: rewritten.value })
          if (downstream._tag === "Deny") return downstream
          if (rewritten !== undefined) {
            const handlerId = ids[rewritten.index] ?? "hook"
            const value = rewritten.value
            yield* Ref.update(rewrites, (m) => new Map(m).set(`${input.agent.id}\u0000${input.callId}`, { value, handlerId }))
          }
          if (merged.decision === "ask" && downstream._tag === "Allow") {
            return ToolHooks.PreExecuteDecision.Ask({ reason: merged.reason ?? "a hook asks before running this call" })
          }
          return downstream
        })
    )
  })

/** A PreToolUse `updatedInput`: the tool runs with the rewritten input (validated by the tool itself). */
const onRewrittenInput = (r: Runner) =>
  Effect.gen(function*() {
    const rt = yield* ToolRuntime.ToolRuntime
    const { append, agentOf, rewrites } = r
    // updatedInput: run the tool with the rewritten input (validated by the tool itself)
    yield* rt.hooks.execute.register((input, next) =>
      Effect.gen(function*() {
        const key = `${input.agent.id}\u0000${input.callId}`
        const rewrite = yield* Ref.modify(rewrites, (m) => {
          const found = m.get(key)
          if (found === undefined) return [undefined, m]
          const n = new Map(m)
          n.delete(key)
          return [found, n]
        })
        if (rewrite === undefined || Option.isNone(input.tool)) return yield* next()
        const tool = input.tool.value
        const agent = yield* agentOf(input.agent.id)
        yield* append(agent, [{
          type: "tool/input-updated",
          data: {
            turn: input.turn,
            step: input.step,
            callId: input.callId,
            tool: input.name,
            original: input.arguments,
            updated: rewrite.value,
            handlerId: rewrite.handlerId
          }
        }])
        const deferred: Array<HookContext> = []
        const ctx: Tool.ToolRunContext = {
          callId: input.callId,
          name: input.name,
          idempotencyKey: input.idempotencyKey,
          agent: input.agent,
          signal: input.signal,
          deferContext: (c) => Effect.sync(() => void deferred.push(c))
        }
        const body = StepSignal.interruptible(input.signal, Effect.suspend(() => tool.execute(rewrite.value, ctx)))
        const timeoutMs = tool.timeoutMs
        const exit = yield* Effect.exit(
          timeoutMs === undefined
            ? Effect.map(body, (o) => ({ o }))
            : Effect.timeoutOrElse(Effect.map(body, (o) => ({ o })), {
              duration: timeoutMs,
              orElse: () => Effect.succeed(undefined)
            })
        )
        let result: Tool.ToolExecutionResult
        if (Exit.isSuccess(exit) && exit.value === undefined) {
          result = ToolPipeline.timeoutResult(timeoutMs ?? 0)
        } else if (Exit.isFailure(exit)) {
          result = Cause.hasInterruptsOnly(exit.cause) ? ToolPipeline.errorResult("tool call was interrupted") : ToolPipeline.failureResult(exit.cause)
        } else if (exit.value === undefined || Option.isNone(exit.value.o)) {
          const reason = yield* StepSignal.reason(input.signal)
          result = ToolPipeline.abortedResult(Option.getOrElse(reason, () => ({ _tag: "Cancelled", reason: "cancelled" }) as const))
        } else {
          result = normalizeOutput(exit.value.o.value)
        }
        const note = ContentBlock.text(
          `[a PreToolUse hook rewrote this call's input to ${JSON.stringify(rewrite.value)}]`
        )
        const withNote: Tool.ToolExecutionResult = { ...result, content: [note, ...result.content] }
        return deferred.length === 0 ? withNote : { ...withNote, additionalContexts: [...deferred, ...(result.additionalContexts ?? [])] }
      })
    )
  })

/** PostToolUse / PostToolUseFailure: feedback, contexts, a rewritten output. */
const onPostToolUse = (r: Runner) =>
  Effect.gen(function*() {
    const rt = yield* ToolRuntime.ToolRuntime
    const { fire, append, agentOf, markStop } = r
    // PostToolUse / PostToolUseFailure
    yield* rt.hooks.postExecute.register((input, next) =>
      Effect.gen(function*() {
        const downstream = yield* next()
        const agent = yield* agentOf(input.agent.id)
        const failed = input.result.isError
        const event = failed ? "PostToolUseFailure" : "PostToolUse"
        const responseText = textOf(input.result.content)
        const { ids, merged } = yield* fire({
          event,
          subject: input.name,
          agent,
          turn: input.turn,
          idempotencyKey: input.idempotencyKey,
          payload: {
            tool_name: input.name,
            tool_input: input.arguments,
            tool_use_id: input.callId,
            ...(failed ? { error: responseText } : { tool_response: { content: responseText, is_error: false } })
          }
        })
        if (merged.stop !== undefined) yield* markStop(input.agent.id, merged.stop)
        const contexts = merged.contexts.map((c) => context(event, c))
        if (merged.decision === "block") {
          const feedback = [ContentBlock.text(`${event} hook feedback:\n${merged.reason ?? "blocked by a hook"}`)]
          return ToolHooks.PostExecuteDecision.Block({
            feedback: downstream._tag === "Block" ? [...downstream.feedback, ...feedback] : feedback,
            additionalContexts: [...(downstream.additionalContexts ?? []), ...contexts]
          })
        }
        if (downstream._tag === "Block") {
          return contexts.length === 0
            ? downstream
            : ToolHooks.PostExecuteDecision.Block({ ...downstream, additionalContexts: [...(downstream.additionalContexts ?? []), ...contexts] })
        }
        let content = downstream.content
        if (merged.updatedToolOutput !== undefined) {
          const value = merged.updatedToolOutput.value
          const original = downstream.content ?? input.result.content
          yield* append(agent, [{
            type: "tool/output-updated",
            data: {
              turn: input.turn,
              step: input.step,
              callId: input.callId,
              tool: input.name,
              original,
              updated: value,
              handlerId: ids[merged.updatedToolOutput.index] ?? "hook"
            }
          }])
          content = [ContentBlock.text(typeof value === "string" ? value : JSON.stringify(value))]
        }
        const allContexts = [...(downstream.additionalContexts ?? []), ...contexts]
        return ToolHooks.PostExecuteDecision.Accept({
          ...(content === undefined ? {} : { content }),
          ...(allContexts.length === 0 ? {} : { additionalContexts: allContexts })
        })
      })
    )
  })

/** Stop, and the pending `continue: false` of any event. */
const onStop = (r: Runner) =>
  Effect.gen(function*() {
    const hooks = yield* Hooks.LoopHooks
    const { fire, pendingStop, limit, notice } = r
    // Stop, and the pending continue:false of any event
    yield* hooks.turnContinuation.register((input, next) =>
      Effect.gen(function*() {
        const downstream = yield* next()
        const stopped = yield* Ref.modify(pendingStop, (m) => {
          const found = m.get(input.agent.id)
          if (found === undefined) return [undefined, m]
          const n = new Map(m)
          n.delete(input.agent.id)
          return [found, n]
        })
        if (stopped !== undefined) return Hooks.ContinuationDecision.End({ reason: { kind: "hook-stopped", reason: stopped } })
        if (downstream._tag !== "Stop") return downstream
        // this turn's tail only: the held events (never a read of the whole stored log)
        const events = yield* input.agent.session.heldEvents
        const before = consecutiveStopBlocks(events)
        const { merged } = yield* fire({
          event: "Stop",
          agent: input.agent,
          turn: input.turn,
          payload: { stop_hook_active: before > 0, last_assistant_message: lastAssistantText(events) }
        })
        if (merged.stop !== undefined) return Hooks.ContinuationDecision.End({ reason: { kind: "hook-stopped", reason: merged.stop } })
        if (merged.decision !== "block") return downstream
        const blocks = before + 1
        if (blocks >= limit) {
          yield* notice(`Stop hooks blocked ${blocks} times in a row; ending the turn`)
          return Hooks.ContinuationDecision.End({ reason: { kind: "hook-loop", blocks } })
        }
        return Hooks.ContinuationDecision.Continue({
          reason: { content: [ContentBlock.text(`Stop hook feedback:\n${merged.reason ?? "continue"}`)], source }
        })
      })
    )
  })

/**
 * Installs the bridge on the loop and tool points for the scope. Install it BEFORE the permission
 * listener: the bridge's pre-execute runs first and hands a hook's `updatedInput` downstream, so
 * the permission rules judge the call as it will run.
 *
 * @since 0.1.0
 * @category registration
 */
export const install = (
  options: Options
): Effect.Effect<
  void,
  never,
  | Hooks.LoopHooks
  | ToolRuntime.ToolRuntime
  | AgentSessions.AgentSessions
  | SessionStore.SessionStore
  | FileSystem.FileSystem
  | Scope.Scope
> =>
  Effect.gen(function*() {
    const r = yield* makeRunner(options)
    yield* onSession(r)
    yield* onPromptSubmit(r)
    yield* onPreToolUse(r)
    yield* onRewrittenInput(r)
    yield* onPostToolUse(r)
    yield* onStop(r)
  })

/**
 * {@link install} as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  never,
  never,
  Hooks.LoopHooks | ToolRuntime.ToolRuntime | AgentSessions.AgentSessions | SessionStore.SessionStore | FileSystem.FileSystem
> => Layer.effectDiscard(install(options))
