/**
 * The route is part of the session (DEC-16, issue 29): `--resume` and `--continue` read the stored
 * session before the harness is built and restore its provider, model, base URL and working
 * directory from its last `session/route` event (and the header's cwd); a flag that says otherwise
 * wins, with one notice on stderr. The "resume with:" hint names the store when it is not the
 * default, so it works as printed.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Agent from "../Loop/Agent.js"
import type { SessionEventMap } from "../Session/SessionEvent.js"
import * as SessionStore from "../Session/SessionStore.js"
import type { CliError } from "./CliError.js"
import * as CommonOptions from "./CommonOptions.js"
import * as Defaults from "./Defaults.js"
import * as HarnessLayer from "./HarnessLayer.js"
import * as ProviderChoice from "./ProviderChoice.js"
import * as UserErrors from "./sessions/UserErrors.js"

/**
 * A logged route.
 *
 * @since 0.1.0
 * @category models
 */
export type Route = SessionEventMap["session/route"]

/**
 * What a stored session says about where it ran: its id, its last logged route and its cwd.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stored {
  readonly id: string
  readonly route: Route | undefined
  readonly cwd: string | undefined
}

/**
 * The stored session `--resume`/`--continue` name (none for a new session), read through a
 * snapshot of the chosen store (no lock, nothing written).
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (
  common: CommonOptions.Common,
  cwd: string,
  store: { readonly store: "jsonl" | "sqlite"; readonly storePath?: string | undefined }
): Effect.Effect<Option.Option<Stored>, CliError> =>
  Effect.gen(function*() {
    const choice: Agent.SessionChoice = yield* CommonOptions.sessionChoice(common, cwd)
    if (choice._tag !== "Resume") return Option.none()
    const sessions = yield* SessionStore.SessionStore
    const loaded = yield* sessions.snapshot(choice.id).pipe(Effect.mapError(UserErrors.toCli))
    let route: Route | undefined
    for (let i = loaded.events.length - 1; i >= 0 && route === undefined; i--) {
      const e = loaded.events[i]
      if (e !== undefined && e.type === "session/route") route = e.data
    }
    return Option.some({ id: choice.id, route, cwd: loaded.header.cwd })
  }).pipe(Effect.scoped, Effect.provide(Layer.fresh(HarnessLayer.storeLayer(store))))

const isProvider = (name: string): name is ProviderChoice.ProviderName =>
  (ProviderChoice.providers as ReadonlyArray<string>).includes(name)

/**
 * Which route flags the command line itself gives (a settings default is not an override).
 *
 * @since 0.1.0
 * @category models
 */
export interface Explicit {
  readonly provider: boolean
  readonly model: boolean
  readonly baseUrl: boolean
  readonly cwd: boolean
}

/**
 * The flags given on a command line (`argv` without the program), by {@link Defaults.flagValue}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const explicitIn = (argv: ReadonlyArray<string>): Explicit => ({
  provider: Defaults.flagValue(argv, "--provider") !== undefined,
  model: Defaults.flagValue(argv, "--model") !== undefined,
  baseUrl: Defaults.flagValue(argv, "--base-url") !== undefined,
  cwd: Defaults.flagValue(argv, "--cwd") !== undefined
})

/**
 * The flags with the stored route in place of every route flag the command line does not give, the
 * working directory, and one notice per given flag that differs from the logged value.
 *
 * @since 0.1.0
 * @category utils
 */
export const restore = <F extends CommonOptions.Common>(
  flags: F,
  stored: Stored,
  explicit: Explicit
): { readonly flags: F; readonly cwd: string | undefined; readonly notices: ReadonlyArray<string> } => {
  const notices: Array<string> = []
  const pick = <A extends string>(
    name: string,
    given: boolean,
    flag: Option.Option<A>,
    logged: A | undefined
  ): Option.Option<A> => {
    if (!given) return logged === undefined ? Option.none() : Option.some(logged)
    if (logged !== undefined && Option.isSome(flag) && flag.value !== logged) {
      notices.push(`effect-harness: --${name} ${flag.value} overrides the session's ${name} ${logged}`)
    }
    return flag
  }
  const route = stored.route
  if (route === undefined || !isProvider(route.provider)) {
    return { flags, cwd: explicit.cwd ? undefined : stored.cwd, notices }
  }
  const provider = pick("provider", explicit.provider, flags.provider, route.provider)
  // a logged model or base URL belongs to the logged provider: another one starts from its own defaults
  const same = Option.isSome(provider) && provider.value === route.provider
  const model = same ? pick("model", explicit.model, flags.model, route.model) : flags.model
  const baseUrl = same ? pick("base-url", explicit.baseUrl, flags.baseUrl, route.baseUrl) : flags.baseUrl
  let cwd: string | undefined = stored.cwd
  if (explicit.cwd) {
    const wanted = CommonOptions.cwdOf(flags)
    if (stored.cwd !== undefined && wanted !== stored.cwd) {
      notices.push(`effect-harness: --cwd ${wanted} overrides the session's directory ${stored.cwd}`)
    }
    cwd = undefined
  }
  return { flags: { ...flags, provider, model, baseUrl }, cwd, notices }
}

/**
 * For `run` and `chat`: with `--resume`/`--continue`, the flags and working directory restored from
 * the stored session (notices on stderr); otherwise the flags as given and their `--cwd`.
 *
 * @since 0.1.0
 * @category utils
 */
export const restoreFor = <F extends CommonOptions.Common>(
  flags: F,
  argv: ReadonlyArray<string>
): Effect.Effect<{ readonly flags: F; readonly cwd: string }, CliError> =>
  Effect.gen(function*() {
    const cwd = CommonOptions.cwdOf(flags)
    if (Option.isNone(flags.resume) && !flags.continue) return { flags, cwd }
    const stored = yield* read(flags, cwd, { store: flags.store })
    if (Option.isNone(stored)) return { flags, cwd }
    const restored = restore(flags, stored.value, explicitIn(argv))
    for (const notice of restored.notices) yield* Effect.sync(() => void process.stderr.write(`${notice}\n`))
    return { flags: restored.flags, cwd: restored.cwd ?? cwd }
  })

/**
 * The route to log for a run: the provider as the CLI names it, the model, the base URL, the store
 * and the working directory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (choice: ProviderChoice.Choice, store: "jsonl" | "sqlite", cwd: string): Route => ({
  provider: choice._tag === "Scripted" ? "scripted" : choice.provider,
  model: choice.model,
  ...(choice._tag === "Remote" && choice.baseUrl !== undefined ? { baseUrl: choice.baseUrl } : {}),
  store,
  cwd
})

/**
 * The command that resumes a session, as printed after a run: it names the store when it is not
 * the default JSONL one.
 *
 * @since 0.1.0
 * @category utils
 */
export const hint = (command: "run" | "chat", id: string, store: "jsonl" | "sqlite"): string =>
  `resume with: harness ${command} --resume ${id}${store === "jsonl" ? "" : ` --store ${store}`}`
