/**
 * Text made inert for a terminal (issue 26): model text, reasoning, tool arguments and output, MCP
 * tool names and descriptions and session titles can carry escape sequences (OSC 52 clipboard
 * writes, OSC 0 window titles, `ESC [2J` clear screen, cursor moves) and bidirectional overrides.
 * Written to a terminal, they would act; {@link neutralize} keeps the text and shows each such
 * character as a visible escape instead.
 *
 * - Shown as `\xNN`: every C0 control but newline (and tab when kept), DEL and every C1 control
 *   (`ESC` is `\x1b`, a bare carriage return `\r`, a tab `\t` when not kept).
 * - Shown as `\uNNNN`: invisible and bidirectional format characters (U+202A–U+202E,
 *   U+2066–U+2069, zero-width characters, U+2028/U+2029 line and paragraph separators, the BOM).
 * - The mapping is per character, so a stream can be made inert chunk by chunk: an escape sequence
 *   split across chunks is still shown, never half-interpreted.
 *
 * Every human-readable output path of the CLI uses {@link forStream} (through `Output.terminalSinks`
 * or directly); JSON output is left as it is (JSON escapes controls itself).
 *
 * @since 0.1.0
 */

// invisible and bidirectional format characters (soft hyphen, Arabic letter mark, zero-width
// characters, line/paragraph separators, bidi embeddings, overrides and isolates, the BOM)
const FORMAT = "\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb"
// DEL and C1 controls
const HIGH = "\u007f-\u009f"
const UNSAFE = new RegExp(`[\u0000-\u0009\u000b-\u001f${HIGH}${FORMAT}]`, "g")
const UNSAFE_KEEP_TAB = new RegExp(`[\u0000-\u0008\u000b-\u001f${HIGH}${FORMAT}]`, "g")
const UNSAFE_LINE = new RegExp(`[\u0000-\u001f${HIGH}${FORMAT}]`, "g")

const visible = (c: string): string => {
  switch (c) {
    case "\n":
      return "\\n"
    case "\t":
      return "\\t"
    case "\r":
      return "\\r"
    default: {
      const code = c.charCodeAt(0)
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
    }
  }
}

/**
 * Makes text inert for a terminal: every C0 control but newline, DEL, every C1 control and the
 * invisible / bidirectional format characters become visible escapes (`\x1b`, `\r`, `\u202e`).
 * Newlines are kept; tabs are kept when `tabs` is `"keep"`, else shown as `\t` (the approval
 * prompt, which wraps lines itself, shows them).
 *
 * @since 0.1.0
 * @category utils
 */
export const neutralize = (text: string, tabs: "keep" | "escape" = "escape"): string =>
  text.replace(tabs === "keep" ? UNSAFE_KEEP_TAB : UNSAFE, visible)

/**
 * {@link neutralize} for a one-line cell (a session title in a table): newlines and tabs are shown
 * as `\n` and `\t` too.
 *
 * @since 0.1.0
 * @category utils
 */
export const line = (text: string): string => text.replace(UNSAFE_LINE, visible)

/**
 * The filter for text written to a stream: {@link neutralize} (tabs kept) when the stream is a
 * terminal, the text unchanged otherwise (a pipe or file gets the bytes the model produced).
 *
 * @since 0.1.0
 * @category utils
 */
export const forStream = (stream: { readonly isTTY?: boolean }): (text: string) => string => (text) =>
  stream.isTTY === true ? neutralize(text, "keep") : text
