/**
 * `harness sessions list | show <id> | fork <id> [--at <seq>] | replay <id> | verify <id>`: the stored
 * sessions.
 *
 * - `list`: id, last update, turns, cwd and first prompt line, most recent first.
 * - `show`: a transcript rendered from the log alone (a cut stream's partial answer included).
 * - `fork`: a child session seeded with the events up to `--at` (default: the last turn end).
 * - `replay [--json]`: re-derives every assistant message from its logged chunks with the loop's
 *   own recording rule (`Loop/Recording`) and reports every broken clause with the events
 *   involved (exit 5 when there is any).
 * - `stats [--json]`: tokens, cost, time in model vs tools vs harness, slowest tools (`SessionStats`).
 * - `verify [--json]`: `replay` plus the structural invariants a reader can check from the file
 *   alone (`LogStructure`): contiguous seqs, balanced turns and steps, every tool call answered
 *   once with its id, provenance. Exit 5 when a rule is broken; a log ending inside a turn is
 *   reported, not a failure.
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
import * as LogStructure from "../LogStructure.js"
import * as ReplayCheck from "../ReplayCheck.js"
import * as Transcript from "../Transcript.js"
import * as SessionStats from "./SessionStats.js"

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
    const total = SessionStats.totalLine(loaded.events)
    if (total !== undefined) yield* out(total)
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
    const loaded = yield* snapshot(id)
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
    const loaded = yield* snapshot(id)
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
  Command.withSubcommands([list, show, fork, replay, verify, SessionStats.make((id, kind) => Effect.provide(snapshot(id), persistenceLayer(kind)))])
)
