/**
 * Text for the chat terminal UI (issue 34): model and tool text made inert and laid out for a
 * terminal cell grid.
 *
 * - {@link display}: `TerminalText.neutralize` with tabs kept, then tabs expanded to the next tab
 *   stop ({@link TAB_WIDTH} columns), measured in terminal columns (wide characters count two,
 *   combining marks none: pi-tui's `visibleWidth`, grapheme by grapheme). A `read` result or Go code
 *   in an answer keeps its indentation instead of showing `\t`.
 * - {@link markdownTheme}: the pi-tui `Markdown` theme in the UI's styles, so answers render
 *   headings, emphasis, lists, block quotes, tables and fenced code blocks, wrapped to the width
 *   (with colours off every style is the identity: the structure stays, no SGR sequence is
 *   written).
 *
 * @since 0.1.0
 */
import type { MarkdownTheme } from "@mariozechner/pi-tui/dist/components/markdown.js"
import { visibleWidth } from "@mariozechner/pi-tui/dist/utils.js"
import * as TerminalText from "../../Tools/TerminalText.js"
import type * as Style from "./Style.js"

/**
 * Columns between two tab stops.
 *
 * @since 0.1.0
 * @category constants
 */
export const TAB_WIDTH = 4

/**
 * Expands the tabs of `text` to spaces up to the next tab stop, line by line, counting terminal
 * columns (wide characters two).
 *
 * @since 0.1.0
 * @category utils
 */
export const expandTabs = (text: string, tabWidth: number = TAB_WIDTH): string => {
  if (!text.includes("\t")) return text
  return text.split("\n").map((line) => {
    if (!line.includes("\t")) return line
    let out = ""
    let column = 0
    for (const part of line.split(/(\t)/)) {
      if (part === "\t") {
        const pad = tabWidth - (column % tabWidth)
        out += " ".repeat(pad)
        column += pad
      } else {
        out += part
        column += visibleWidth(part)
      }
    }
    return out
  }).join("\n")
}

/**
 * Model or tool text ready for the screen: inert (escapes shown), tabs expanded.
 *
 * @since 0.1.0
 * @category utils
 */
export const display = (text: string): string => expandTabs(TerminalText.neutralize(text, "keep"))

/**
 * The pi-tui Markdown theme in the UI's styles.
 *
 * @since 0.1.0
 * @category constructors
 */
export const markdownTheme = (s: Style.Style): MarkdownTheme => ({
  heading: (t) => s.bold(s.cyan(t)),
  link: s.blue,
  linkUrl: s.dim,
  code: s.yellow,
  codeBlock: s.yellow,
  codeBlockBorder: s.dim,
  quote: s.italic,
  quoteBorder: s.dim,
  hr: s.dim,
  listBullet: s.cyan,
  bold: s.bold,
  italic: s.italic,
  strikethrough: s.strikethrough,
  underline: s.underline
})
