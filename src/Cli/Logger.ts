/**
 * The CLI's logger (DEC-12): every `Effect.log*` line of the library goes to **stderr**, never to
 * stdout (which carries only the answer or JSON Lines).
 *
 * - Default: one line per entry, `<level>: <message> (<key>=<value>, …)`; an error object among
 *   the message parts or in the cause is shown by its message (and code), never as a JSON dump;
 *   newlines are folded and long values cut. Debug entries are hidden.
 * - `--verbose` ({@link verbose}): timestamp, level, fiber, every annotation in full, and the
 *   cause's full pretty print (several lines); debug entries shown.
 * - Once the command reported a save failure as its one error line ({@link markReported}), the
 *   store's later save-failure entries (e.g. its retry at release) are shown only with `--verbose`.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EffectLogger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as Signals from "./Signals.js"
import * as TerminalText from "../Tools/TerminalText.js"

/**
 * Whether the logger prints detail (`--verbose`): a context reference (default `false`) read from
 * the logging fiber's context; {@link verbose} provides it.
 *
 * @since 0.1.0
 * @category references
 */
export const Verbose: Context.Reference<boolean> = Context.Reference<boolean>("effect-harness/Cli/Logger/Verbose", {
  defaultValue: () => false
})

const saveFailure = { reported: false }

/**
 * Records that a save failure was reported to the user: later save-failure log entries (a
 * `SessionError` with code `PERSISTENCE_FAILED` or `IO` among the message parts) are shown only
 * with `--verbose`.
 *
 * @since 0.1.0
 * @category utils
 */
export const markReported: Effect.Effect<void> = Effect.sync(() => {
  saveFailure.reported = true
})

const levelLabel = (level: LogLevel.LogLevel): string => {
  switch (level) {
    case "Fatal":
    case "Error":
      return "error"
    case "Warn":
      return "warning"
    case "Info":
      return "info"
    default:
      return "debug"
  }
}

const flat = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

const cut = (text: string, max: number): string => text.length > max ? `${text.slice(0, max - 1)}…` : text

const describe = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null && "message" in value && typeof value.message === "string") {
    const code = "code" in value && typeof value.code === "string" ? ` [${value.code}]` : ""
    return `${value.message}${code}`
  }
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

const partsOf = (message: unknown): ReadonlyArray<unknown> => Array.isArray(message) ? message : [message]

const isSaveFailure = (p: unknown): boolean =>
  typeof p === "object" && p !== null && "_tag" in p && p._tag === "SessionError" && "code" in p &&
  (p.code === "PERSISTENCE_FAILED" || p.code === "IO")

const mentionsReported = (parts: ReadonlyArray<unknown>): boolean => saveFailure.reported && parts.some(isSaveFailure)

const causeLine = (cause: Cause.Cause<unknown>): string | undefined => {
  if (cause.reasons.length === 0) return undefined
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  return describe(Cause.squash(cause))
}

/**
 * Formats one entry as it is printed (exported for tests).
 *
 * @since 0.1.0
 * @category utils
 */
export const format = (entry: {
  readonly logLevel: LogLevel.LogLevel
  readonly message: unknown
  readonly cause: Cause.Cause<unknown>
  readonly annotations: Readonly<Record<string, unknown>>
  readonly date: Date
  /** the logging fiber's id; absent: no fiber shown */
  readonly fiberId?: number | undefined
  readonly verbose: boolean
}): string | undefined => {
  const parts = partsOf(entry.message)
  if (entry.verbose) {
    const annotations = Object.entries(entry.annotations).map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    const head = [
      entry.date.toISOString(),
      levelLabel(entry.logLevel),
      entry.fiberId === undefined ? "" : `#${entry.fiberId}`,
      parts.map(describe).join(" "),
      ...annotations
    ].filter((part) => part !== "").join(" ")
    return entry.cause.reasons.length === 0 ? head : `${head}\n${Cause.pretty(entry.cause)}`
  }
  if (LogLevel.isLessThan(entry.logLevel, "Info")) return undefined
  if (LogLevel.isGreaterThanOrEqualTo(entry.logLevel, "Error") && mentionsReported(parts)) return undefined
  const annotations = Object.entries(entry.annotations).map(([k, v]) => `${k}=${cut(flat(describe(v)), 200)}`)
  const cause = causeLine(entry.cause)
  const text = flat(parts.map(describe).join(": ")) +
    (cause === undefined ? "" : `: ${flat(cause)}`) +
    (annotations.length === 0 ? "" : ` (${annotations.join(", ")})`)
  return `${levelLabel(entry.logLevel)}: ${cut(text, 1000)}`
}

// a terminal gets the line inert: a server's or model's text in a diagnostic cannot act on it
const stderrText = TerminalText.forStream(process.stderr)

/**
 * The logger: writes {@link format}ted entries to stderr (made inert on a terminal).
 *
 * @since 0.1.0
 * @category constructors
 */
export const stderrLogger: EffectLogger.Logger<unknown, void> = EffectLogger.make((options) => {
  const line = format({
    logLevel: options.logLevel,
    message: options.message,
    cause: options.cause,
    annotations: options.fiber.getRef(References.CurrentLogAnnotations),
    date: options.date,
    fiberId: options.fiber.id,
    verbose: options.fiber.getRef(Verbose)
  })
  if (line !== undefined && Signals.stderrOpen()) process.stderr.write(stderrText(`${line}\n`))
})

/**
 * Replaces Effect's default logger (which prints to stdout) with {@link stderrLogger}; the tracer
 * logger (log entries as span events) is kept.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never> = EffectLogger.layer([stderrLogger, EffectLogger.tracerLogger])

/**
 * Runs `self` with detailed logging when `on` (`--verbose`): all levels, full detail.
 *
 * @since 0.1.0
 * @category combinators
 */
export const verbose = (on: boolean) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  on ? self.pipe(Effect.provideService(Verbose, true), Effect.provideService(References.MinimumLogLevel, "All")) : self
