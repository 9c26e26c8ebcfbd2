/**
 * `harness sessions list | show <id> | fork <id> [--at <seq>] | replay <id>`: the stored sessions.
 *
 * - `list`: id, last update, turns, cwd and first prompt line, most recent first.
 * - `show`: a transcript rendered from the log alone (a cut stream's partial answer included).
 * - `fork`: a child session seeded with the events up to `--at` (default: the last turn end).
 * - `replay`: re-derives every assistant message from its logged chunks through the assembler and
 *   reports mismatches (exit 5 when there is any).
 *
 * Readers (DEC-11): `list`, `show`, `replay` and `fork`'s read of the parent open a read-only
 * snapshot: no writer lock, nothing written (a crashed or running turn is shown repaired in memory).
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { sessionId } from "../../Llm/Message.js"
import * as Jsonl from "../../Session/persistence/Jsonl.js"
import * as Sqlite from "../../Session/persistence/Sqlite.js"
import type { SessionError } from "../../Session/SessionError.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import { SessionPersistence } from "../../Session/SessionPersistence.js"
import * as SessionStore from "../../Session/SessionStore.js"
import { CliError } from "../CliError.js"
import * as CommonOptions from "../CommonOptions.js"
import { ExitCode } from "../ExitCode.js"
import * as ReplayCheck from "../ReplayCheck.js"
import * as Transcript from "../Transcript.js"

const store = CommonOptions.options.store

const persistenceLayer = (kind: "jsonl" | "sqlite"): Layer.Layer<SessionPersistence, CliError> =>
  Layer.mapError(
    kind === "sqlite" ? Sqlite.layer() : Jsonl.layer(),
    (e) => new CliError({ message: `cannot open the session store: ${e.message}`, exitCode: ExitCode.Session })
  )

const sessionError = (e: SessionError) => new CliError({ message: e.message, exitCode: ExitCode.Session })

const out = (text: string) => Effect.sync(() => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`))

/**
 * The transcript of a snapshot, with the partial answer of a step whose stream was cut (chunks but
 * no `assistant/message` before its `step/end`, e.g. a crashed or still running turn) shown where
 * it stopped.
 */
const transcript = (events: ReadonlyArray<SessionEvent>): string => {
  const parts: Array<string> = []
  let from = 0
  let partial = ""
  let answered = false
  events.forEach((e, i) => {
    if (e.type === "step/start") {
      partial = ""
      answered = false
    } else if (e.type === "assistant/chunk" && e.data.chunk.type === "text-delta") {
      partial += e.data.chunk.text
    } else if (e.type === "assistant/message") {
      answered = true
    } else if (e.type === "step/end" && !answered && partial !== "") {
      parts.push(Transcript.render(events.slice(from, i)), "assistant (partial answer, interrupted):", partial.replace(/^/gm, "  "))
      from = i
      partial = ""
    }
  })
  parts.push(Transcript.render(events.slice(from)))
  return parts.filter((p) => p !== "").join("\n")
}

const snapshot = (id: string) =>
  Effect.flatMap(SessionPersistence, (persistence) => persistence.snapshot(sessionId(id))).pipe(Effect.mapError(sessionError))

const list = Command.make("list", { store }, ({ store }) =>
  Effect.gen(function*() {
    const persistence = yield* SessionPersistence
    const summaries = yield* Effect.mapError(persistence.list(), sessionError)
    if (summaries.length === 0) return yield* out("no sessions")
    for (const s of summaries) {
      const when = new Date(s.updatedAt).toISOString().replace("T", " ").slice(0, 19)
      const prompt = s.firstPrompt === undefined ? "" : `  ${s.firstPrompt.slice(0, 60)}`
      yield* out(`${s.header.id}  ${when}  ${s.turns} turn${s.turns === 1 ? "" : "s"}  ${s.header.cwd ?? "-"}${prompt}`)
    }
  }).pipe(Effect.provide(persistenceLayer(store)))).pipe(Command.withDescription("list stored sessions"))

const id = Args.text({ name: "id" }).pipe(Args.withDescription("session id"))

const show = Command.make("show", { store, id }, ({ id, store }) =>
  Effect.scoped(Effect.gen(function*() {
    const loaded = yield* snapshot(id)
    yield* out(`session ${loaded.header.id}${loaded.header.cwd !== undefined ? ` in ${loaded.header.cwd}` : ""}`)
    if (loaded.header.parentSession !== undefined) {
      yield* out(`forked from ${loaded.header.parentSession} at event ${(loaded.header.seedLength ?? 1) - 1}`)
    }
    yield* out(transcript(loaded.events))
  })).pipe(Effect.provide(persistenceLayer(store)))).pipe(Command.withDescription("print a session's transcript"))

const replay = Command.make("replay", { store, id }, ({ id, store }) =>
  Effect.scoped(Effect.gen(function*() {
    const loaded = yield* snapshot(id)
    const verdicts = ReplayCheck.check(loaded.events)
    const bad = verdicts.filter((v) => v.status !== "match")
    for (const v of bad) yield* out(`turn ${v.turn} step ${v.step} (event ${v.seq}): ${v.status}: ${v.detail ?? ""}`)
    yield* out(`${verdicts.length} assistant message${verdicts.length === 1 ? "" : "s"} re-derived, ${bad.length} mismatch${bad.length === 1 ? "" : "es"}`)
    if (bad.length > 0) return yield* new CliError({ message: "", exitCode: ExitCode.TurnError })
  })).pipe(Effect.provide(persistenceLayer(store)))).pipe(
    Command.withDescription("re-derive every assistant message from its logged chunks and report mismatches")
  )

const fork = Command.make(
  "fork",
  {
    store,
    id,
    at: Options.integer("at").pipe(Options.withDescription("last event (seq) to keep; must be a turn end"), Options.optional)
  },
  ({ at, id, store }) =>
    Effect.scoped(Effect.gen(function*() {
      const sessions = yield* SessionStore.SessionStore
      const source = yield* Effect.mapError(sessions.snapshot(id), sessionError)
      const events = source.events.slice(0, source.events.length - source.repaired.length)
      const boundary = Option.getOrElse(at, () => {
        for (let i = events.length - 1; i >= 0; i--) if (events[i]?.type === "turn/end") return i
        return -1
      })
      const child = yield* Effect.mapError(
        boundary < 0 ? sessions.forkStored(id) : sessions.forkStored(id, boundary),
        sessionError
      )
      yield* Effect.mapError(sessions.flush(child.id), sessionError)
      yield* out(`${child.id}`)
    })).pipe(Effect.provide(SessionStore.layer.pipe(Layer.provide(persistenceLayer(store)))))
).pipe(Command.withDescription("fork a session into a new child session (prints the child id)"))

/**
 * The `sessions` command group.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("sessions").pipe(
  Command.withDescription("inspect and manage stored sessions"),
  Command.withSubcommands([list, show, fork, replay])
)
