/**
 * `harness sessions rewind <id> --turn N [--code | --conversation] [--force]` (issue 33).
 *
 * - Code (`--code`, or both by default): every workspace path the session's tools changed after
 *   turn N is put back as it was when turn N ended (turn 0: before the first turn), from the
 *   session's checkpoint journal (`Checkpoint/Rewind`). Files changed outside the agent since are
 *   listed and nothing is changed unless `--force`. A rewind cut off (SIGKILL, power loss) is
 *   finished by running the command again (any `--turn`): its marker is resumed first.
 * - Conversation (`--conversation`, or both): a fork after turn N (the `fork` rules), whose id is
 *   printed on stdout. The code rewind is recorded in the session's own log (its workspace left the
 *   course of its turns); the fork's log needs no record: its turns end at turn N, which is where
 *   the workspace now is.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as CheckpointError from "../../Checkpoint/CheckpointError.js"
import * as Journal from "../../Checkpoint/Journal.js"
import * as Manifest from "../../Checkpoint/Manifest.js"
import * as Rewind from "../../Checkpoint/Rewind.js"
import * as DataDir from "../../Session/persistence/DataDir.js"
import type * as Session from "../../Session/Session.js"
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as SessionStore from "../../Session/SessionStore.js"
import { CliError } from "../CliError.js"
import { ExitCode } from "../ExitCode.js"
import * as Output from "../Output.js"
import * as SessionIds from "./SessionIds.js"
import * as UserErrors from "./UserErrors.js"

/**
 * What to rewind.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "both" | "code" | "conversation"

const say = (line: string) => Effect.sync(() => Output.terminalSinks.stderr(`${line}\n`))

const toCli = (e: CheckpointError.CheckpointError): CliError =>
  new CliError({
    message: `error: ${e.message}`,
    exitCode: e._tag === "RewindTargetError" ? ExitCode.Usage : ExitCode.Session
  })

const lastTurn = (events: ReadonlyArray<SessionEvent>): number =>
  events.reduce((n, e) => e.type === "turn/start" ? Math.max(n, e.data.turn) : n, 0)

// the journal directories of a session and its ancestors (a fork's seed manifests name the parent's objects)
const objectDirs = (home: string, session: Session.Session) =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    const dirs: Array<string> = [Journal.dirOf(home, session.id)]
    let at: string | undefined = session.header.parentSession
    while (at !== undefined && dirs.length < 64) {
      dirs.push(Journal.dirOf(home, at))
      const parent: string | undefined = (yield* Effect.mapError(sessions.snapshot(at), UserErrors.toCli)).header.parentSession
      at = parent
    }
    return dirs
  })

const harnessHome = Effect.mapError(DataDir.harnessHome, (e) => new CliError({ message: `error: ${e.message}`, exitCode: ExitCode.Usage }))

/**
 * The turn end a fork keeps, or a usage error.
 *
 * @since 0.1.0
 * @category utils
 */
export const forkChild = (session: Session.Session, turn: number) =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    if (turn === 0) {
      return yield* new CliError({ message: "error: there is no conversation before turn 1 to fork; rewind the code only", exitCode: ExitCode.Usage })
    }
    const events = yield* Effect.mapError(session.events, UserErrors.toCli)
    const boundary = yield* Effect.mapError(Rewind.boundaryOf(events, turn), toCli)
    yield* Effect.mapError(sessions.flush(session.id), UserErrors.toCli)
    return yield* Effect.scoped(Effect.gen(function*() {
      const child = yield* Effect.mapError(sessions.forkStored(session.id, boundary, SessionIds.make()), UserErrors.toCli)
      yield* Effect.mapError(sessions.flush(child.id), UserErrors.toCli)
      return child.id
    }))
  })

/**
 * Restores the workspace of a session open for writing (this process holds it) to the end of
 * `turn`, records the rewind in its log and returns the line that says what happened. A marker
 * left by a cut-off rewind is finished first (and said so) instead.
 *
 * @since 0.1.0
 * @category handlers
 */
export const restore = (options: {
  readonly session: Session.Session
  readonly turn: number
  readonly force: boolean
  /** runs after the checks, before the first change (the fork of `both`) */
  readonly prepare?: Effect.Effect<string, CliError, SessionStore.SessionStore>
}): Effect.Effect<{ readonly marker: Rewind.Marker; readonly line: string }, CliError, SessionStore.SessionStore> =>
  Effect.gen(function*() {
    const session = options.session
    const home = yield* harnessHome
    const root = session.header.cwd
    if (root === undefined) {
      return yield* new CliError({ message: `error: session ${session.id} does not record its workspace directory`, exitCode: ExitCode.Session })
    }
    const dir = Journal.dirOf(home, session.id)
    const prepare = options.prepare
    const result = yield* Rewind.run({
      root,
      dir,
      objectDirs: yield* objectDirs(home, session),
      events: yield* Effect.mapError(session.events, UserErrors.toCli),
      turn: options.turn,
      force: options.force,
      recordTo: session.id,
      ...(prepare === undefined ? {} : { prepare: Effect.map(prepare, (fork) => ({ recordTo: session.id, fork })) })
    }).pipe(Effect.mapError((e) => e instanceof CliError ? e : toCli(e)))
    yield* recordIn(dir, result.marker, session)
    const marker = result.marker
    const restored = Rewind.record(marker, 0).changes.length
    const line = `${result.resumed ? "finished the interrupted rewind" : "rewound"} the workspace to the end of turn ${marker.turn}: ${restored} path${
      restored === 1 ? "" : "s"
    } restored${marker.skipped.length > 0 ? `; left as they are: ${marker.skipped.join(", ")}` : ""}${
      result.resumed && marker.turn !== options.turn ? `; run it again to rewind to turn ${options.turn}` : ""
    }`
    return { marker, line }
  })

// appends the rewind's record to its session unless a crashed run already did, then drops the marker
const recordIn = (dir: string, marker: Rewind.Marker, session: Session.Session) =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    const events = yield* Effect.mapError(session.events, UserErrors.toCli)
    if (!Rewind.recorded(events, marker.id)) {
      yield* Effect.mapError(session.append({ type: Manifest.TYPE, data: Rewind.record(marker, lastTurn(events)) }), UserErrors.toCli)
    }
    yield* Effect.mapError(sessions.flush(marker.recordTo), UserErrors.toCli)
    yield* Effect.mapError(Rewind.finish(dir), toCli)
  })

/**
 * Runs the command for a resolved session id.
 *
 * @since 0.1.0
 * @category handlers
 */
export const run = (options: {
  readonly id: string
  readonly turn: number
  readonly mode: Mode
  readonly force: boolean
}): Effect.Effect<void, CliError, SessionStore.SessionStore | Scope.Scope> =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    // the record goes to this session's log, whose writer lock is taken before anything changes
    const own = yield* Effect.mapError(sessions.open(options.id), UserErrors.toCli)
    if (options.mode === "conversation") {
      const child = yield* forkChild(own, options.turn)
      return yield* Effect.sync(() => Output.processSinks.stdout(`${child}\n`))
    }
    const done = yield* restore({
      session: own,
      turn: options.turn,
      force: options.force,
      ...(options.mode === "both" ? { prepare: forkChild(own, options.turn) } : {})
    })
    yield* say(done.line)
    if (done.marker.fork !== undefined) yield* Effect.sync(() => Output.processSinks.stdout(`${done.marker.fork}\n`))
  })

/**
 * `/rewind [N [code|conversation|both] [force]]` in chat, over the chat's own live session: without
 * `N`, the turns and the files each changed; else the rewind, with the fork to continue in (if
 * any). Every answer is a few lines for the terminal.
 *
 * @since 0.1.0
 * @category handlers
 */
export const inChat = (
  session: Session.Session,
  argsText: string
): Effect.Effect<{ readonly text: string; readonly fork?: string }, never, SessionStore.SessionStore> =>
  Effect.gen(function*() {
    const words = argsText.trim().split(/\s+/).filter((w) => w !== "")
    const turn = words[0] === undefined ? undefined : Number(words[0])
    const mode = words.find((w): w is Mode => w === "code" || w === "conversation" || w === "both") ?? "both"
    const unknown = words.slice(1).filter((w) => w !== mode && w !== "force")
    if (turn === undefined || !Number.isSafeInteger(turn) || unknown.length > 0) {
      const events = yield* session.events
      const lines = Manifest.summaryLines(events)
      return {
        text: [
          "usage: /rewind N [code|conversation|both] [force]  (back to the end of turn N; 0: before the first turn)",
          ...(lines.length === 0 ? ["no workspace changes recorded in this session"] : lines)
        ].join("\n")
      }
    }
    if (mode === "conversation") {
      const fork = yield* forkChild(session, turn)
      return { text: `continuing in ${fork}, forked after turn ${turn}`, fork }
    }
    const done = yield* restore({
      session,
      turn,
      force: words.includes("force"),
      ...(mode === "both" ? { prepare: forkChild(session, turn) } : {})
    })
    const fork = done.marker.fork
    return fork === undefined ? { text: done.line } : { text: `${done.line}; continuing in ${fork}`, fork }
  }).pipe(Effect.catch((e) => Effect.succeed({ text: e.message })))
