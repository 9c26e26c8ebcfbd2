/**
 * Checkpoint cost (issue 33): a `bash` command that rewrites 1,000 files in a workspace of 3,000
 * files (1 KiB each), run by the real `bash` tool (sandboxed when bubblewrap works here), with and
 * without the pre-image journal, in the same run.
 *
 * 1. `checkpoint.bash.1000.warm`: the steady state (a journal that already scanned the workspace:
 *    the scan before the command copies only the files changed since, the scan after hashes only
 *    what `lstat` says changed). Value and baseline in ms per command; ratio = journaled / plain.
 * 2. `checkpoint.bash.1000.cold`: the first command of a session (a fresh journal): the scan before
 *    it copies every workspace file into the store once.
 *
 * Method: one warm-up, then `RUNS` rounds, each running plain, warm and cold back to back (so load
 * on this shared machine hits all three alike); medians.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Journal from "../src/Checkpoint/Journal.js"
import * as Bash from "../src/Tools/Bash.js"
import * as Workspace from "../src/Tools/Workspace.js"
import { median, report } from "./Bench.js"

const RUNS = 7
const FILES = 3000
const TOUCHED = 1000

const command = `v=$(date +%s%N); for n in $(seq 1 ${TOUCHED}); do echo "$v" > src/f$n.txt; done`

export const run = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "bench-checkpoint-ws-"))
  const home = mkdtempSync(join(tmpdir(), "bench-checkpoint-home-"))
  try {
    mkdirSync(join(root, "src"))
    const kib = "x".repeat(1023) + "\n"
    for (let n = 1; n <= FILES; n++) writeFileSync(join(root, "src", `f${n}.txt`), kib)
    const workspace = await Effect.runPromise(Workspace.make(root).pipe(Effect.provide(NodeServices.layer)))
    const bash = Bash.run({ command }).pipe(Effect.provideService(Workspace.Workspace, workspace))
    const warm = await Effect.runPromise(Journal.make({ root, home }))
    let sessions = 0
    const timed = async (effect: Effect.Effect<unknown, unknown>): Promise<number> => {
      const t0 = performance.now()
      await Effect.runPromise(Effect.orDie(effect))
      return performance.now() - t0
    }
    const plainRun = () => timed(bash)
    const warmRun = () =>
      timed(Effect.andThen(warm.begin("bench-warm", 1, 1), Effect.andThen(warm.aroundScan("bash", bash), warm.take())))
    const coldRun = () =>
      timed(Effect.gen(function*() {
        const journal = yield* Journal.make({ root, home })
        yield* journal.begin(`bench-cold-${sessions++}`, 1, 1)
        yield* journal.aroundScan("bash", bash)
        yield* journal.take()
      }))
    await plainRun()
    await warmRun()
    await coldRun()
    const plain: Array<number> = []
    const warmed: Array<number> = []
    const cold: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      plain.push(await plainRun())
      warmed.push(await warmRun())
      cold.push(await coldRun())
    }
    const baseline = median(plain)
    report({ bench: "checkpoint.bash.1000.warm", unit: "ms (lower is better)", value: median(warmed), baseline, files: FILES })
    report({ bench: "checkpoint.bash.1000.cold", unit: "ms (lower is better)", value: median(cold), baseline, files: FILES })
  } finally {
    rmSync(root, { recursive: true, force: true })
    rmSync(home, { recursive: true, force: true })
  }
}
