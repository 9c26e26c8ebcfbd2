/**
 * The regular-expression matcher of `grep` and `glob`, in a worker thread (decision 0010).
 *
 * JavaScript regular expressions backtrack: `^(a+)+$` against thirty `a`s and a `!` runs for
 * tens of seconds and cannot be interrupted on the thread that runs it. So every match of a
 * model-supplied pattern (grep's regex, glob's compiled pattern) runs in a worker thread that is
 * terminated (`Worker.terminate`, which stops even a running regex) when the call is interrupted
 * or exceeds its time budget ({@link SearchBudget}). The file walk and the reads stay on the main
 * thread, race-free (see {@link Walk}), in small synchronous steps separated by yields, so an
 * interrupt is seen between two files.
 *
 * The worker's code is a self-contained string evaluated with `eval: true`: the CLI ships as a
 * single bundle, and no second entry file is needed.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as WorkerThreads from "node:worker_threads"
import * as ToolError from "../ToolError.js"

/**
 * The time budget of one `grep` or `glob` call (default 30 s); tests shorten it.
 *
 * @since 0.1.0
 * @category references
 */
export const SearchBudget: Context.Reference<Duration.Duration> = Context.Reference<Duration.Duration>(
  "effect-harness/Tools/SearchBudget",
  { defaultValue: () => Duration.seconds(30) }
)

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads")
let cached = { key: "", regex: /(?:)/ }
const regexOf = (source, flags) => {
  const key = flags + "/" + source
  if (cached.key !== key) cached = { key, regex: new RegExp(source, flags) }
  return cached.regex
}
parentPort.on("message", (m) => {
  const regex = regexOf(m.source, m.flags)
  if (m.kind === "filter") {
    const indices = []
    for (let i = 0; i < m.items.length; i++) if (regex.test(m.items[i])) indices.push(i)
    parentPort.postMessage({ indices })
    return
  }
  const lines = []
  let more = false
  outer: for (const file of m.files) {
    const all = file.text.split("\\n")
    for (let i = 0; i < all.length; i++) {
      let line = all[i]
      if (i === all.length - 1 && line === "") break
      if (line.endsWith("\\r")) line = line.slice(0, -1)
      if (regex.test(line)) {
        if (lines.length >= m.max) { more = true; break outer }
        const shown = line.length > m.maxLineChars ? line.slice(0, m.maxLineChars) + "\\u2026" : line
        lines.push(file.relative + ":" + (i + 1) + ":" + shown)
      }
    }
  }
  parentPort.postMessage({ lines, more })
})
`

/**
 * A running matcher worker.
 *
 * @since 0.1.0
 * @category models
 */
export interface Matcher {
  readonly worker: WorkerThreads.Worker
}

/**
 * Starts a matcher worker for the scope; it is terminated when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.acquireRelease(
  Effect.sync((): Matcher => ({ worker: new WorkerThreads.Worker(WORKER_SOURCE, { eval: true }) })),
  (m) => Effect.promise(() => m.worker.terminate())
)

const ask = <A>(matcher: Matcher, message: unknown): Effect.Effect<A, ToolError.BuiltinToolError> =>
  Effect.callback<A, ToolError.BuiltinToolError>((resume) => {
    const { worker } = matcher
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const onMessage = (value: A) => {
      cleanup()
      resume(Exit.succeed(value))
    }
    const onError = (e: Error) => {
      cleanup()
      resume(Exit.fail(ToolError.make("INVALID_PATTERN", `the pattern cannot be used: ${e.message}`)))
    }
    const onExit = () => {
      cleanup()
      resume(Exit.fail(ToolError.make("IO_ERROR", "the search worker stopped unexpectedly")))
    }
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    worker.postMessage(message)
    return Effect.sync(cleanup)
  })

/**
 * The indices of `items` that `source`/`flags` matches.
 *
 * @since 0.1.0
 * @category execution
 */
export const filter = (matcher: Matcher, source: string, flags: string, items: ReadonlyArray<string>) =>
  Effect.map(ask<{ readonly indices: ReadonlyArray<number> }>(matcher, { kind: "filter", source, flags, items }), (r) => r.indices)

/**
 * The `path:line:text` lines of `files` that match, at most `max` (`more` when one more matched).
 *
 * @since 0.1.0
 * @category execution
 */
export const grepLines = (
  matcher: Matcher,
  options: {
    readonly source: string
    readonly flags: string
    readonly files: ReadonlyArray<{ readonly relative: string; readonly text: string }>
    readonly max: number
    readonly maxLineChars: number
  }
) => ask<{ readonly lines: ReadonlyArray<string>; readonly more: boolean }>(matcher, { kind: "lines", ...options })

/**
 * Runs `body` with a matcher under the call's {@link SearchBudget}: past the budget the worker is
 * terminated and the call fails with `SEARCH_TIMEOUT`.
 *
 * @since 0.1.0
 * @category execution
 */
export const withMatcher = <A, E, R>(what: string, body: (matcher: Matcher) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const budget = yield* SearchBudget
    return yield* Effect.scoped(Effect.flatMap(make, body)).pipe(
      Effect.timeoutOrElse({
        duration: budget,
        orElse: () =>
          Effect.fail(ToolError.make(
            "SEARCH_TIMEOUT",
            `${what} was stopped after ${Duration.format(budget)} (its time budget); the pattern may backtrack catastrophically or the tree is too large: simplify the pattern or narrow the path`
          ))
      })
    )
  })
