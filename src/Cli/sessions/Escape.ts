/**
 * Control characters made visible: text from prompts, answers and titles may carry escape
 * sequences (a pasted `\u001b[2J` would clear the screen of whoever lists the sessions). Tabs and
 * newlines stay where a block of text is printed ({@link text}); a one-line cell escapes them too
 * ({@link line}).
 *
 * @since 0.1.0
 */

// C0 controls except tab and newline, DEL, C1 controls
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
const lineControls = /[\u0000-\u001f\u007f-\u009f]/g

const escape = (c: string): string => {
  switch (c) {
    case "\n":
      return "\\n"
    case "\t":
      return "\\t"
    case "\r":
      return "\\r"
    case "\u001b":
      return "\\e"
    default:
      return `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
  }
}

/**
 * Escapes control characters except tab and newline.
 *
 * @since 0.1.0
 * @category utils
 */
export const text = (value: string): string => value.replace(controls, escape)

/**
 * Escapes every control character (a one-line table cell).
 *
 * @since 0.1.0
 * @category utils
 */
export const line = (value: string): string => value.replace(lineControls, escape)
