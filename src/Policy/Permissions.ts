/**
 * The permission engine (HB-12): rules from the settings files plus the permission mode decide,
 * for every tool call, allow / deny / ask, and every decision names the rule that made it.
 *
 * Order: deny rules → `plan` mode (only read-only tools) → protected configuration (a hard ask) →
 * ask rules → an unknowable bash command under a bash deny rule (a hard ask) → allow rules → the
 * mode's default (`default`: `write`/`edit`/`bash` ask, everything else is allowed;
 * `acceptEdits`: `write` and `edit` allowed too; `bypassPermissions`: everything allowed). An
 * `ask` is then resolved by the approval mode of the CLI: `--yes` allows it, no terminal denies it
 * (with a reason the model can read), a terminal asks the user (`Loop/Approval`).
 *
 * Rules see what really runs (issue 26): a bash command is parsed (`ShellParser`, `ShellCommand`)
 * and a file tool's path is resolved by the workspace as the tool will resolve it (links
 * followed). A HARD ask is one that only a person may answer: `write` / `edit` of a protected
 * configuration path (`ProtectedPaths`: `.claude/`, `.mcp.json`, `.git/hooks`, …, on the resolved
 * or the lexical path) whatever the mode, allow rules or `--yes`, and a bash command whose program
 * cannot be known (`$(…)`, `eval`, unparsable) or that runs code it does not show (`sh script`,
 * `… | sh`, `source`) while a bash deny rule exists. Nobody to ask → denied
 * with the reason; "always allow" is never offered for it.
 *
 * Logging (follows how the loop logs approval decisions: the reason travels with the decision and
 * a denial becomes the call's error result) plus one `permission/decision {turn, step, callId,
 * tool, decision, rule, origin, mode}` event per call, appended before the call runs, so allowed
 * calls name their rule too.
 *
 * [DECISION] (0008) `plan` refuses non-read-only tools even when an allow rule matches (plan means
 * "look, do not touch"); `--yes` answers questions but never overrides a deny rule or `plan`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { Json } from "../Llm/Json.js"
import * as ToolHooks from "../Loop/ToolHooks.js"
import * as ToolRuntime from "../Loop/ToolRuntime.js"
import * as ReadFilter from "../Tools/ReadFilter.js"
import * as Workspace from "../Tools/Workspace.js"
import * as Notice from "../Tools/Notice.js"
import * as AgentSessions from "../Workspace/AgentSessions.js"
import * as PermissionRule from "./PermissionRule.js"
import * as ProtectedPaths from "../Tools/ProtectedPaths.js"
import type * as Settings from "../Workspace/Settings.js"
import * as SettingsFile from "../Workspace/SettingsFile.js"
import type * as ShellCommand from "./ShellCommand.js"
import * as ShellParser from "./ShellParser.js"

declare module "../Session/SessionEvent.js" {
  interface SessionEventMap {
    readonly "permission/decision": {
      readonly turn: number
      readonly step: number
      readonly callId: string
      readonly tool: string
      readonly decision: "allow" | "deny" | "ask"
      readonly rule: string
      readonly origin: string
      readonly mode: SettingsFile.PermissionMode
    }
  }
}

/**
 * A decision and the rule that made it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Decision {
  readonly decision: "allow" | "deny" | "ask"
  /** the rule as written (`Bash(rm:*)`), `mode:<mode>`, `--yes` or `no terminal` */
  readonly rule: string
  /** where the rule comes from (a settings file, `session`, `cli`) */
  readonly origin: string
  /** the text the model reads for a denial, or the question for an ask */
  readonly reason: string
  /** an ask only a person may answer: never by `--yes`, a mode or a rule, never "always" */
  readonly hard?: true
}

interface Parsed {
  readonly rule: PermissionRule.Rule
  readonly entry: Settings.RuleEntry
}

/**
 * The engine.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly mode: SettingsFile.PermissionMode
  /** decides a call (before the ask is resolved by the approval mode) */
  readonly decide: (name: string, args: Json) => Effect.Effect<Decision>
  /** decides and resolves an ask with the approval mode */
  readonly resolve: (name: string, args: Json) => Effect.Effect<Decision>
  /** the rule offered for "always allow" at a question about this call (none for a hard ask) */
  readonly suggest: (name: string, args: Json) => Effect.Effect<string | undefined>
  /** `true` when a read-only tool must not show this resolved workspace-relative path (deny rules) */
  readonly hiddenFromReads: (relative: string) => boolean
  /** "always allow": adds `rule` for this session, or also writes it to the project-local settings */
  readonly remember: (rule: string, scope: "session" | "project") => Effect.Effect<void, SettingsFile.SettingsError>
  /** the workspace root */
  readonly cwd: string
}

/**
 * The permission engine tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Permissions extends Context.Service<Permissions, Service>()("effect-harness/Policy/Permissions") {}

/**
 * How an ask is resolved: `auto` allows, `ask` puts it to the host's prompt (`Policy/Approval`), `deny`
 * refuses it.
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalMode = "auto" | "ask" | "deny"

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly cwd: string
  readonly settings: Settings.Loaded
  /** `--permission-mode` (wins over the settings' `defaultMode`) */
  readonly mode?: SettingsFile.PermissionMode | undefined
  /** how an ask is resolved: `--yes` → auto, a terminal → ask, else deny */
  readonly approval: ApprovalMode
  /** runs after an "always for this project" rule was written (re-records the workspace's approval) */
  readonly onProjectWrite?: Effect.Effect<void, never, FileSystem.FileSystem> | undefined
  /** a person can answer a question (default: when `approval` is `ask`); a hard ask needs one */
  readonly canAsk?: boolean | undefined
}

const parseAll = (entries: ReadonlyArray<Settings.RuleEntry>): { parsed: Array<Parsed>; warnings: Array<string> } => {
  const parsed: Array<Parsed> = []
  const warnings: Array<string> = []
  for (const entry of entries) {
    const rule = PermissionRule.parse(entry.text)
    if (rule === undefined) warnings.push(`${entry.origin}: permission rule "${entry.text}" is not understood (ignored)`)
    else parsed.push({ rule, entry })
  }
  return { parsed, warnings }
}

const MUTATING = new Set(["write", "edit", "bash"])

const FILE_TOOLS: ReadonlySet<string> = new Set(["read", "write", "edit", "ls", "glob", "grep"])

/**
 * The pure decision of HB-12 (before resolving an ask), knowing what the call really does
 * (`facts`: the analysed bash command, the resolved path).
 *
 * @since 0.1.0
 * @category utils
 */
export const decideWith = (
  rules: ReadonlyArray<Parsed>,
  mode: SettingsFile.PermissionMode,
  cwd: string,
  name: string,
  args: Json,
  facts?: PermissionRule.Facts
): Decision => {
  const named = (p: Parsed, decision: Decision["decision"], reason: string): Decision => ({
    decision,
    rule: p.entry.text,
    origin: p.entry.origin,
    reason
  })
  const restricting = (kind: Settings.RuleEntry["kind"]) =>
    rules.find((p) => p.entry.kind === kind && PermissionRule.matches(p.rule, name, args, cwd, "restrict", facts))
  const deny = restricting("deny")
  if (deny !== undefined) {
    return named(deny, "deny", `denied by the permission rule "${deny.entry.text}" (${deny.entry.origin}); the call was not run`)
  }
  if (mode === "plan" && !PermissionRule.READ_ONLY_TOOLS.has(name)) {
    return {
      decision: "deny",
      rule: "mode:plan",
      origin: "mode",
      reason: `plan mode allows only read-only tools (read, ls, glob, grep); "${name}" was not run`
    }
  }
  const protectedPath = PermissionRule.EDIT_TOOLS.has(name) ? protectedTarget(cwd, args, facts) : undefined
  if (protectedPath !== undefined) {
    return {
      decision: "ask",
      rule: "protected-path",
      origin: "harness",
      reason: `${protectedPath} is harness or git configuration that can run code outside the sandbox; ` +
        `only a person may approve writing it`,
      hard: true
    }
  }
  const ask = restricting("ask")
  if (ask !== undefined) return named(ask, "ask", `the permission rule "${ask.entry.text}" asks before running`)
  const shell = facts?.shell
  if (name === "bash" && shell !== undefined && (shell.unknowable.length > 0 || shell.opaque.length > 0)) {
    const guard = rules.find((p) => p.entry.kind === "deny" && PermissionRule.coversTool(p.rule, "bash"))
    if (guard !== undefined) return { ...named(guard, "ask", unknowableReason(shell, guard.entry.text)), hard: true }
  }
  const allows = rules.filter((p) => p.entry.kind === "allow")
  const allow = name === "bash"
    ? (() => {
      const bare = allows.find((p) => p.rule.pattern === undefined && PermissionRule.coversTool(p.rule, "bash"))
      if (bare !== undefined) return bare
      if (shell === undefined) return undefined
      const hit = PermissionRule.bashAllowedByAll(allows.filter((p) => PermissionRule.coversTool(p.rule, "bash")).map((p) => p.rule), shell)
      return hit === undefined ? undefined : allows.find((p) => p.rule === hit)
    })()
    : allows.find((p) => PermissionRule.matches(p.rule, name, args, cwd, "allow", facts))
  if (allow !== undefined) return named(allow, "allow", `allowed by the permission rule "${allow.entry.text}"`)
  const byMode = (decision: Decision["decision"], reason: string): Decision => ({
    decision,
    rule: `mode:${mode}`,
    origin: "mode",
    reason
  })
  if (mode === "bypassPermissions") return byMode("allow", "allowed by bypassPermissions mode")
  if (mode === "acceptEdits" && PermissionRule.EDIT_TOOLS.has(name)) return byMode("allow", "allowed by acceptEdits mode")
  if (MUTATING.has(name)) return byMode("ask", `tool "${name}" changes the workspace`)
  return byMode("allow", "allowed by default")
}

const unknowableReason = (shell: ShellCommand.Analysis, rule: string): string =>
  `what this command runs cannot be known (${[...shell.unknowable, ...shell.opaque].join("; ")}), so the permission rule "${rule}" ` +
  `cannot be checked; only a person may approve it`

/** the protected configuration path a write would touch (resolved or lexical), for the question */
const protectedTarget = (cwd: string, args: Json, facts: PermissionRule.Facts | undefined): string | undefined => {
  const hooks = ProtectedPaths.gitHooksPaths(cwd)
  if (facts?.resolved !== undefined && ProtectedPaths.isProtected(facts.resolved, hooks)) return facts.resolved
  const lexical = PermissionRule.lexicalPath(cwd, args)
  return lexical !== undefined && ProtectedPaths.isProtected(lexical, hooks) ? lexical : undefined
}

/**
 * The reason given to the model when a hard ask (see {@link Decision.hard}) has nobody to answer it.
 *
 * @since 0.1.0
 * @category utils
 */
export const hardAskReason = (name: string, reason: string): string =>
  `tool "${name}" needs a person's approval (${reason}), but nobody is there to answer; the call was not run ` +
  `(--yes, permission modes and allow rules do not approve it)`

/**
 * The reason given to the model when an ask cannot be put to anyone.
 *
 * @since 0.1.0
 * @category utils
 */
export const nonInteractiveReason = (name: string, rule: string): string =>
  `tool "${name}" needs the user's approval (${rule}), but this session is not interactive; the call was not run ` +
  `(the user can allow it with --yes or a permission rule)`

/**
 * Appends `rule` to `permissions.allow` of a settings file (created when missing), keeping every
 * other key.
 *
 * @since 0.1.0
 * @category utils
 */
export const writeAllowRule = (
  file: string,
  rule: string
): Effect.Effect<void, SettingsFile.SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const fail = (what: string) => new SettingsFile.SettingsError({ file, message: `${file}: ${what}` })
    const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    let current: Record<string, unknown> = {}
    if (exists) {
      const text = yield* fs.readFileString(file).pipe(Effect.mapError((e) => fail(`cannot read (${e.message})`)))
      const parsed: unknown = yield* Effect.try({ try: () => (text.trim() === "" ? {} : JSON.parse(text)), catch: () => fail("not valid JSON") })
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return yield* fail("settings must be a JSON object")
      current = parsed as Record<string, unknown>
    }
    const permissions = typeof current["permissions"] === "object" && current["permissions"] !== null
      ? current["permissions"] as Record<string, unknown>
      : {}
    const allow = Array.isArray(permissions["allow"]) ? permissions["allow"] as Array<unknown> : []
    if (allow.includes(rule)) return
    const next = { ...current, permissions: { ...permissions, allow: [...allow, rule] } }
    const dir = file.slice(0, file.lastIndexOf("/"))
    yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError((e) => fail(`cannot create (${e.message})`)))
    yield* fs.writeFileString(file, `${JSON.stringify(next, null, 2)}\n`).pipe(
      Effect.mapError((e) => fail(`cannot write (${e.message})`))
    )
  })

/**
 * Builds the engine. Rules that cannot be parsed are reported once on stderr by the caller (they
 * come back in `warnings`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<
  { readonly service: Service; readonly warnings: ReadonlyArray<string> },
  never,
  FileSystem.FileSystem | Path.Path
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { parsed, warnings } = parseAll(options.settings.rules)
    const rules = yield* Ref.make<ReadonlyArray<Parsed>>(parsed)
    const mode = options.mode ?? options.settings.defaultMode ?? "default"
    const canAsk = options.canAsk ?? options.approval === "ask"
    const parser = Option.getOrUndefined(yield* Effect.serviceOption(ShellParser.ShellParser)) ?? (yield* ShellParser.make)
    const given = yield* Effect.serviceOption(Workspace.Workspace)
    // without a workspace (a root that does not exist) path rules see the lexical path only
    const workspace = Option.isSome(given)
      ? given.value
      : Option.getOrUndefined(yield* Effect.option(Workspace.make(options.cwd)))
    const factsOf = (name: string, args: Json): Effect.Effect<PermissionRule.Facts | undefined> => {
      if (name === "bash") {
        const command = PermissionRule.commandOf(args)
        return command === undefined ? Effect.succeed({}) : Effect.map(parser.analyze(command), (shell) => ({ shell }))
      }
      const target = FILE_TOOLS.has(name) ? PermissionRule.pathOf(name, args) : undefined
      if (target === undefined || workspace === undefined) return Effect.succeed(undefined)
      return Effect.map(Effect.option(workspace.resolve(target)), (r) => ({ resolved: Option.getOrUndefined(r)?.relative }))
    }
    const decide = (name: string, args: Json) =>
      Effect.flatMap(factsOf(name, args), (facts) =>
        Effect.map(Ref.get(rules), (rs) => decideWith(rs, mode, options.cwd, name, args, facts)))
    const readDenials = parsed.filter((p) =>
      p.entry.kind === "deny" && p.rule.pattern !== undefined && PermissionRule.coversTool(p.rule, "read")
    )
    const service: Service = {
      mode,
      cwd: options.cwd,
      decide,
      resolve: (name, args) =>
        Effect.map(decide(name, args), (d): Decision => {
          if (d.decision !== "ask") return d
          if (d.hard === true) return canAsk ? d : { ...d, decision: "deny", reason: hardAskReason(name, d.reason) }
          if (options.approval === "auto") return { ...d, decision: "allow", rule: `${d.rule} + --yes`, reason: "allowed by --yes" }
          if (options.approval === "deny") return { ...d, decision: "deny", reason: nonInteractiveReason(name, d.rule) }
          return d
        }),
      suggest: (name, args) =>
        Effect.flatMap(factsOf(name, args), (facts) =>
          Effect.map(Ref.get(rules), (rs) =>
            decideWith(rs, mode, options.cwd, name, args, facts).hard === true
              ? undefined
              : PermissionRule.suggest(name, args, options.cwd, facts?.shell))),
      hiddenFromReads: (relative) =>
        readDenials.some((p) => p.rule.pattern !== undefined && PermissionRule.pathMatches(p.rule.pattern, relative, "restrict")),
      remember: (text, scope) =>
        Effect.gen(function*() {
          const rule = PermissionRule.parse(text)
          if (rule === undefined) return
          const origin = scope === "session" ? "session" : ".effect-harness/settings.local.json"
          if (scope === "project") {
            yield* writeAllowRule(`${options.cwd}/.effect-harness/settings.local.json`, text).pipe(
              Effect.andThen(options.onProjectWrite ?? Effect.void),
              Effect.provideService(FileSystem.FileSystem, fs)
            )
          }
          yield* Ref.update(rules, (rs): ReadonlyArray<Parsed> => [...rs, { rule, entry: { kind: "allow", text, origin } }])
        })
    }
    return { service, warnings }
  })

/**
 * The `pre-execute` listener: delegates first (other policy may only tighten), then applies the
 * engine's resolved decision and logs `permission/decision`.
 *
 * @since 0.1.0
 * @category listeners
 */
export const register = (
  service: Service,
  sessions: AgentSessions.Service
): Effect.Effect<void, never, ToolRuntime.ToolRuntime | Scope.Scope> =>
  ToolRuntime.onPreExecute((input, next) =>
    Effect.gen(function*() {
      const downstream = yield* next()
      const d = yield* service.resolve(input.name, input.arguments)
      yield* AgentSessions.append(sessions, input.agent.id, {
        type: "permission/decision",
        data: {
          turn: input.turn,
          step: input.step,
          callId: input.callId,
          tool: input.name,
          decision: d.decision,
          rule: d.rule,
          origin: d.origin,
          mode: service.mode
        }
      })
      if (downstream._tag === "Deny") return downstream
      if (d.decision === "deny") return ToolHooks.PreExecuteDecision.Deny({ reason: d.reason })
      if (d.decision === "ask" || downstream._tag === "Ask") {
        return ToolHooks.PreExecuteDecision.Ask({ reason: downstream._tag === "Ask" && downstream.reason !== undefined ? downstream.reason : d.reason })
      }
      return downstream
    })
  )

/**
 * Installs the engine's `pre-execute` listener for the scope (after the hook bridge, see
 * `Hooks/Bridge.install`).
 *
 * @since 0.1.0
 * @category registration
 */
export const install: Effect.Effect<
  void,
  never,
  Permissions | AgentSessions.AgentSessions | ToolRuntime.ToolRuntime | Scope.Scope
> = Effect.gen(function*() {
  yield* register(yield* Permissions, yield* AgentSessions.AgentSessions)
})

/**
 * The engine as a layer (rules that are not understood are reported once through `Tools/Notice`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Permissions, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    Permissions,
    Effect.gen(function*() {
      const { service, warnings } = yield* make(options)
      const notice = yield* Notice.Notice
      for (const w of warnings) yield* notice(w)
      return service
    })
  )

/**
 * The engine's deny rules as the read-only tools' {@link ReadFilter.ReadFilter}: `ls`, `glob`,
 * `grep` and `read` never show a path a deny rule covering `read` hides. `Layer.fresh`: Effect 4
 * memoizes layers across `provide` calls, and a filter built on another harness's engine would
 * apply that harness's deny rules.
 *
 * @since 0.1.0
 * @category layers
 */
export const readFilter: Layer.Layer<ReadFilter.ReadFilter, never, Permissions> = Layer.fresh(Layer.effect(
  ReadFilter.ReadFilter,
  Effect.map(Permissions, (engine) => ReadFilter.ReadFilter.of({ hidden: engine.hiddenFromReads }))
))
