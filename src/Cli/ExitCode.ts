/**
 * The CLI's documented exit codes. Expected failures print ONE line on stderr and exit with one of
 * these; a stack trace is printed only for an unexpected defect (exit 1).
 *
 * | code | meaning |
 * |---:|---|
 * | 0 | success |
 * | 1 | unexpected internal error (a defect; the only case with a stack trace) |
 * | 2 | usage or configuration error (bad flag, missing API key for an explicit provider, bad script file) |
 * | 3 | provider error (the line names its canonical code, e.g. `AUTH`, `RATE_LIMIT`) |
 * | 4 | session error (not found, locked by another writer, corrupt log, the log could not be saved) |
 * | 5 | the turn ended in error for another reason (e.g. a hook or prompt failure); `sessions replay`/`verify`: the log breaks a rule |
 * | 129 | stopped by SIGHUP (the terminal closed); the turn was cancelled and saved |
 * | 130 | cancelled (SIGINT / Ctrl-C) |
 * | 141 | stdout was closed before the answer was written (EPIPE, e.g. `| head -c 1`); turn cancelled and saved |
 * | 143 | stopped by SIGTERM; the turn was cancelled and saved |
 *
 * @since 0.1.0
 */

/**
 * Exit codes by name.
 *
 * @since 0.1.0
 * @category constants
 */
export const ExitCode = {
  Ok: 0,
  Internal: 1,
  Usage: 2,
  Provider: 3,
  Session: 4,
  TurnError: 5,
  HangUp: 129,
  Cancelled: 130,
  StdoutClosed: 141,
  Terminated: 143
} as const

/**
 * One of the documented exit codes.
 *
 * @since 0.1.0
 * @category models
 */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
