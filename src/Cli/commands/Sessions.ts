/**
 * `harness sessions list | show <id> | fork <id> [--at <seq>] | replay <id> | verify <id>`: the stored
 * sessions.
 *
 * - `list`: id, last update, turns, cwd and first prompt line, most recent first.
 * - `show`: a transcript rendered from the log alone.
 * - `fork`: a child session seeded with the events up to `--at` (default: the last turn end).
 * - `replay [--json]`: re-derives every assistant message from its logged chunks with the loop's
 *   own recording rule (`Loop/Recording`) and reports every broken clause with the events
 *   involved (exit 5 when there is any).
 * - `verify [--json]`: `replay` plus the structural invariants a reader can check from the file
 *   alone (`LogStructure`): contiguous seqs, balanced turns and steps, every tool call answered
 *   once with its id, provenance. Exit 5 when a rule is broken; a log ending inside a turn is
 *   reported, not a failure.
 *
 * Reading a session takes its writer lock first, so a session another process is writing is
 * reported as locked instead of being repaired under its feet.
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
import { SessionPersistence } from "../../Session/SessionPersistence.js"
import * as SessionStore from "../../Session/SessionStore.js"
import { CliError } from "../CliError.js"
import * as CommonOptions from "../CommonOptions.js"
import { ExitCode } from "../ExitCode.js"
import * as LogStructure from "../LogStructure.js"
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

const loadLocked = (id: string) =>
  Effect.gen(function*() {
    const persistence = yield* SessionPersistence
    yield* persistence.lock(sessionId(id))
    return yield* persistence.load(sessionId(id))
  }).pipe(Effect.mapError(sessionError))

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
    const loaded = yield* loadLocked(id)
    yield* out(`session ${loaded.header.id}${loaded.header.cwd !== undefined ? ` in ${loaded.header.cwd}` : ""}`)
    if (loaded.header.parentSession !== undefined) {
      yield* out(`forked from ${loaded.header.parentSession} at event ${(loaded.header.seedLength ?? 1) - 1}`)
    }
    yield* out(Transcript.render(loaded.events))
  })).pipe(Effect.provide(persistenceLayer(store)))).pipe(Command.withDescription("print a session's transcript"))

const json = Options.boolean("json").pipe(Options.withDescription("print the report as one JSON line"))

const findingJson = (f: ReplayCheck.Finding) => ({
  rule: f.rule.name,
  spec: f.rule.spec,
  text: f.rule.text,
  seqs: f.seqs,
  ...(f.turn === undefined ? {} : { turn: f.turn }),
  ...(f.step === undefined ? {} : { step: f.step }),
  detail: f.detail
})

const tally = (verdicts: ReadonlyArray<ReplayCheck.Verdict>) => {
  const count = (status: ReplayCheck.Verdict["status"]) => verdicts.filter((v) => v.status === status).length
  return { messages: verdicts.length, match: count("match"), anchor: count("anchor"), rewritten: count("rewritten"), mismatch: count("mismatch") }
}

const replaySummary = (verdicts: ReadonlyArray<ReplayCheck.Verdict>): string => {
  const t = tally(verdicts)
  const notes = [
    ...(t.anchor > 0 ? [`${t.anchor} step-result anchor${t.anchor === 1 ? "" : "s"}`] : []),
    ...(t.rewritten > 0 ? [`${t.rewritten} rewritten by step-result`] : [])
  ]
  return `${t.messages} assistant message${t.messages === 1 ? "" : "s"} re-derived, ${t.mismatch} mismatch${
    t.mismatch === 1 ? "" : "es"
  }${notes.length === 0 ? "" : ` (${notes.join(", ")})`}`
}

const problemsFound = new CliError({ message: "", exitCode: ExitCode.TurnError })

const replay = Command.make("replay", { store, id, json }, ({ id, json, store }) =>
  Effect.scoped(Effect.gen(function*() {
    const loaded = yield* loadLocked(id)
    const report = ReplayCheck.check(loaded.events)
    const ok = report.findings.length === 0
    if (json) {
      yield* out(JSON.stringify({
        session: loaded.header.id,
        ok,
        ...tally(report.verdicts),
        verdicts: report.verdicts,
        findings: report.findings.map(findingJson)
      }))
    } else {
      for (const f of report.findings) yield* out(ReplayCheck.renderFinding(f))
      yield* out(replaySummary(report.verdicts))
    }
    if (!ok) return yield* problemsFound
  })).pipe(Effect.provide(persistenceLayer(store)))).pipe(
    Command.withDescription(
      "re-derive every assistant message from its logged chunks with the loop's recording rule; exit 5 on a mismatch"
    )
  )

const verify = Command.make("verify", { store, id, json }, ({ id, json, store }) =>
  Effect.scoped(Effect.gen(function*() {
    const loaded = yield* loadLocked(id)
    const structure = LogStructure.check(loaded.events)
    const report = ReplayCheck.check(loaded.events)
    const findings = [...structure.findings, ...report.findings]
    const ok = findings.length === 0
    const turns = loaded.events.filter((e) => e.type === "turn/start").length
    if (json) {
      yield* out(JSON.stringify({
        session: loaded.header.id,
        ok,
        events: loaded.events.length,
        turns,
        ...(structure.open === undefined ? {} : { open: structure.open }),
        ...tally(report.verdicts),
        findings: findings.map(findingJson)
      }))
    } else {
      for (const f of findings) yield* out(ReplayCheck.renderFinding(f))
      yield* out(
        `${loaded.events.length} event${loaded.events.length === 1 ? "" : "s"}, ${turns} turn${turns === 1 ? "" : "s"}: ${
          structure.findings.length === 0
            ? "structure ok"
            : `${structure.findings.length} structural problem${structure.findings.length === 1 ? "" : "s"}`
        }; ${replaySummary(report.verdicts)}${
          structure.open === undefined
            ? ""
            : `; the log ends inside turn ${structure.open.turn}${
              structure.open.step === undefined ? "" : ` step ${structure.open.step}`
            } (still being written, or interrupted)`
        }`
      )
    }
    if (!ok) return yield* problemsFound
  })).pipe(Effect.provide(persistenceLayer(store)))).pipe(
    Command.withDescription(
      "check a session log: contiguous seqs, balanced turns and steps, every tool call answered once, provenance, and replay; exit 5 on a problem"
    )
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
      const source = yield* Effect.mapError(sessions.open(id), sessionError)
      const events = yield* source.events
      const boundary = Option.getOrElse(at, () => {
        for (let i = events.length - 1; i >= 0; i--) if (events[i]?.type === "turn/end") return i
        return -1
      })
      const child = yield* Effect.mapError(
        boundary < 0 ? sessions.fork(source) : sessions.fork(source, boundary),
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
  Command.withSubcommands([list, show, fork, replay, verify])
)
