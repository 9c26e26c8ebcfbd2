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
const objectDirs = (home: string, id: string) =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    const dirs: Array<string> = []
    let at: string | undefined = id
    while (at !== undefined && dirs.length < 64) {
      dirs.push(Journal.dirOf(home, at))
      const parent: string | undefined = (yield* Effect.mapError(sessions.snapshot(at), UserErrors.toCli)).header.parentSession
      at = parent
    }
    return dirs
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
    const home = yield* Effect.mapError(DataDir.harnessHome, (e) => new CliError({ message: `error: ${e.message}`, exitCode: ExitCode.Usage }))
    const source = yield* Effect.mapError(sessions.snapshot(options.id), UserErrors.toCli)
    const events = source.events.slice(0, source.events.length - source.repaired.length)
    const boundary = yield* Effect.mapError(Rewind.boundaryOf(events, options.turn), toCli)
    const forkChild = Effect.gen(function*() {
      if (options.turn === 0) {
        return yield* new CliError({ message: "error: there is no conversation before turn 1 to fork; use --code", exitCode: ExitCode.Usage })
      }
      const child = yield* Effect.mapError(sessions.forkStored(options.id, boundary, SessionIds.make()), UserErrors.toCli)
      yield* Effect.mapError(sessions.flush(child.id), UserErrors.toCli)
      return child
    })
    if (options.mode === "conversation") {
      const child = yield* forkChild
      return yield* Effect.sync(() => Output.processSinks.stdout(`${child.id}\n`))
    }
    const root = source.header.cwd
    if (root === undefined) {
      return yield* new CliError({ message: `error: session ${options.id} does not record its workspace directory`, exitCode: ExitCode.Session })
    }
    const dir = Journal.dirOf(home, options.id)
    // the record goes to this session's log, whose writer lock is taken before anything changes
    const own = yield* Effect.mapError(sessions.open(options.id), UserErrors.toCli)
    const result = yield* Rewind.run({
      root,
      dir,
      objectDirs: yield* objectDirs(home, options.id),
      events,
      turn: options.turn,
      force: options.force,
      recordTo: options.id,
      ...(options.mode === "both"
        ? {
          prepare: Effect.map(forkChild, (child) => ({ recordTo: options.id, fork: child.id }))
        }
        : {})
    }).pipe(Effect.mapError((e) => e instanceof CliError ? e : toCli(e)))
    yield* recordIn(dir, result.marker, own)
    const marker = result.marker
    const restored = Rewind.record(marker, 0).changes.length
    yield* say(
      `${result.resumed ? "finished the interrupted rewind" : "rewound"} the workspace to the end of turn ${marker.turn}: ${restored} path${
        restored === 1 ? "" : "s"
      } restored${marker.skipped.length > 0 ? `; left as they are: ${marker.skipped.join(", ")}` : ""}`
    )
    if (result.resumed && marker.turn !== options.turn) {
      yield* say(`run the command again to rewind to turn ${options.turn}`)
    }
    if (marker.fork !== undefined) yield* Effect.sync(() => Output.processSinks.stdout(`${marker.fork}\n`))
  })
