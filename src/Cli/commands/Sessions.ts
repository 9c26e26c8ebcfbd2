/**
 * `harness sessions list | show | fork | rename | rm | replay | verify`: the stored sessions. Every
 * `<id>` may be any unique prefix of an id, with or without `harness-session-` (`SessionIds`);
 * errors are one line in the user's words (`UserErrors`).
 *
 * - `list [--json]`: a table under a header (short id, local time, turns, status, model, title,
 *   directory; `sessions/List`), most recent first; `--json` prints one JSON line per session.
 * - `show <id>`: the transcript by numbered turn, each turn's end (completed, CANCELLED, FAILED, …)
 *   with its event number, partial answers of cut-off steps, compactions marked (`sessions/Show`).
 * - `fork <id> [--turn N | --at <event>]`: a child session (new id, same format as `run`'s) seeded
 *   with the session up to the end of turn N (default: the last completed turn) or up to event
 *   `--at` (which must end a turn); prints the child id.
 * - `rename <id> <title>`: stores a title in the session's log (`sessions/Title`).
 * - `rm <id> [--yes]`: deletes a session; asks on a terminal, refuses without `--yes` otherwise.
 * - `replay [--json]`: re-derives every assistant message from its logged chunks with the loop's
 *   own recording rule (`Loop/Recording`) and reports every broken clause with the events
 *   involved (exit 5 when there is any).
 * - `export <id> [--format html|atif|jsonl] [--output FILE]`: the session as a self-contained HTML
 *   page, an ATIF trajectory or normalized JSON Lines (`SessionExport`, `src/Export`).
 * - `stats [--json]`: tokens, cost, time in model vs tools vs harness, slowest tools (`SessionStats`).
 * - `verify [--json]`: `replay` plus the structural invariants a reader can check from the file
 *   alone (`LogStructure`): contiguous seqs, balanced turns and steps, every tool call answered
 *   once with its id, provenance. Exit 5 when a rule is broken; a log ending inside a turn is
 *   reported, not a failure.
 *
 * Readers (DEC-11): `list`, `show`, `replay` and `fork`'s read of the parent open a read-only
 * snapshot: no writer lock, nothing written (a crashed or running turn is shown repaired in memory).
 * `rename` and `rm` take the writer lock (a session in use by another process is refused).
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeReadline from "node:readline"
import { sessionId } from "../../Llm/Message.js"
import * as Jsonl from "../../Session/persistence/Jsonl.js"
import * as Sqlite from "../../Session/persistence/Sqlite.js"
import type { SessionError } from "../../Session/SessionError.js"
import { SessionPersistence } from "../../Session/SessionPersistence.js"
import * as SessionStore from "../../Session/SessionStore.js"
import { CliError } from "../CliError.js"
import * as CommandDoc from "../CommandDoc.js"
import * as CommonOptions from "../CommonOptions.js"
import * as HarnessLayer from "../HarnessLayer.js"
import { ExitCode } from "../ExitCode.js"
import * as LogStructure from "../LogStructure.js"
import * as Output from "../Output.js"
import * as ReplayCheck from "../ReplayCheck.js"
import * as SessionExport from "./SessionExport.js"
import * as Manifest from "../../Checkpoint/Manifest.js"
import * as SessionStats from "./SessionStats.js"
import * as TerminalText from "../../Tools/TerminalText.js"
import * as List from "../sessions/List.js"
import * as SessionIds from "../sessions/SessionIds.js"
import * as RewindCommand from "../sessions/Rewind.js"
import * as Show from "../sessions/Show.js"
import * as Title from "../sessions/Title.js"
import * as UserErrors from "../sessions/UserErrors.js"

const store = CommonOptions.options.store

// a store that cannot be opened is a session error (exit 4)
const openStore = HarnessLayer.mapLayerError((e: { readonly message: string }) =>
  new CliError({ message: `cannot open the session store: ${e.message}`, exitCode: ExitCode.Session })
)

const persistenceLayer = (kind: "jsonl" | "sqlite"): Layer.Layer<SessionPersistence, CliError> =>
  openStore(kind === "sqlite" ? Sqlite.layer() : Jsonl.layer())

/** the store for commands that only read (list, show, stats, replay, verify): SQLite opened read-only (issue 26) */
const readerLayer = (kind: "jsonl" | "sqlite"): Layer.Layer<SessionPersistence, CliError> =>
  openStore(kind === "sqlite" ? Sqlite.layer({ readOnly: true }) : Jsonl.layer())

const storeLayer = (kind: "jsonl" | "sqlite") => SessionStore.layer.pipe(Layer.provide(persistenceLayer(kind)))

const sessionError = (e: SessionError) => UserErrors.toCli(e)

const usage = (message: string) => new CliError({ message: `error: ${message}`, exitCode: ExitCode.Usage })

const out = (text: string) => Effect.sync(() => Output.processSinks.stdout(text.endsWith("\n") ? text : `${text}\n`))

// human-readable lines: made inert when stdout is a terminal (JSON lines go through `out`)
const outText = (text: string) =>
  Effect.sync(() => Output.terminalSinks.stdout(text.endsWith("\n") ? text : `${text}\n`))

/**
 * The stored id a user's (prefix of an) id names.
 *
 * @since 0.1.0
 * @category utils
 */
export const resolveId = (input: string): Effect.Effect<string, CliError, SessionPersistence> =>
  Effect.gen(function*() {
    const persistence = yield* SessionPersistence
    const summaries = yield* Effect.mapError(persistence.list(), sessionError)
    return yield* Result.match(SessionIds.match(input, summaries.map((s) => s.header.id)), {
      onFailure: (message) => Effect.fail(new CliError({ message: `error: ${message}`, exitCode: ExitCode.Session })),
      onSuccess: Effect.succeed
    })
  })

const snapshot = (input: string) =>
  Effect.flatMap(resolveId(input), (id) =>
    Effect.flatMap(SessionPersistence, (persistence) => persistence.snapshot(sessionId(id))).pipe(Effect.mapError(sessionError)))

const list = Command.make(
  "list",
  { store, json: CommandDoc.boolean("json").pipe(Flag.withDescription("one JSON line per session")) },
  ({ json, store }) =>
    Effect.gen(function*() {
      const persistence = yield* SessionPersistence
      const summaries = yield* Effect.mapError(persistence.list(), sessionError)
      const rows = List.ordered(yield* Effect.forEach(
        summaries,
        (summary) =>
          persistence.snapshot(summary.header.id).pipe(
            Effect.map((loaded) => List.row(summary, loaded)),
            Effect.orElseSucceed(() => List.row(summary, undefined))
          ),
        { concurrency: 4 }
      ))
      if (json) {
        for (const r of rows) yield* out(JSON.stringify(List.json(r)))
        return
      }
      if (rows.length === 0) return yield* outText("no sessions yet (harness run \"…\" starts one)")
      yield* outText(List.table(rows))
    }).pipe(Effect.provide(readerLayer(store)))
).pipe(Command.withDescription("list stored sessions, most recent first (any unique id prefix works as an id)"))

const id = Argument.String("id").pipe(Argument.withDescription("session id, or any unique prefix of it"))

const show = Command.make("show", { store, id }, ({ id, store }) =>
  Effect.gen(function*() {
    const loaded = yield* snapshot(id)
    const title = Title.of(loaded.events)
    yield* outText(TerminalText.line(`session ${loaded.header.id}${title === undefined ? "" : ` "${title}"`}${
      loaded.header.cwd !== undefined ? ` in ${loaded.header.cwd}` : ""
    }`))
    if (loaded.header.parentSession !== undefined) {
      yield* outText(`forked from ${loaded.header.parentSession} after event #${(loaded.header.seedLength ?? 1) - 1}`)
    }
    yield* outText("")
    // a few lines per write: the whole transcript of a large log is never one string
    const lines = Show.renderLines(loaded.events)
    if (lines.length === 0) yield* outText("")
    for (let i = 0; i < lines.length; i += 256) yield* outText(lines.slice(i, i + 256).join("\n"))
    const total = SessionStats.totalLine(loaded.events)
    if (total !== undefined) yield* outText(total)
    // which turn changed which workspace files (issue 33)
    const changes = Manifest.summaryLines(loaded.events)
    if (changes.length > 0) yield* outText(changes.map(TerminalText.line).join("\n"))
  }).pipe(Effect.provide(readerLayer(store)))).pipe(
    Command.withDescription("print a session's transcript by numbered turn (how each turn ended, partial answers)")
  )

const json = CommandDoc.boolean("json").pipe(Flag.withDescription("print the report as one JSON line"))

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
      for (const f of report.findings) yield* outText(ReplayCheck.renderFinding(f))
      yield* outText(replaySummary(report.verdicts))
    }
    if (!ok) return yield* problemsFound
  })).pipe(Effect.provide(readerLayer(store)))).pipe(
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
      for (const f of findings) yield* outText(ReplayCheck.renderFinding(f))
      yield* outText(
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
  })).pipe(Effect.provide(readerLayer(store)))).pipe(
    Command.withDescription(
      "check a session log: contiguous seqs, balanced turns and steps, every tool call answered once, provenance, and replay; exit 5 on a problem"
    )
  )

/**
 * Where `fork` cuts: the seq of the turn end it keeps, or the one-line reason it cannot.
 *
 * @since 0.1.0
 * @category utils
 */
export const forkBoundary = (
  events: ReadonlyArray<{ readonly type: string; readonly seq: number; readonly data: unknown }>,
  choice: { readonly turn: Option.Option<number>; readonly at: Option.Option<number> }
): Result.Result<number, string> => {
  const ends = events.flatMap((e) =>
    e.type === "turn/end"
      ? [{ seq: e.seq, ...(e.data as { readonly turn: number; readonly reason: { readonly kind: string } }) }]
      : []
  )
  const startOf = (seq: number): number | undefined => {
    let turn: number | undefined
    for (const e of events) {
      if (e.seq > seq) break
      if (e.type === "turn/start") turn = (e.data as { readonly turn: number }).turn
      if (e.type === "turn/end") turn = undefined
    }
    return turn
  }
  if (Option.isSome(choice.at) && Option.isSome(choice.turn)) return Result.fail("use either --turn or --at, not both")
  if (Option.isSome(choice.at)) {
    const at = choice.at.value
    if (at < 0) return Result.fail(`--at takes an event number (0 or more), not ${at}`)
    if (at >= events.length) {
      return Result.fail(`there is no event #${at}: the session has events #0-#${events.length - 1}`)
    }
    const end = ends.find((e) => e.seq === at)
    if (end !== undefined) return Result.succeed(at)
    const inside = startOf(at)
    const hint = inside === undefined ? "" : `; it lies inside turn ${inside}: use --turn ${inside} to fork after that turn`
    return Result.fail(`event #${at} does not end a turn (a fork keeps whole turns)${hint}`)
  }
  if (Option.isSome(choice.turn)) {
    const turn = choice.turn.value
    const end = ends.find((e) => e.turn === turn)
    if (end !== undefined) return Result.succeed(end.seq)
    const started = events.some((e) => e.type === "turn/start" && (e.data as { readonly turn: number }).turn === turn)
    if (started) return Result.fail(`turn ${turn} has not ended (it is still running, or its process stopped)`)
    const numbers = events.flatMap((e) => e.type === "turn/start" ? [(e.data as { readonly turn: number }).turn] : [])
    return Result.fail(
      numbers.length === 0
        ? "the session has no turns yet"
        : `there is no turn ${turn}: the session has turns ${numbers[0]}-${numbers[numbers.length - 1]}`
    )
  }
  const completed = ends.filter((e) => e.reason.kind === "completed" || e.reason.kind === "max-tokens")
  const last = completed[completed.length - 1]
  return last === undefined
    ? Result.fail("the session has no completed turn to fork after; choose one with --turn N")
    : Result.succeed(last.seq)
}

const fork = Command.make(
  "fork",
  {
    store,
    id,
    turn: Flag.Int("turn").pipe(
      Flag.withDescription("keep the session up to the end of this turn (numbers as in sessions show; default: the last completed turn)"),
      Flag.optional
    ),
    at: Flag.Int("at").pipe(
      Flag.withDescription("keep the session up to this event number, which must end a turn (shown by sessions show)"),
      Flag.optional
    )
  },
  ({ at, id, store, turn }) =>
    Effect.scoped(Effect.gen(function*() {
      const sessions = yield* SessionStore.SessionStore
      const resolved = yield* resolveId(id)
      const source = yield* Effect.mapError(sessions.snapshot(resolved), sessionError)
      const events = source.events.slice(0, source.events.length - source.repaired.length)
      const boundary = yield* Result.match(forkBoundary(events, { turn, at }), {
        onFailure: (message) => Effect.fail(usage(`cannot fork ${resolved}: ${message}`)),
        onSuccess: Effect.succeed
      })
      const child = yield* Effect.mapError(sessions.forkStored(resolved, boundary, SessionIds.make()), sessionError)
      yield* Effect.mapError(sessions.flush(child.id), sessionError)
      yield* outText(`${child.id}`)
    })).pipe(Effect.provide(Layer.merge(storeLayer(store), persistenceLayer(store))))
).pipe(Command.withDescription("fork a session after one of its turns into a new session (prints the new id)"))

const rewind = Command.make(
  "rewind",
  {
    store,
    id,
    turn: Flag.Int("turn").pipe(
      Flag.withDescription("the turn whose end to go back to (numbers as in sessions show; 0: before the first turn)")
    ),
    code: CommandDoc.boolean("code").pipe(Flag.withDescription("only restore the workspace files")),
    conversation: CommandDoc.boolean("conversation").pipe(
      Flag.withDescription("only fork the conversation after the turn (prints the new id)")
    ),
    force: CommandDoc.boolean("force").pipe(Flag.withDescription("overwrite files changed outside the agent since"))
  },
  ({ code, conversation, force, id, store, turn }) =>
    Effect.scoped(Effect.gen(function*() {
      if (code && conversation) return yield* usage("use --code or --conversation (neither: both)")
      const resolved = yield* resolveId(id)
      yield* RewindCommand.run({ id: resolved, turn, mode: code ? "code" : conversation ? "conversation" : "both", force })
    })).pipe(Effect.provide(Layer.merge(storeLayer(store), persistenceLayer(store))))
).pipe(Command.withDescription(
  "go back to the end of a turn: restore the files the agent changed since (write, edit and bash) and fork the conversation there"
))

const rename = Command.make(
  "rename",
  { store, id, title: Argument.String("title").pipe(Argument.withDescription("the new title (empty: remove it)")) },
  ({ id, store, title }) =>
    Effect.scoped(Effect.gen(function*() {
      const sessions = yield* SessionStore.SessionStore
      const resolved = yield* resolveId(id)
      const session = yield* Effect.mapError(sessions.open(resolved), sessionError)
      yield* Effect.mapError(session.append({ type: Title.TYPE, data: { title: Title.normalize(title) } }), sessionError)
      yield* Effect.mapError(sessions.flush(resolved), sessionError)
    })).pipe(Effect.provide(Layer.merge(storeLayer(store), persistenceLayer(store))))
).pipe(Command.withDescription("give a session a title (shown by sessions list and show)"))

/** Asks a yes/no question on the terminal; `true` only for an answer starting with y. */
const confirm = (question: string): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    const rl = NodeReadline.createInterface({ input: process.stdin, output: process.stderr })
    let answered = false
    rl.question(question, (answer) => {
      answered = true
      rl.close()
      resume(Effect.succeed(/^\s*y/i.test(answer)))
    })
    rl.on("close", () => {
      if (!answered) resume(Effect.succeed(false))
    })
    return Effect.sync(() => rl.close())
  })

const rm = Command.make(
  "rm",
  {
    store,
    id,
    yes: CommandDoc.boolean("yes").pipe(Flag.withAlias("y"), Flag.withDescription("delete without asking"))
  },
  ({ id, store, yes }) =>
    Effect.gen(function*() {
      const persistence = yield* SessionPersistence
      const resolved = yield* resolveId(id)
      if (!yes) {
        if (process.stdin.isTTY !== true) {
          return yield* usage(`not deleting ${resolved} without --yes (no terminal to ask)`)
        }
        const loaded = yield* Effect.mapError(persistence.snapshot(sessionId(resolved)), sessionError)
        const title = Title.of(loaded.events)
        const turns = loaded.events.filter((e) => e.type === "turn/start").length
        const ok = yield* confirm(
          TerminalText.line(`delete session ${resolved}${title === undefined ? "" : ` "${title}"`} (${turns} turn${turns === 1 ? "" : "s"})? [y/N] `)
        )
        if (!ok) return yield* Effect.sync(() => process.stderr.write("not deleted\n"))
      }
      yield* Effect.mapError(persistence.remove(sessionId(resolved)), sessionError)
      yield* Effect.sync(() => process.stderr.write(`deleted ${resolved}\n`))
    }).pipe(Effect.provide(persistenceLayer(store)))
).pipe(Command.withDescription("delete a session for good (asks first unless --yes)"))

/**
 * The `sessions` command group.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("sessions").pipe(
  Command.withDescription("inspect and manage stored sessions"),
  Command.withSubcommands([
    list,
    show,
    fork,
    rewind,
    rename,
    rm,
    replay,
    verify,
    SessionStats.make((id, kind) => Effect.provide(snapshot(id), readerLayer(kind))),
    SessionExport.make((id, kind) => Effect.provide(snapshot(id), readerLayer(kind)))
  ])
)
