/**
 * Colours of the chat terminal UI, decided once from the environment:
 *
 * - `FORCE_COLOR` set to anything but `0`/`false` turns colours on (as Node's own `tty` does, it wins
 *   over `NO_COLOR`); `FORCE_COLOR=0` turns them off;
 * - else a non-empty `NO_COLOR` (https://no-color.org) turns them off;
 * - else colours are on for a terminal whose `TERM` is not `dumb`.
 *
 * With colours off every style is the identity, so the screen carries no SGR sequence at all (the
 * input line's cursor is drawn with reverse video, which is not a colour).
 *
 * @since 0.1.0
 */

/**
 * One text style: wraps text in an SGR sequence (or returns it as is when colours are off).
 *
 * @since 0.1.0
 * @category models
 */
export type Paint = (text: string) => string

/**
 * The styles the chat UI uses.
 *
 * @since 0.1.0
 * @category models
 */
export interface Style {
  readonly enabled: boolean
  readonly bold: Paint
  readonly dim: Paint
  readonly italic: Paint
  readonly red: Paint
  readonly green: Paint
  readonly yellow: Paint
  readonly blue: Paint
  readonly magenta: Paint
  readonly cyan: Paint
  readonly underline: Paint
  readonly strikethrough: Paint
}

/**
 * `true` when colours are on for this environment and stream (see the module doc).
 *
 * @since 0.1.0
 * @category utils
 */
export const colorEnabled = (env: NodeJS.ProcessEnv, isTTY: boolean): boolean => {
  const force = env.FORCE_COLOR
  if (force !== undefined) return force !== "0" && force.toLowerCase() !== "false"
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  return isTTY && env.TERM !== "dumb"
}

const sgr = (open: number, close: number): Paint => (text) =>
  text === "" ? text : `\x1b[${open}m${text.split("\n").join(`\x1b[${close}m\n\x1b[${open}m`)}\x1b[${close}m`

const identity: Paint = (text) => text

/**
 * The styles for `enabled` (identity styles when `false`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (enabled: boolean): Style =>
  enabled
    ? {
      enabled,
      bold: sgr(1, 22),
      dim: sgr(2, 22),
      italic: sgr(3, 23),
      red: sgr(31, 39),
      green: sgr(32, 39),
      yellow: sgr(33, 39),
      blue: sgr(34, 39),
      magenta: sgr(35, 39),
      cyan: sgr(36, 39),
      underline: sgr(4, 24),
      strikethrough: sgr(9, 29)
    }
    : {
      enabled,
      bold: identity,
      dim: identity,
      italic: identity,
      red: identity,
      green: identity,
      yellow: identity,
      blue: identity,
      magenta: identity,
      cyan: identity,
      underline: identity,
      strikethrough: identity
    }

/**
 * Removes SGR and other CSI / OSC sequences (for text measured or compared without styles).
 *
 * @since 0.1.0
 * @category utils
 */
export const strip = (text: string): string =>
  text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "")
